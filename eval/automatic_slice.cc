#include "eval/automatic_slice.h"

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <vector>

namespace cw::engine {

std::vector<uint32_t> automatic_slice(const Graph& graph, uint32_t start, uint32_t max_segments) {
  std::vector<uint32_t> out;
  std::vector<bool> seen(graph.segments.size(), false);
  uint32_t v = start;
  while (v < graph.segments.size() && !seen[v] && out.size() < max_segments) {
    seen[v] = true;
    out.push_back(v);
    // The edge whose effect came last: what happened to the segment most recently.
    uint32_t best = kNoIndex;
    for (auto [it, end] = in_edges(v, graph.csr); it != end; ++it) {
      const uint32_t ei = graph.csr[*it];
      const Edge& e = graph.edges[ei];
      if (best == kNoIndex || e.to_event > graph.edges[best].to_event ||
          (e.to_event == graph.edges[best].to_event && e.from_event > graph.edges[best].from_event))
        best = ei;
    }
    if (best == kNoIndex) break;
    v = graph.edges[best].from;
  }
  return out;
}

}  // namespace cw::engine
