#include "engine/graph/graph.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rules/loader.h"

namespace cw::engine {
namespace {

// Every vertex's out- and in-edges, in traversal order, as (neighbour, bundle) pairs.
using Adjacency = std::vector<std::vector<std::pair<uint32_t, uint32_t>>>;

Adjacency out_edges_of(const CsrGraph& g) {
  Adjacency adj(num_vertices(g));
  for (uint32_t v = 0; v < adj.size(); ++v)
    for (auto [it, end] = out_edges(v, g); it != end; ++it)
      adj[v].emplace_back(static_cast<uint32_t>(target(*it, g)), g[*it]);
  return adj;
}

Adjacency in_edges_of(const CsrGraph& g) {
  Adjacency adj(num_vertices(g));
  for (uint32_t v = 0; v < adj.size(); ++v)
    for (auto [it, end] = in_edges(v, g); it != end; ++it)
      adj[v].emplace_back(static_cast<uint32_t>(source(*it, g)), g[*it]);
  return adj;
}

// The graph (and its cache entry, engine/cache/rule_tables.cc) keeps the ids of exactly the
// kinds the table says the graph build applies.
TEST_CASE("the graph keeps rule ids of each kind the graph build applies, and no others") {
  RuleNames names;
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    CAPTURE(kind.keyword);
    CHECK((names.ids(kind.kind) != nullptr) == kind.builds_graph);
  }
  CHECK(names.ids(kNoRuleKind) == nullptr);
  CHECK(names.id({}).empty());
}

// RuleNames::from reads each kind's rules through RuleSet::origins, so a kind the table
// adds needs no list of its own here: a rule of each kind lands in its kind's ids.
TEST_CASE("the graph names each rule among the ids of its kind") {
  std::string pack = "pack t { version \"0.1.0\" }\n";
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds)
    pack += std::string(kind.keyword) + " " + std::string(kind.keyword) + "_rule { }\n";
  // The rules miss clauses: errors, but each is compiled into its kind's list all the same.
  const RuleNames names = RuleNames::from(rules::load_sources({make_source("t.cw", pack)}).rules);
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    CAPTURE(kind.keyword);
    if (!kind.builds_graph) continue;
    REQUIRE(names.ids(kind.kind) != nullptr);
    CHECK(*names.ids(kind.kind) ==
          std::vector<std::string>{"t/" + std::string(kind.keyword) + "_rule"});
  }
}

TEST_CASE("build_csr lists edges exactly as Boost's unsorted-edge constructor does") {
  Graph g;
  g.segments.resize(7);
  // Parallel edges, a self-loop, vertices without edges, sources out of order.
  const std::vector<std::pair<uint32_t, uint32_t>> ends = {{3, 1}, {0, 5}, {3, 1}, {6, 6}, {1, 3},
                                                           {0, 1}, {5, 0}, {3, 0}, {1, 3}, {6, 2}};
  std::vector<uint32_t> index;
  for (auto [from, to] : ends) {
    Edge e;
    e.from = from;
    e.to = to;
    index.push_back(static_cast<uint32_t>(g.edges.size()));
    g.edges.push_back(e);
  }
  g.build_csr();
  CsrGraph boost_built(boost::edges_are_unsorted_multi_pass, ends.begin(), ends.end(),
                       index.begin(), static_cast<uint32_t>(g.segments.size()));

  CHECK(num_vertices(g.csr) == 7);
  CHECK(num_edges(g.csr) == ends.size());
  CHECK(out_edges_of(g.csr) == out_edges_of(boost_built));
  CHECK(in_edges_of(g.csr) == in_edges_of(boost_built));
  CHECK(in_edges_of(g.csr)[1] ==
        std::vector<std::pair<uint32_t, uint32_t>>{{0, 5}, {3, 0}, {3, 2}});
}

TEST_CASE("build_csr lists the same edges on one CPU and on two") {
  // Random graphs, odd and even vertex counts: the halves meet anywhere in the rows.
  std::mt19937 random(7);
  for (uint32_t vertices : {1u, 2u, 5u, 64u, 1001u}) {
    CAPTURE(vertices);
    Graph g;
    g.segments.resize(vertices);
    std::vector<std::pair<uint32_t, uint32_t>> ends;
    std::vector<uint32_t> index;
    for (uint32_t i = 0; i < 4 * vertices + 3; ++i) {
      Edge e;
      e.from = static_cast<uint32_t>(random() % vertices);
      e.to = static_cast<uint32_t>(random() % vertices);
      ends.emplace_back(e.from, e.to);
      index.push_back(i);
      g.edges.push_back(e);
    }
    g.build_csr(0);  // two CPUs whenever the machine has them
    const auto out_two = out_edges_of(g.csr);
    const auto in_two = in_edges_of(g.csr);
    g.build_csr(~uint64_t{0});  // one
    CHECK(out_edges_of(g.csr) == out_two);
    CHECK(in_edges_of(g.csr) == in_two);
    CHECK(g.csr.m_backward.m_edge_properties.size() == g.edges.size());
    CsrGraph boost_built(boost::edges_are_unsorted_multi_pass, ends.begin(), ends.end(),
                         index.begin(), vertices);
    CHECK(out_two == out_edges_of(boost_built));
    CHECK(in_two == in_edges_of(boost_built));
  }
}

TEST_CASE("build_csr of a graph without edges keeps its vertices") {
  Graph g;
  g.segments.resize(3);
  g.build_csr();
  CHECK(num_vertices(g.csr) == 3);
  CHECK(num_edges(g.csr) == 0);
  CHECK(out_degree(2u, g.csr) == 0);
  CHECK(in_degree(0u, g.csr) == 0);
}

}  // namespace
}  // namespace cw::engine
