#include "engine/diagnosis/beam_search.h"

#include <doctest/doctest.h>

namespace cw::engine {
namespace {

// A graph of `n` segments (thread = index, so they are all different threads) and edges
// given as (from, to, strength).
Graph make_graph(uint32_t n, const std::vector<std::tuple<uint32_t, uint32_t, Strength>>& edges) {
  Graph g;
  for (uint32_t s = 0; s < n; ++s) {
    Segment seg;
    seg.tid = seg.pid = s + 1;
    seg.start_ns = 1000 * s;
    seg.end_ns = 1000 * s + 500;
    g.segments.push_back(seg);
    g.threads.push_back({s + 1, s, s + 1});
  }
  for (auto [from, to, strength] : edges) {
    Edge e;
    e.from = from;
    e.to = to;
    e.strength = strength;
    g.edges.push_back(e);
  }
  g.build_csr();
  return g;
}

// The segments of a path from its origin to the start.
std::vector<uint32_t> segments_of(const Graph& g, const BeamPath& p) {
  std::vector<uint32_t> out{p.origin};
  for (size_t k = p.edges.size(); k-- > 0;) out.push_back(g.edges[p.edges[k]].to);
  return out;
}

// Start 0. Through 1 the first edge is cheap (strong) but two weak edges follow; through
// 2 the first edge is dearer (boosted) and two strong edges follow.
//   5 -weak-> 3 -weak-> 1 -strong-> 0      total 13
//   6 -strong-> 4 -strong-> 2 -boosted-> 0 total 5
Graph trap() {
  return make_graph(7, {{1, 0, Strength::Strong},
                        {2, 0, Strength::Boosted},
                        {3, 1, Strength::Weak},
                        {5, 3, Strength::Weak},
                        {4, 2, Strength::Strong},
                        {6, 4, Strength::Strong}});
}

TEST_CASE("edge costs: a rule's cost wins, else strong < boosted < weak") {
  Edge e;
  e.strength = Strength::Strong;
  CHECK(edge_cost(e) == 1);
  e.strength = Strength::Boosted;
  CHECK(edge_cost(e) == 3);
  e.strength = Strength::Weak;
  CHECK(edge_cost(e) == 6);
  e.cost = 42;
  CHECK(edge_cost(e) == 42);
}

TEST_CASE("beam search without lookback prunes the cheaper path behind a dear first edge") {
  Graph g = trap();
  BeamOptions o;
  o.width = 1;
  o.lookback = 1;
  BeamResult r = beam_search(g, 0, o);
  REQUIRE(r.paths.size() == 1);
  CHECK(segments_of(g, r.paths[0]) == std::vector<uint32_t>{5, 3, 1, 0});
  CHECK(r.paths[0].cost == 13);
  CHECK(r.paths[0].complete);
}

TEST_CASE("beam search with lookback sees past the first edge before pruning") {
  Graph g = trap();
  BeamOptions o;
  o.width = 1;
  o.lookback = 3;
  BeamResult r = beam_search(g, 0, o);
  REQUIRE(!r.paths.empty());
  CHECK(segments_of(g, r.paths[0]) == std::vector<uint32_t>{6, 4, 2, 0});
  CHECK(r.paths[0].cost == 5);
  CHECK(r.steps == 3);
}

TEST_CASE("a wide beam keeps both paths, best first") {
  Graph g = trap();
  BeamOptions o;
  o.width = 4;
  o.lookback = 1;
  BeamResult r = beam_search(g, 0, o);
  REQUIRE(r.paths.size() == 2);
  CHECK(r.paths[0].cost == 5);
  CHECK(r.paths[1].cost == 13);
}

TEST_CASE("the depth limit leaves paths incomplete, and cycles are not walked") {
  // 1 and 2 feed each other and 0.
  Graph g =
      make_graph(3, {{1, 0, Strength::Strong}, {2, 1, Strength::Strong}, {1, 2, Strength::Strong}});
  BeamOptions o;
  o.max_depth = 5;
  BeamResult r = beam_search(g, 0, o);
  REQUIRE(r.paths.size() == 1);
  CHECK(segments_of(g, r.paths[0]) == std::vector<uint32_t>{2, 1, 0});
  CHECK(r.paths[0].complete);

  Graph chain =
      make_graph(4, {{1, 0, Strength::Strong}, {2, 1, Strength::Strong}, {3, 2, Strength::Strong}});
  o.max_depth = 2;
  r = beam_search(chain, 0, o);
  REQUIRE(r.paths.size() == 1);
  CHECK(segments_of(chain, r.paths[0]) == std::vector<uint32_t>{2, 1, 0});
  CHECK(!r.paths[0].complete);
}

TEST_CASE("a hub's incoming edges are cut to the cheapest few per expansion") {
  // Segment 0 has 300 weak incoming edges and one strong one.
  std::vector<std::tuple<uint32_t, uint32_t, Strength>> edges;
  for (uint32_t s = 1; s <= 300; ++s) edges.emplace_back(s, 0, Strength::Weak);
  edges.emplace_back(301, 0, Strength::Strong);
  Graph g = make_graph(302, edges);
  BeamOptions o;
  o.max_fanout = 4;
  BeamResult r = beam_search(g, 0, o);
  CHECK(r.capped);
  CHECK(r.expanded == 4);
  REQUIRE(!r.paths.empty());
  CHECK(r.paths[0].origin == 301);
}

TEST_CASE("incoming edges: one per source, the cheapest, cheapest sources first") {
  Graph g =
      make_graph(3, {{1, 0, Strength::Weak}, {1, 0, Strength::Strong}, {2, 0, Strength::Boosted}});
  std::vector<uint32_t> in = incoming_by_source(g, 0, {});
  REQUIRE(in.size() == 2);
  CHECK(g.edges[in[0]].from == 1);
  CHECK(g.edges[in[0]].strength == Strength::Strong);
  CHECK(g.edges[in[1]].from == 2);
  std::vector<bool> skip{false, true, false};
  in = incoming_by_source(g, 0, {}, skip);
  REQUIRE(in.size() == 1);
  CHECK(g.edges[in[0]].from == 2);
}

}  // namespace
}  // namespace cw::engine
