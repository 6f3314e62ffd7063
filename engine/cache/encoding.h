// The bytes of cache entries, shared by every entry kind (engine/cache only: not part of
// cache.h). Values and arrays are written as they are in memory: a cache is one machine's,
// read back by the build that wrote it (engine_key), so no byte order or padding is
// translated. What reads them back checks every count against what is left, so that a
// damaged entry throws CorruptEntry instead of reading past its end.
#pragma once

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/cache/cache.h"

namespace cw::cache {

// A streaming XXH3-64 that also takes values and strings (with their length, so that
// "ab","c" and "a","bc" differ).
class Hasher {
 public:
  Hasher() : state_(XXH3_createState()) { XXH3_64bits_reset(state_); }
  ~Hasher() { XXH3_freeState(state_); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void bytes(const void* data, size_t size) { XXH3_64bits_update(state_, data, size); }
  template <class T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  void text(std::string_view s) {
    value(static_cast<uint64_t>(s.size()));
    bytes(s.data(), s.size());
  }
  uint64_t digest() const { return XXH3_64bits_digest(state_); }

 private:
  XXH3_state_t* state_;
};

inline bool pread_all(int fd, void* buf, size_t size, uint64_t offset) {
  auto* p = static_cast<char*>(buf);
  while (size > 0) {
    ssize_t n = pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

template <class T>
uint64_t load_le(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---- payload encoding: values and arrays as they are in memory (one machine's cache) ----

class Writer {
 public:
  template <class T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    value(static_cast<uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void bools(const std::vector<bool>& v) {
    value(static_cast<uint64_t>(v.size()));
    for (bool b : v) out_.push_back(b ? 1 : 0);
  }
  void text(const std::string& s) {
    value(static_cast<uint64_t>(s.size()));
    out_.append(s);
  }
  void texts(const std::vector<std::string>& v) {
    value(static_cast<uint64_t>(v.size()));
    for (const auto& s : v) text(s);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Decodes what Writer wrote, from a Source of bytes: `read(dst, n)` (throws CorruptEntry
// past the end), `skip(n)` and `left()`.
template <class Source>
class Decoder {
 public:
  template <class... A>
  explicit Decoder(A&&... a) : in_(std::forward<A>(a)...) {}
  template <class T>
  T value() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    in_.read(&v, sizeof v);
    return v;
  }
  // With room for `spare` per element more (a capacity of n + n * spare): address space
  // only until used, for a vector the caller grows (a rebuild's edges).
  template <class T>
  std::vector<T> array(double spare = 0) {
    uint64_t n = count(sizeof(T));
    std::vector<T> v;
    if (spare > 0) v.reserve(n + static_cast<uint64_t>(static_cast<double>(n) * spare));
    v.resize(n);
    if (n) in_.read(v.data(), n * sizeof(T));
    return v;
  }
  std::vector<bool> bools() {
    const auto bytes = array<char>();
    std::vector<bool> v(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) v[i] = bytes[i] != 0;
    return v;
  }
  std::string text() {
    uint64_t n = count(1);
    std::string out(n, '\0');
    if (n) in_.read(out.data(), n);
    return out;
  }
  std::vector<std::string> texts() {
    uint64_t n = count(8);  // each at least its length
    std::vector<std::string> v;
    v.reserve(n);
    for (uint64_t i = 0; i < n; ++i) v.push_back(text());
    return v;
  }
  bool done() const { return in_.left() == 0; }
  const Source& source() const { return in_; }

 private:
  // A count whose elements of `unit` bytes fit in what is left.
  uint64_t count(size_t unit) {
    uint64_t n = value<uint64_t>();
    if (n > in_.left() / unit) throw CorruptEntry("array longer than the entry");
    return n;
  }
  Source in_;
};

// A payload in memory.
class MemorySource {
 public:
  explicit MemorySource(std::string_view in) : in_(in) {}
  void read(void* dst, uint64_t n) { std::memcpy(dst, take(n), n); }
  void skip(uint64_t n) { take(n); }
  uint64_t left() const { return in_.size() - pos_; }

 private:
  const char* take(uint64_t n) {
    if (n > left()) throw CorruptEntry("entry ends early");
    const char* p = in_.data() + pos_;
    pos_ += n;
    return p;
  }
  std::string_view in_;
  size_t pos_ = 0;
};
using Reader = Decoder<MemorySource>;

// An entry's payload read from its file straight into where it goes (the graph's
// vectors), hashed on the way: a graph loaded so is in memory once, where through a
// mapping its pages would count twice at the peak (~300 MB at 19 M events). The checksum
// is checked at the end (matches()); what was decoded before is dropped if it fails.
class FileSource {
 public:
  FileSource(int fd, uint64_t begin, uint64_t end)
      : fd_(fd), pos_(begin), end_(end), state_(XXH3_createState()) {
    XXH3_64bits_reset(state_);
  }
  ~FileSource() { XXH3_freeState(state_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  void read(void* dst, uint64_t n) {
    if (n > left()) throw CorruptEntry("entry ends early");
    if (!pread_all(fd_, dst, n, pos_)) throw CorruptEntry("cannot read the entry");
    XXH3_64bits_update(state_, dst, n);
    pos_ += n;
  }
  // Skipped bytes are read too: the checksum covers them.
  void skip(uint64_t n) {
    std::vector<char> buf(std::min<uint64_t>(n, uint64_t{1} << 20));
    for (uint64_t step; n > 0; n -= step) {
      step = std::min<uint64_t>(n, buf.size());
      read(buf.data(), step);
    }
  }
  uint64_t left() const { return end_ - pos_; }
  // Whether the payload read matches the header's checksum.
  bool matches(uint64_t expected) const { return XXH3_64bits_digest(state_) == expected; }

 private:
  int fd_;
  uint64_t pos_, end_;
  XXH3_state_t* state_;
};
using FileReader = Decoder<FileSource>;

}  // namespace cw::cache
