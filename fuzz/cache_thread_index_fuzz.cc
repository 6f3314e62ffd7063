// Fuzzes the thread index entry's decoder (engine/cache): an entry that decodes against the
// fixture's trace (cache_fixture.h) must give lists every profile and a diagnosis can read
// without leaving the trace's events; anything else must be CorruptEntry.
#include "fuzz/cache_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cw;
  const fuzz::CacheFixture& f = fuzz::cache_fixture();
  const fuzz::MappedInput m = fuzz::map_input(data, size);
  std::unique_ptr<engine::ThreadEvents> index;
  try {
    index = std::make_unique<engine::ThreadEvents>(
        cache::decode_thread_index(m.keep, m.base, m.size, f.trace.events.size()));
  } catch (const cache::CorruptEntry&) {
    return 0;
  }
  const engine::Graph& g = f.built.graph;
  for (Tid tid : index->tids())
    (void)engine::profile_range(f.trace, *index, tid, 0, f.trace.events.back().ts + 1);
  for (uint32_t s = 0; s < g.segments.size(); ++s)
    (void)engine::profile_segment(f.trace, *index, g, s);
  engine::DiagnoseOptions options;
  options.events = index.get();
  fuzz::diagnose_quietly(f.trace, f.built, f.rules, options);
  return 0;
}
