#include "engine/diagnosis/beam_search.h"

#include <algorithm>

namespace cw::engine {

double edge_cost(const Edge& e, const EdgeCosts& costs) {
  if (e.cost != Edge::kDefaultCost) return e.cost;
  switch (e.strength) {
    case Strength::Strong: return costs.strong;
    case Strength::Boosted: return costs.boosted;
    case Strength::Weak: return costs.weak;
  }
  return costs.weak;
}

std::vector<uint32_t> incoming_by_source(const Graph& graph, uint32_t segment,
                                         const EdgeCosts& costs, const std::vector<bool>& skip) {
  std::vector<uint32_t> in;
  for (auto [it, end] = in_edges(segment, graph.csr); it != end; ++it) {
    uint32_t ei = graph.csr[*it];
    const Edge& e = graph.edges[ei];
    if (e.from == segment || (!skip.empty() && skip[e.from])) continue;
    in.push_back(ei);
  }
  // The cheapest edge of each source: sorted by (source, cost), the first of each run.
  // (A segment of an idle task can have tens of thousands of incoming edges.)
  std::sort(in.begin(), in.end(), [&](uint32_t a, uint32_t b) {
    const Edge& ea = graph.edges[a];
    const Edge& eb = graph.edges[b];
    if (ea.from != eb.from) return ea.from < eb.from;
    double ca = edge_cost(ea, costs), cb = edge_cost(eb, costs);
    return ca != cb ? ca < cb : a < b;
  });
  std::vector<uint32_t> best;
  for (uint32_t ei : in)
    if (best.empty() || graph.edges[best.back()].from != graph.edges[ei].from) best.push_back(ei);
  std::stable_sort(best.begin(), best.end(), [&](uint32_t a, uint32_t b) {
    double ca = edge_cost(graph.edges[a], costs), cb = edge_cost(graph.edges[b], costs);
    if (ca != cb) return ca < cb;
    // The later cause first: of two equally good explanations the nearer one is likelier.
    return graph.segments[graph.edges[a].from].start_ns >
           graph.segments[graph.edges[b].from].start_ns;
  });
  return best;
}

namespace {

// Paths share their prefixes: each node is one step, pointing at the step before it.
struct Node {
  uint32_t parent;  // kNoParent for a first step
  uint32_t edge;
  uint32_t segment;  // the segment this step reached
  uint32_t depth;
  double cost;
};
constexpr uint32_t kNoParent = 0xffffffffu;

bool on_path(const std::vector<Node>& nodes, uint32_t n, uint32_t segment) {
  for (; n != kNoParent; n = nodes[n].parent)
    if (nodes[n].segment == segment) return true;
  return false;
}

BeamPath path_of(const std::vector<Node>& nodes, uint32_t n, bool complete) {
  BeamPath p;
  p.origin = nodes[n].segment;
  p.cost = nodes[n].cost;
  p.complete = complete;
  for (uint32_t k = n; k != kNoParent; k = nodes[k].parent) p.edges.push_back(nodes[k].edge);
  std::reverse(p.edges.begin(), p.edges.end());
  return p;
}

}  // namespace

BeamResult beam_search(const Graph& graph, uint32_t start, const BeamOptions& options,
                       const std::vector<bool>& skip) {
  BeamResult result;
  const uint32_t width = std::max<uint32_t>(1, options.width);
  const uint32_t lookback = std::max<uint32_t>(1, options.lookback);
  std::vector<Node> nodes;
  std::vector<uint32_t> frontier, next, done;
  auto by_cost = [&](uint32_t a, uint32_t b) {
    if (nodes[a].cost != nodes[b].cost) return nodes[a].cost < nodes[b].cost;
    return nodes[a].depth > nodes[b].depth;  // the longer explanation at equal cost
  };
  auto prune = [&](std::vector<uint32_t>& v) {
    if (v.size() <= width) return;
    std::partial_sort(v.begin(), v.begin() + width, v.end(), by_cost);
    v.resize(width);
  };

  // Expands one path (or the start, parent == kNoParent) by every incoming edge.
  std::vector<uint32_t> fan;
  auto expand = [&](uint32_t parent, uint32_t segment, double cost, uint32_t depth) {
    bool any = false;
    fan.clear();
    for (auto [it, end] = in_edges(segment, graph.csr); it != end; ++it)
      fan.push_back(graph.csr[*it]);
    if (fan.size() > options.max_fanout) {
      std::nth_element(fan.begin(), fan.begin() + options.max_fanout, fan.end(),
                       [&](uint32_t a, uint32_t b) {
                         return edge_cost(graph.edges[a], options.costs) <
                                edge_cost(graph.edges[b], options.costs);
                       });
      fan.resize(options.max_fanout);
      result.capped = true;
    }
    for (uint32_t ei : fan) {
      const Edge& e = graph.edges[ei];
      if (e.from == start || e.from == segment || (!skip.empty() && skip[e.from])) continue;
      if (parent != kNoParent && on_path(nodes, parent, e.from)) continue;
      nodes.push_back({parent, ei, e.from, depth + 1, cost + edge_cost(e, options.costs)});
      next.push_back(static_cast<uint32_t>(nodes.size() - 1));
      ++result.expanded;
      any = true;
    }
    return any;
  };

  expand(kNoParent, start, 0, 0);
  for (uint32_t step = 1; !next.empty(); ++step) {
    result.steps = step;
    frontier.swap(next);
    next.clear();
    if (step % lookback == 0) prune(frontier);
    if (frontier.size() > options.max_frontier) {
      prune(frontier);
      result.capped = true;
    }
    if (step >= options.max_depth) {
      for (uint32_t n : frontier) done.push_back(n);
      break;
    }
    for (uint32_t n : frontier) {
      const Node node = nodes[n];  // copy: expand() may grow `nodes`
      if (!expand(n, node.segment, node.cost, node.depth)) done.push_back(n);
    }
  }
  // Live paths left by the depth limit are reported too, as incomplete.
  std::sort(done.begin(), done.end(), by_cost);
  for (uint32_t n : done) {
    bool complete = nodes[n].depth < options.max_depth;
    result.paths.push_back(path_of(nodes, n, complete));
  }
  return result;
}

}  // namespace cw::engine
