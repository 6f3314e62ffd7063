#include "eval/automatic_slice.h"

#include <doctest/doctest.h>

#include <tuple>

namespace cw::engine {
namespace {

// Segments 0..n-1 on threads 1..n; edges (from, to, to_event, strength).
Graph make_graph(uint32_t n,
                 const std::vector<std::tuple<uint32_t, uint32_t, uint32_t, Strength>>& edges) {
  Graph g;
  for (uint32_t s = 0; s < n; ++s) {
    Segment seg;
    seg.tid = seg.pid = s + 1;
    g.segments.push_back(seg);
    g.threads.push_back({s + 1, s, s + 1});
  }
  for (auto [from, to, to_event, strength] : edges) {
    Edge e;
    e.from = from;
    e.to = to;
    e.to_event = to_event;
    e.from_event = to_event;
    e.strength = strength;
    g.edges.push_back(e);
  }
  g.build_csr();
  return g;
}

TEST_CASE("the automatic slice follows the most recent incoming edge, whatever its strength") {
  // 0 was reached by a strong edge from 1 (event 10) and later by a weak one from 2
  // (event 20): the walk takes the weak one, as a tracer without judgement would.
  Graph g = make_graph(5, {{1, 0, 10, Strength::Strong},
                           {2, 0, 20, Strength::Weak},
                           {3, 2, 5, Strength::Strong},
                           {4, 1, 3, Strength::Strong}});
  CHECK(automatic_slice(g, 0) == std::vector<uint32_t>{0, 2, 3});
  CHECK(automatic_slice(g, 1) == std::vector<uint32_t>{1, 4});
  CHECK(automatic_slice(g, 4) == std::vector<uint32_t>{4});
}

TEST_CASE("the automatic slice stops at a cycle and at its limit") {
  Graph g = make_graph(
      3, {{1, 0, 1, Strength::Strong}, {2, 1, 2, Strength::Strong}, {0, 2, 3, Strength::Strong}});
  CHECK(automatic_slice(g, 0) == std::vector<uint32_t>{0, 1, 2});
  CHECK(automatic_slice(g, 0, 2) == std::vector<uint32_t>{0, 1});
}

}  // namespace
}  // namespace cw::engine
