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
  engine::BuildResult prior = f.built;
  engine::BuildOptions options;
  options.reuse = &prior;
  options.known_matches = &known;
  try {
    const engine::BuildResult rebuilt = engine::build_graph(f.trace, f.rules, options);
    for (const engine::Segment& s : rebuilt.graph.segments)
      if (s.first > s.last || s.start_ns > s.end_ns) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
