// A hang's signature: what a diagnosis found, with everything left out that differs
// between two runs of the same bug (pids, tids, addresses, times, the host), so that the
// same hang on a thousand machines is one signature and a different bug is another
// (docs/fleet.md, "Signatures").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "engine/diagnosis/segment_profile.h"
#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::fleet {

// The parts of a diagnosis a signature is made of, each already free of run-specific
// values. Names of processes and threads have their digits as '#': a pool's
// "worker-3" is the same thread of the program as another run's "worker-7".
struct HangSummary {
  std::string program;    // the hung process's name
  std::string exe;        // its executable's file name, "" when not recorded
  std::string version;    // the executable's build id (hex), "" when not recorded
  std::string hang_kind;  // LongWait, LongRunning, RepeatedYield
  // The hang's wait: the call it blocked in longest and the kind of edge that ended it
  // ("flock, ended by lock"); for a hang that did not block, what it did ("on cpu").
  std::string hang_wait;
  std::vector<std::string> hang_stack;  // user frames, innermost first (stack_names)
  std::string root_program, root_kind, root_call;
  std::vector<std::string> root_stack;
  // The causal path from the root cause to the hang: its first and last programs and the
  // others between them as a set: "cpu-hog -> {bash, sleep} -> sha#sum".
  std::string path_shape;
};

// What the diagnosis `d` of `trace` found, summarised. `events` indexes the threads of
// the root causes (TraceSession::thread_index).
HangSummary summarize(const Trace& trace, const engine::Graph& graph,
                      const engine::ThreadEvents& events, const engine::Diagnosis& d);

// The summary as text, one `field: value` line per part, in a fixed order: what people
// read to see why two hangs have one signature, and what signature_id hashes.
std::string signature_text(const HangSummary& s);

// 16 hex digits naming `text` (XXH3, 64 bits): equal texts, equal ids.
std::string signature_id(std::string_view text);

// `name` with every run of digits as one '#'.
std::string without_digits(std::string_view name);

// A stack's user frames as a signature names them, innermost first: the function when
// the trace names it, else the file it is in (never an address or an offset); a run of
// equal names is one, and at most `limit` are kept. Kernel frames are left out: the
// system call already says where the kernel waited, and kernels differ across hosts.
std::vector<std::string> stack_names(const Trace& trace, StackId stack, size_t limit = 12);

}  // namespace cw::fleet
