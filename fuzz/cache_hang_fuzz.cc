// Fuzzes the hang entry's decoder (engine/cache): a payload that decodes against the
// fixture's trace and graph (cache_fixture.h) is diagnosed as the command line diagnoses a
// hang kept in the cache, and must not read out of range; anything else must be
// CorruptEntry.
#include "fuzz/cache_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cw;
  const fuzz::CacheFixture& f = fuzz::cache_fixture();
  engine::FoundHang found;
  try {
    found = cache::decode_found_hang(std::string_view(reinterpret_cast<const char*>(data), size),
                                     f.trace, f.built.graph);
  } catch (const cache::CorruptEntry&) {
    return 0;
  }
  engine::DiagnoseOptions options;
  options.events = f.index.get();
  options.known_hang = &found;
  fuzz::diagnose_quietly(f.trace, f.built, f.rules, options);
  return 0;
}
