#include "engine/diagnosis/polling_end.h"

namespace cw::engine {

uint32_t polling_end_edge(const Graph& g, uint32_t first, uint32_t last) {
  const Tid tid = g.segments[first].tid;
  const std::vector<bool>& ends = g.rule_names.edge_ends_polling;
  uint32_t latest = kNoIndex;
  for (uint32_t s = first; s <= last && s < g.segments.size() && g.segments[s].tid == tid; ++s)
    for (auto [it, end] = in_edges(s, g.csr); it != end; ++it) {
      const uint32_t ei = g.csr[*it];
      const Edge& e = g.edges[ei];
      // Of several that end it at one event, the latest before it: releases whose own
      // next holders went unrecorded (record --calls scheduler writes only the locks got
      // after failed tries) all join the same try, and the last one let it through.
      if (e.rule.kind == RuleKind::Edge && e.rule.index < ends.size() && ends[e.rule.index] &&
          g.segments[e.from].tid != tid &&
          (latest == kNoIndex || e.to_event > g.edges[latest].to_event ||
           (e.to_event == g.edges[latest].to_event && e.from_event > g.edges[latest].from_event)))
        latest = ei;
    }
  return latest;
}

std::vector<PathStep> polling_end_path(const Graph& g, uint32_t origin, uint32_t edge) {
  // A thread's steps are joined by its own neighbour edges; a chain longer than this, or
  // one with a cut that made no neighbour edge, is left out: the path starts at the edge.
  constexpr uint32_t kMaxOwnSteps = 16;
  const Edge& e = g.edges[edge];
  std::vector<PathStep> path;
  if (origin != kNoIndex && origin < e.from && e.from - origin <= kMaxOwnSteps &&
      g.segments[origin].tid == g.segments[e.from].tid) {
    for (uint32_t s = origin; s < e.from; ++s) {
      uint32_t next = kNoIndex;
      for (auto [it, end] = in_edges(s + 1, g.csr); it != end; ++it)
        if (g.edges[g.csr[*it]].from == s) next = g.csr[*it];
      if (next == kNoIndex) {
        path.clear();
        break;
      }
      path.push_back({s, next});
    }
  }
  path.push_back({e.from, edge});
  path.push_back({e.to, kNoIndex});
  return path;
}

}  // namespace cw::engine
