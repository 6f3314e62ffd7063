// What the binary trace's writer and reader share beyond the public layout
// (trace/binary_format.h): the sizes both agree on, reading values out of a payload, and
// the reader's entry point for bytes that are already in memory.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "trace/binary_format.h"
#include "trace/trace.h"

namespace cw::binary_format {

static_assert(std::endian::native == std::endian::little,
              "the binary trace format is little-endian and read by bulk copies");

inline constexpr uint32_t kClockMonotonic = 1;  // the header's clock field
// An event is stored as it is in memory, so a chunk's events are copied in bulk.
inline constexpr size_t kDiskEventSize = 24;
static_assert(sizeof(Event) == kDiskEventSize);

// memcpy with a null pointer is undefined even for 0 bytes, and an empty vector's data()
// is null: a stack of no frames or a chunk of no events copies nothing.
inline void copy_bytes(void* to, const void* from, size_t n) {
  if (n != 0) std::memcpy(to, from, n);
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A payload that does not decode although its checksum verified (a writer bug, or a
// crafted file).
struct Malformed {
  std::string what;
};

// Reads a payload front to back; running past its end is Malformed.
class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v = load<T>(p_ + pos_);
    pos_ += sizeof(T);
    return v;
  }
  std::string_view str() {
    uint32_t n = get<uint32_t>();
    need(n);
    std::string_view s(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return s;
  }
  const uint8_t* take(size_t n) {
    need(n);
    const uint8_t* p = p_ + pos_;
    pos_ += n;
    return p;
  }
  size_t remaining() const { return n_ - pos_; }

 private:
  void need(size_t n) const {
    if (n > n_ - pos_) throw Malformed{"payload ends early"};
  }
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

// The notes of a ReadReport, each said once however many chunks give cause for it.
class ReadNotes {
 public:
  explicit ReadNotes(std::vector<std::string>& notes) : notes_(notes) {}
  void add(std::string text) {
    if (seen_.insert(text).second) notes_.push_back(std::move(text));
  }

 private:
  std::vector<std::string>& notes_;
  std::set<std::string> seen_;
};

// Reads a whole binary trace held in memory (read_trace_bytes). `done_before(offset)` is
// told when no byte before `offset` will be needed again, so a mapped file can drop those
// pages instead of holding the whole file resident.
ReadReport read_binary_trace(std::string_view bytes, Trace& out, const std::string& name,
                             std::function<void(uint64_t)> done_before = {});

}  // namespace cw::binary_format
