// FindSimilarNode (an Argus draft's pseudo-code; the Argus paper, §5.5): segments that do
// what the hang's segment does — the same sequence of semantic events (same kind, same
// text fields, the same file descriptor, stream peers by process name; not scheduling or
// interrupts) — but whose wait ended quickly or with another result. Such a segment is a
// baseline: its causal path shows what should have happened.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/diagnosis/segment_profile.h"
#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::engine {

struct SimilarSegment {
  uint32_t segment = kNoIndex;
  uint64_t wait_ns = 0;  // its longest block
  int64_t wait_result = 0;
  bool result_differs = false;  // the wait returned something else than the hang's
};

struct SimilarOptions {
  // A candidate is a baseline when its longest block is at most this fraction of the
  // hang's (and it ended before the hang's wait began).
  double quick_fraction = 0.25;
  size_t compare_events = 32;
  size_t max_candidates = 64;
};

// Baseline candidates for `hang_segment` (whose profile is `hang`), most relevant first:
// segments of the same thread, then of threads with the same thread and process names in
// other processes; the latest first. A candidate waited quickly and ended before the
// hang's wait began.
std::vector<SimilarSegment> find_similar(const Trace& trace, const ThreadEvents& events,
                                         const Graph& graph, uint32_t hang_segment,
                                         const SegmentProfile& hang,
                                         const SimilarOptions& options = {});

}  // namespace cw::engine
