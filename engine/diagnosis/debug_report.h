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

// For a question at a terminal: the hang (when `with_hang`: what, when, where it blocked)
// and what the diagnosis found so far (root causes, the causal path or the baseline's).
std::string so_far_text(const Trace& trace, const Graph& graph, const Diagnosis& so_far,
                        bool with_hang);

// {"hang", "root_causes", "path", "queries", "notes"} and, when set, "baseline" and
// "yield_loop", exactly as docs/json.md describes. Times are absolute trace ns.
nlohmann::json debug_json(const Trace& trace, const Graph& graph, const Diagnosis& diagnosis);
// Its "queries": every question in the order asked, its options, the one chosen and who
// chose it.
nlohmann::json queries_json(const Diagnosis& diagnosis);

// A stack's frames, innermost first: the function when known, else `file+0xoffset` in
// the file mapped there, else the address in hex
// ("0x7f3a2b10"). Empty for stack 0. Frames below the first mappable page (0x0, 0x1000:
// an unwinder that ran off the end of the stack) are left out.
// An event for people, as perf trace shows a call: `read(fd: 3<object 0xffff8881…>)`,
// `send(fd: 4<object 2>, offset: 64, len: 64, peer: 811)`: the call's name, the descriptor with
// the object behind it, then the other fields that were recorded (0 and -1 say "not
// recorded" or "none" and are left out); kernel addresses in hex.
std::string describe_event(const Trace& trace, uint32_t index);

std::vector<std::string> stack_frames(const Trace& trace, StackId stack);
// The frames behind stack_frames (symbolised frames with inlined calls, file:line and
// kernel frames when known), with the same ones left out.
std::vector<Frame> stack_frame_list(const Trace& trace, StackId stack);
// The frames as the text report lists them: `name (file:line)`, marked ` [inlined]` for
// a function inlined into the next frame and ` [kernel]` for the kernel's.
std::vector<std::string> stack_frame_lines(const Trace& trace, StackId stack);

}  // namespace cw::engine
