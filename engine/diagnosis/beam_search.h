// Beam search with lookback over the event graph, backwards from a segment (the published
// Argus design): partial causal paths grow one incoming edge per step and are ranked by
// the sum of their edge costs, but the beam is cut to its width only every `lookback`
// steps, so a path that starts with a weak edge is not dropped before the edges behind it
// are seen.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/graph/graph.h"

namespace cw::engine {

// Search costs of edges without a rule `cost` (lower is more likely causal).
struct EdgeCosts {
  double strong = 1;
  double boosted = 3;
  double weak = 6;
  double stop = 5;  // ending a slice here, compared with following an edge
};

// An edge's cost: its rule's `cost` when it has one, else by strength.
double edge_cost(const Edge& e, const EdgeCosts& costs = {});

struct BeamOptions {
  uint32_t width = 8;
  uint32_t lookback = 3;  // prune every `lookback` steps; 1 = plain beam search
  uint32_t max_depth = 64;
  // Between prunes the frontier can grow as width × in-degree^lookback; past this many
  // live paths it is pruned early (and BeamResult::capped says so).
  uint32_t max_frontier = 1u << 16;
  // A path is extended by at most this many of a segment's incoming edges, the cheapest
  // (an idle task's segment can have tens of thousands).
  uint32_t max_fanout = 256;
  EdgeCosts costs;
};

struct BeamPath {
  std::vector<uint32_t> edges;  // from the start segment backwards: edges[0] enters it
  uint32_t origin = 0;          // the segment the path reaches
  double cost = 0;
  bool complete = false;  // the origin has no incoming edge (or all lead into the path)
};

struct BeamResult {
  std::vector<BeamPath> paths;  // best first: complete and live paths by cost
  uint32_t steps = 0;           // expansion steps taken
  uint64_t expanded = 0;        // paths created
  bool capped = false;          // the frontier or a fan-out was cut to its limit
};

// Paths backwards from `start`. `skip` (may be empty) marks segments no path may enter,
// e.g. those already on the slice being extended.
BeamResult beam_search(const Graph& graph, uint32_t start, const BeamOptions& options,
                       const std::vector<bool>& skip = {});

// The incoming edges of `segment`, cheapest first, one per source segment (the cheapest
// edge from each), excluding edges from segments marked in `skip`.
std::vector<uint32_t> incoming_by_source(const Graph& graph, uint32_t segment,
                                         const EdgeCosts& costs,
                                         const std::vector<bool>& skip = {});

}  // namespace cw::engine
