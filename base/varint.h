// LEB128 numbers, and zigzag coding for signed ones: the compact forms of the trace
// format's packed events (trace/packed_events.h) and the derived cache's cut matches
// (engine/graph/cut_matches.h).
#pragma once

#include <cstdint>

namespace cw {

inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

inline int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Appends `v` to a byte container (std::string, std::vector<uint8_t>).
template <typename Bytes>
void put_varint(Bytes& out, uint64_t v) {
  using Byte = typename Bytes::value_type;
  while (v >= 0x80) {
    out.push_back(static_cast<Byte>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<Byte>(v));
}

enum class VarintRead { Ok, CutShort, TooLong };

// Reads one number at `p`, never past `end`, and moves `p` past the bytes it read (on
// TooLong, past the byte that made the number longer than 64 bits).
inline VarintRead read_varint(const unsigned char*& p, const unsigned char* end, uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p == end) return VarintRead::CutShort;
    const unsigned char b = *p++;
    if (shift == 63 && b > 1) return VarintRead::TooLong;
    v |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return VarintRead::Ok;
  }
  return VarintRead::TooLong;  // not reached: the byte at shift 63 ends or overflows
}

}  // namespace cw
