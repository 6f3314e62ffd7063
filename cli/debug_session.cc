#include "cli/debug_session.h"

#include "cli/json_output.h"
#include "engine/diagnosis/debug_report.h"

namespace cw::cli {

nlohmann::json debug_report_json(const Trace& trace, const engine::Graph& graph,
                                 const engine::Diagnosis& diagnosis) {
  nlohmann::json j = engine::debug_json(trace, graph, diagnosis);
  const uint64_t start = engine::trace_start_ns(trace);
  add_seconds_since_start(j, start);
  j["trace_start_ns"] = start;
  return j;
}

}  // namespace cw::cli
