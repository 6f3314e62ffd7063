#include "trace/decompression_limit.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "trace/binary_format.h"

namespace cw {

using binary_format::kMaxCompressedPayload;
using binary_format::kMaxExpansion;

uint64_t decompression_limit(uint64_t file_size) {
  if (const char* env = std::getenv("CAUSEWAY_MAX_DECOMPRESSED"); env && *env) {
    std::string_view text(env);
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    std::string_view unit = text.substr(static_cast<size_t>(end - text.data()));
    unsigned shift = unit.empty()  ? 0
                     : unit == "K" ? 10
                     : unit == "M" ? 20
                     : unit == "G" ? 30
                     : unit == "T" ? 40
                                   : 64;
    if (ec != std::errc{} || end == text.data() || shift == 64 || n > (UINT64_MAX >> shift))
      throw TraceFormatError(fmt::format(
          "CAUSEWAY_MAX_DECOMPRESSED='{}': expected a size in bytes, or with a K, M, G or T "
          "suffix (like 32G)",
          text));
    return n << shift;
  }
  const uint64_t relative =
      file_size > UINT64_MAX / kMaxExpansion ? UINT64_MAX : file_size * kMaxExpansion;
  return std::min(binary_format::kDefaultMaxDecompressed,
                  std::max<uint64_t>(kMaxCompressedPayload, relative));
}

}  // namespace cw
