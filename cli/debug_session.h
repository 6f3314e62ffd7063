// What `causeway debug` and `causeway ui` share around a diagnosis: their options and the
// JSON report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/pipeline_options.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/session/trace_session.h"
#include "trace/trace.h"

namespace cw::cli {

// What `debug` and `ui` both take: the trace and its form, the packs, the cache, the
// symptom, the answers file and where to save the answers, --json.
struct DiagnosisArgs : TraceArgs {
  std::string hang = "auto";
  std::string answers;
  std::string save_answers;
  bool json = false;
};

// --min-hang's default: shorter stretches are not a hang worth diagnosing.
inline constexpr double kDefaultMinHangSeconds = 0.5;

// `debug --json`'s document (docs/json.md): the report with seconds since the trace
// started beside each absolute time, and the trace's start; without the schema version.
nlohmann::json debug_report_json(const Trace& trace, const engine::Graph& graph,
                                 const engine::Diagnosis& diagnosis);

}  // namespace cw::cli
