// Fuzzes the cut matches entry's decoder (engine/cache): a payload that decodes against
// the fixture's trace (cache_fixture.h) is replayed into the cuts of a rebuild of the
// fixture's graph, as a run that loads it does, and must not read out of range; anything
// else must be CorruptEntry.
#include <stdexcept>

#include "fuzz/cache_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cw;
  const fuzz::CacheFixture& f = fuzz::cache_fixture();
  cache::StoredMatches stored;
  try {
    stored = cache::decode_cut_matches(std::string_view(reinterpret_cast<const char*>(data), size),
                                       f.trace);
  } catch (const cache::CorruptEntry&) {
    return 0;
  }
  const engine::KnownCutMatches known = stored.for_rules(f.rules);
  engine::BuildOptions options;
  options.known_matches = &known;
  fuzz::rebuild_checked(f, options);
  return 0;
}
