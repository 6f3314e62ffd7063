// How much a binary trace's compressed chunks may decompress to, all together
// (docs/trace-format.md, "Compression").
#pragma once

#include <cstdint>

namespace cw {

namespace binary_format {
// The larger of one full chunk and kMaxExpansion times the file's size, and at most
// kDefaultMaxDecompressed, unless CAUSEWAY_MAX_DECOMPRESSED says otherwise. Recordings
// decompress to 4 to 7 times their size (docs/trace-format.md has the figures), so 64 is a
// ninefold margin; without a total, a file of small chunks that each decompress to the
// per-chunk cap takes 30,000 times its size.
inline constexpr uint64_t kMaxExpansion = 64;
inline constexpr uint64_t kDefaultMaxDecompressed = uint64_t{16} << 30;
}  // namespace binary_format

// The most a trace of `file_size` bytes may decompress to in total: the value of
// CAUSEWAY_MAX_DECOMPRESSED when set (bytes, or with a K, M, G or T suffix: the user's
// own choice, which replaces both bounds), else max(64 MiB, 64 x file_size) capped at
// 16 GiB. Throws TraceFormatError (trace/binary_format.h) when the variable is set to
// something else than a size.
uint64_t decompression_limit(uint64_t file_size);

}  // namespace cw
