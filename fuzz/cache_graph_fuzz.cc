// Fuzzes the graph entry's decoder (engine/cache): a payload that decodes against the
// fixture's trace and packs (cache_fixture.h) must be a graph every user can walk without
// reading out of range: its csr, every segment's thread, cut time and rule, every edge's
// kind and rule, a diagnosis on it; and, decoded for reuse, a rebuild of the cuts from it.
// Anything else must be CorruptEntry.
#include "fuzz/cache_fixture.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cw;
  const fuzz::CacheFixture& f = fuzz::cache_fixture();
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  try {
    engine::BuildResult r = cache::decode_graph(payload, f.trace, f.rules);
    const engine::Graph& g = r.graph;
    for (uint32_t s = 0; s < g.segments.size(); ++s) {
      (void)g.rule_names.id(g.segments[s].cut_rule);
      (void)g.cut_time(f.trace, s);
      (void)g.segment_of(f.trace, g.segments[s].first);
      for (auto [it, end] = out_edges(s, g.csr); it != end; ++it) (void)g.edges.at(g.csr[*it]);
    }
    for (const engine::Edge& e : g.edges) {
      (void)g.kind_name(e);
      (void)g.rule_names.id(e.rule);
    }
    (void)engine::count_over_connections(g);
    (void)engine::count_segment_over_connections(g);
    engine::DiagnoseOptions options;
    options.events = f.index.get();
    fuzz::diagnose_quietly(f.trace, r, f.rules, options);
  } catch (const cache::CorruptEntry&) {
  }
  try {
    engine::BuildResult prior = cache::decode_graph(payload, f.trace, f.rules, true);
    engine::BuildOptions options;
    options.reuse = &prior;
    try {
      (void)engine::build_graph(f.trace, f.rules, options);
    } catch (const std::invalid_argument&) {
      // A graph that does not fit: the command line builds whole then.
    }
  } catch (const cache::CorruptEntry&) {
  }
  return 0;
}
