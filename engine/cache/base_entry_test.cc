// The base entries: the graph a rebuild of the cuts reuses.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"

namespace fs = std::filesystem;
using namespace cw;
using namespace cw::cache::testing;

TEST_CASE("a base entry names the last graph of its links key; never one of other inputs") {
  auto b = sample();
  TempDir dir;
  const cache::Key graph{1, 2, 3, 4}, base{1, 9, 3, 4};
  REQUIRE(cache::save_graph(dir.f, graph, b.result));
  REQUIRE(cache::save_base(dir.f, base, graph));
  cache::Key named;
  auto prior = cache::load_base(dir.f, base, b.trace, b.rules, &named);
  REQUIRE(prior);
  CHECK(named == graph);
  // Loaded for reuse: segments (a rebuild keeps the segments of the threads whose cuts did
  // not change) and the edges but the neighbour edges (a rebuild makes its own), no csr.
  CHECK(prior->graph.segments.size() == b.result.graph.segments.size());
  CHECK(num_vertices(prior->graph.csr) == 0);
  std::vector<uint32_t> kept, reused;
  for (const engine::Edge& e : b.result.graph.edges)
    if (e.rule.kind == engine::RuleKind::Edge) kept.push_back(e.to_event);
  for (const engine::Edge& e : prior->graph.edges) reused.push_back(e.to_event);
  REQUIRE(kept.size() < b.result.graph.edges.size());
  CHECK(reused == kept);
  CHECK(prior->peer_cuts.size() == b.result.peer_cuts.size());
  // A base entry naming a graph of another trace is refused.
  const cache::Key other_base{5, 9, 3, 4};
  REQUIRE(cache::save_base(dir.f, other_base, graph));
  std::string why;
  CHECK_FALSE(cache::load_base(dir.f, other_base, b.trace, b.rules, &named, &why));
  CHECK(why == "names a graph of other inputs");
  // Its graph gone: a miss.
  fs::remove((dir.path + "/" + cache::graph_entry_name(graph)));
  CHECK_FALSE(cache::load_base(dir.f, base, b.trace, b.rules, &named));
}
