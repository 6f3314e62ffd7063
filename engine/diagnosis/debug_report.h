// What a diagnosis is reported as: `causeway debug` text for people (root cause first,
// then the hang, the causal path between them, the baseline, the questions and who
// answered them, notes) and `debug --json` (DESIGN §9, docs/json.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::engine {

// The report for people. Times are seconds since the trace started (trace_start_ns),
// stacks are symbolised where the trace names their frames and hex addresses otherwise.
std::string debug_text(const Trace& trace, const Graph& graph, const Diagnosis& diagnosis);

// {"hang", "root_causes", "path", "queries", "notes"} and, when set, "baseline" and
// "yield_loop", exactly as docs/json.md describes. Times are absolute trace ns.
nlohmann::json debug_json(const Trace& trace, const Graph& graph, const Diagnosis& diagnosis);

// A stack's frames, innermost first: the symbol when known, else the address in hex
// ("0x7f3a2b10"). Empty for stack 0.
std::vector<std::string> stack_frames(const Trace& trace, StackId stack);

}  // namespace cw::engine
