// The packed form of an events chunk (docs/trace-format.md, "Compression"): what a
// compressed events chunk holds under codec 2 before zstd. The plain payload stores each
// event in 24 bytes and each value in 8, mostly zeros; packed, every field is a
// variable-length number, times and value offsets as differences from the previous
// event's. zstd then reads a third of the bytes: the recorder, which compresses every
// event it records, spends most of its time there (bench/RESULTS.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cw::binary_format {

// `events` (count plain 24-byte events) and `values` (nvalues u64s) appended to `out`,
// packed.
void pack_events(const uint8_t* events, uint64_t count, const uint8_t* values, uint64_t nvalues,
                 std::vector<uint8_t>& out);

// The most bytes pack_events writes for events and values that take `plain` bytes: no
// event packs into more than 36 bytes (it is 24) nor a value into more than 10 (it is 8).
inline constexpr uint64_t packed_events_limit(uint64_t plain) {
  return plain + plain / 2;
}

// Unpacks `packed` into `events` (count * 24 bytes) and `values` (nvalues * 8). False, with
// the reason and the byte offset into `packed` in `why`, when it does not hold exactly
// that many events and values.
bool unpack_events(const uint8_t* packed, uint64_t size, uint64_t count, uint64_t nvalues,
                   uint8_t* events, uint8_t* values, std::string* why);

}  // namespace cw::binary_format
