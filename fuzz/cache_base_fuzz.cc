// Fuzzes the base entry's decoder (engine/cache): a payload is a graph's key or
// CorruptEntry, and a key that decodes re-encodes to the same payload.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "engine/cache/cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cw;
  try {
    const cache::Key key =
        cache::decode_base(std::string_view(reinterpret_cast<const char*>(data), size));
    if (size != sizeof key || std::memcmp(&key, data, size) != 0) std::abort();
  } catch (const cache::CorruptEntry&) {
  }
  return 0;
}
