// Reading the text `perf script` prints (docs/trace-format.md, "perf script output"), so
// a recording made with `perf record -g` can be analysed: each event is a header line
//
//   COMM TID [CPU] SECONDS.MICROS: [PERIOD] EVENT: PAYLOAD
//
// (TID may be PID/TID, with `perf script -F +pid`), then its call chain, one frame a line,
// innermost first, each starting with a tab: "\tADDR SYMBOL+0xOFF (DSO)", then a blank line.
//
// Scheduler, system call and process tracepoints become the builtin kinds (switch_out,
// switch_in, wakeup, syscall_enter, ...); any other event (cpu-clock samples, counters,
// other tracepoints, probes) becomes a `sample` with its stack. Only user frames are
// kept: a trace's stack is the user stack (trace.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/source.h"
#include "trace/trace.h"

namespace cw {

// Whether `text` (the start of a file is enough) looks like `perf script` output: its
// first line that is neither blank nor a '#' comment is an event header.
bool looks_like_perf_script(std::string_view text);

// Parses the whole of `source`. Throws DiagnosticError with file:line:col and the line on
// the first line it cannot read. `notes` (when given) receives what the reader assumed or
// left out, for the user (e.g. that threads' processes were not in the output).
Trace parse_perf_script(const SourcePtr& source, std::vector<std::string>* notes = nullptr);

}  // namespace cw
