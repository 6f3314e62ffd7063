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

#include "base/parallel.h"
#include "base/populate.h"
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

// An entry's checksum (the header's): the XXH3-64 of the XXH3-64s of its payload's blocks
// of kChecksumBlock bytes, the last one shorter, so that a large payload is checked on
// every CPU (one XXH3 of a 0.9 GB payload takes a CPU 0.09 s). Bytes are taken in order,
// one piece after the other, or a large piece's whole blocks on every CPU (in_parallel).
inline constexpr uint64_t kChecksumBlock = uint64_t{4} << 20;

class BlockHasher {
 public:
  BlockHasher() : block_(XXH3_createState()) { XXH3_64bits_reset(block_); }
  ~BlockHasher() { XXH3_freeState(block_); }
  BlockHasher(const BlockHasher&) = delete;
  BlockHasher& operator=(const BlockHasher&) = delete;

  void bytes(const void* data, uint64_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const uint64_t n = std::min(size, kChecksumBlock - in_block_);
      XXH3_64bits_update(block_, p, n);
      in_block_ += n;
      p += n;
      size -= n;
      if (in_block_ == kChecksumBlock) {
        digests_.push_back(XXH3_64bits_digest(block_));
        XXH3_64bits_reset(block_);
        in_block_ = 0;
      }
    }
  }
  // `size` bytes at `data`, each of their whole blocks got by get(block_data, block_size)
  // first (a read from a file; nothing when the bytes are there already) and hashed, on
  // every CPU. get may throw: the first exception is rethrown.
  template <class Get>
  void in_parallel(void* data, uint64_t size, Get&& get) {
    auto* p = static_cast<char*>(data);
    if (in_block_ > 0) {  // the rest of the block begun before, in order
      const uint64_t head = std::min(size, kChecksumBlock - in_block_);
      get(p, head);
      bytes(p, head);
      p += head;
      size -= head;
    }
    const uint64_t whole = size / kChecksumBlock, first = digests_.size();
    digests_.resize(first + whole);
    parallel_for(whole, [&](size_t b) {
      char* block = p + b * kChecksumBlock;
      get(block, kChecksumBlock);
      digests_[first + b] = XXH3_64bits(block, kChecksumBlock);
    });
    p += whole * kChecksumBlock;
    size -= whole * kChecksumBlock;
    get(p, size);
    bytes(p, size);
  }
  void in_parallel(const void* data, uint64_t size) {
    in_parallel(const_cast<void*>(data), size, [](char*, uint64_t) {});
  }
  uint64_t digest() const {
    if (in_block_ == 0) return XXH3_64bits(digests_.data(), digests_.size() * sizeof(uint64_t));
    std::vector<uint64_t> all = digests_;
    all.push_back(XXH3_64bits_digest(block_));
    return XXH3_64bits(all.data(), all.size() * sizeof(uint64_t));
  }

 private:
  XXH3_state_t* block_;  // the block being taken
  uint64_t in_block_ = 0;
  std::vector<uint64_t> digests_;  // the whole blocks'
};

// The checksum of a payload in memory, on every CPU.
inline uint64_t payload_checksum(std::string_view payload) {
  BlockHasher h;
  h.in_parallel(payload.data(), payload.size());
  return h.digest();
}

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
    resize_populated(v, n);
    if (n) in_.read(v.data(), n * sizeof(T));
    return v;
  }
  // An array Writer::array wrote, read into v[at, at + its count), which must be inside v.
  // Returns its count.
  template <class T>
  uint64_t array_into(std::vector<T>& v, uint64_t at) {
    const uint64_t n = count(sizeof(T));
    if (at > v.size() || n > v.size() - at) throw CorruptEntry("array longer than its room");
    if (n) in_.read(v.data() + at, n * sizeof(T));
    return n;
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
  FileSource(int fd, uint64_t begin, uint64_t end) : fd_(fd), pos_(begin), end_(end) {}

  // A large piece is read and hashed by blocks on every CPU (a loaded graph's edges:
  // their pages are made as they are read, a CPU's time in fresh memory).
  void read(void* dst, uint64_t n) {
    if (n > left()) throw CorruptEntry("entry ends early");
    if (n < 2 * kChecksumBlock) {
      if (!pread_all(fd_, dst, n, pos_)) throw CorruptEntry("cannot read the entry");
      hash_.bytes(dst, n);
    } else {
      const auto* base = static_cast<const char*>(dst);
      hash_.in_parallel(dst, n, [&](char* at, uint64_t size) {
        if (!pread_all(fd_, at, size, pos_ + static_cast<uint64_t>(at - base)))
          throw CorruptEntry("cannot read the entry");
      });
    }
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
  bool matches(uint64_t expected) const { return hash_.digest() == expected; }

 private:
  int fd_;
  uint64_t pos_, end_;
  BlockHasher hash_;
};
using FileReader = Decoder<FileSource>;

}  // namespace cw::cache
