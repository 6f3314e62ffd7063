// The timeline model (engine/export/timeline.h) as the page draws it: times in ns from the
// timeline's start (a JavaScript number holds those exactly), the trace's start on that
// scale for the axis, each track with its process's name.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/diagnosis/questions.h"
#include "engine/export/timeline.h"

namespace cw::ui {

// What a question is about, marked on its timeline: the segment asked about, and each
// option's segment or edge with the option's number (1-based).
struct QuestionMarks {
  uint32_t subject = UINT32_MAX;
  std::vector<std::pair<uint32_t, uint32_t>> option_segments;  // (segment, option)
  std::vector<std::pair<uint32_t, uint32_t>> option_edges;     // (edge, option)
};

// {"start_ns", "end_ns", "trace_start_ns", "tracks", "slices", "flows", "instants"};
// `key` tells the page whether it already drew this one.
nlohmann::json timeline_json(const engine::Timeline& t, uint64_t trace_start_ns, uint64_t key,
                             const QuestionMarks* marks = nullptr);

// The timeline the page shows for `d` (done or found so far): the causal path's
// neighbourhood (engine::neighbourhood); with `question`, also the segment it asks about
// and each option's segment or edge, marked.
nlohmann::json diagnosis_timeline(const Trace& trace, const engine::Graph& graph,
                                  const engine::Diagnosis& d, uint64_t key,
                                  const engine::Question* question = nullptr);

}  // namespace cw::ui
