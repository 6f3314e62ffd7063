#pragma once

#include <cstdint>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/graph.h"

namespace cw::engine {

// The edge that ended a polling loop (a try that fails, a sleep, another try): an edge
// whose rule says `ends_polling` (a lock's release joined to the next try that got the
// lock), from another thread into segments [first, last] of the loop's thread — the try
// that succeeded is in the loop's stretch or just after it. The latest such edge: a parent
// that polls for its children reaps the quick ones on the way, and only the last reap ended
// its loop. kNoIndex when none.
uint32_t polling_end_edge(const Graph& graph, uint32_t first, uint32_t last);

// The causal path of a loop that `edge` ended, from the source's segment `origin` (the
// source thread's root cause, at or before the edge's source segment) along its thread to
// the edge, then the loop's segment the edge lands on.
std::vector<PathStep> polling_end_path(const Graph& graph, uint32_t origin, uint32_t edge);

}  // namespace cw::engine
