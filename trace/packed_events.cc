#include "trace/packed_events.h"

#include <fmt/format.h>

#include <cstring>

#include "base/varint.h"
#include "trace/trace.h"

namespace cw::binary_format {

namespace {

// Columns, each a run of LEB128 numbers (base/varint.h): differences of times and of
// value offsets are zigzag-coded (a trace may be written out of time order), values too
// (-1 is common: no fd, no timeout).
void put(std::vector<uint8_t>& out, uint64_t v) {
  put_varint(out, v);
}

struct PackedCursor {
  const uint8_t* p;
  uint64_t size, at = 0;
  std::string* why;
  bool get(uint64_t& v, const char* what) {
    const unsigned char* q = p + at;
    const VarintRead read = read_varint(q, p + size, v);
    at = static_cast<uint64_t>(q - p);
    switch (read) {
      case VarintRead::Ok: return true;
      case VarintRead::CutShort: return fail(fmt::format("packed events end inside {}", what));
      case VarintRead::TooLong: break;
    }
    return fail(fmt::format("{} does not fit 64 bits", what));
  }
  bool fail(std::string reason) {
    if (why) *why = fmt::format("{} (byte {} of {})", reason, at, size);
    return false;
  }
};

}  // namespace

void pack_events(const uint8_t* events, uint64_t count, const uint8_t* values, uint64_t nvalues,
                 std::vector<uint8_t>& out) {
  static_assert(sizeof(Event) == 24);
  auto event = [&](uint64_t i) {
    Event e;
    std::memcpy(&e, events + i * sizeof(Event), sizeof(Event));
    return e;
  };
  uint64_t prev = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t ts = event(i).ts;
    put(out, zigzag(static_cast<int64_t>(ts - prev)));
    prev = ts;
  }
  for (uint64_t i = 0; i < count; ++i) put(out, event(i).tid);
  for (uint64_t i = 0; i < count; ++i) put(out, event(i).kind);
  for (uint64_t i = 0; i < count; ++i) put(out, event(i).cpu);
  for (uint64_t i = 0; i < count; ++i) put(out, event(i).stack);
  uint64_t prev_values = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t at = event(i).values;
    put(out, zigzag(static_cast<int64_t>(at - prev_values)));
    prev_values = at;
  }
  for (uint64_t i = 0; i < nvalues; ++i) {
    uint64_t v;
    std::memcpy(&v, values + i * 8, 8);
    put(out, zigzag(static_cast<int64_t>(v)));
  }
}

bool unpack_events(const uint8_t* packed, uint64_t size, uint64_t count, uint64_t nvalues,
                   uint8_t* events, uint8_t* values, std::string* why) {
  PackedCursor c{packed, size, 0, why};
  // Every event takes at least 6 bytes and every value 1: a count the bytes cannot hold
  // is refused before anything is read.
  if (count > size / 6 || nvalues > size - count * 6)
    return c.fail(fmt::format("{} events and {} values cannot fit", count, nvalues));
  auto field = [&](uint64_t i) { return events + i * sizeof(Event); };
  uint64_t v = 0, prev = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (!c.get(v, "a time")) return false;
    prev += static_cast<uint64_t>(unzigzag(v));
    std::memcpy(field(i) + offsetof(Event, ts), &prev, 8);
  }
  auto column = [&](size_t offset, size_t width, uint64_t limit, const char* what) {
    for (uint64_t i = 0; i < count; ++i) {
      if (!c.get(v, what)) return false;
      if (v > limit) return c.fail(fmt::format("{} {} is out of range", what, v));
      std::memcpy(field(i) + offset, &v, width);  // little-endian: the low bytes
    }
    return true;
  };
  if (!column(offsetof(Event, tid), 4, UINT32_MAX, "a thread id") ||
      !column(offsetof(Event, kind), 2, UINT16_MAX, "a kind") ||
      !column(offsetof(Event, cpu), 2, UINT16_MAX, "a cpu") ||
      !column(offsetof(Event, stack), 4, UINT32_MAX, "a stack id"))
    return false;
  uint64_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (!c.get(v, "a value offset")) return false;
    at += static_cast<uint64_t>(unzigzag(v));
    if (at > UINT32_MAX) return c.fail("a value offset is out of range");
    const auto at32 = static_cast<uint32_t>(at);
    std::memcpy(field(i) + offsetof(Event, values), &at32, 4);
  }
  for (uint64_t i = 0; i < nvalues; ++i) {
    if (!c.get(v, "a value")) return false;
    const auto value = static_cast<uint64_t>(unzigzag(v));
    std::memcpy(values + i * 8, &value, 8);
  }
  if (c.at != size) return c.fail("bytes after the last value");
  return true;
}

}  // namespace cw::binary_format
