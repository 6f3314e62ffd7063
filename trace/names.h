// The names a trace knows threads and processes by (their comm), looked up in one place.
#pragma once

#include <string_view>

#include "trace/trace.h"

namespace cw {

// The comm of thread `tid`, or `unknown` when the trace has no such thread.
inline std::string_view thread_comm(const Trace& trace, Tid tid, std::string_view unknown = {}) {
  const ThreadInfo* t = trace.thread(tid);
  return t ? trace.strings.get(t->comm) : unknown;
}

// The comm of process `pid`, or `unknown` when the trace has no such process.
inline std::string_view process_comm(const Trace& trace, Pid pid, std::string_view unknown = {}) {
  const ProcessInfo* p = trace.process(pid);
  return p ? trace.strings.get(p->comm) : unknown;
}

}  // namespace cw
