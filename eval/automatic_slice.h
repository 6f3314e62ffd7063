// The slice a traditional causal tracer would cut with no one to ask (the Argus paper, §6,
// Table 2's "automatic slicing"): from a segment, follow the most recent incoming edge
// back, whatever its strength, until a segment has none. Diagnoses compare their
// interactive path with it: how much shorter the questions made the path.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/diagnosis/segment_profile.h"
#include "engine/graph/graph.h"

namespace cw::engine {

// The segments from `start` back to where the most-recent-edge walk ends, `start` first.
// Stops at a segment it has already visited and after `max_segments`.
std::vector<uint32_t> automatic_slice(const Graph& graph, uint32_t start,
                                      uint32_t max_segments = 100000);

}  // namespace cw::engine
