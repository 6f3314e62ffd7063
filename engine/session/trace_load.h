// Reading a trace file: either form or perf script's text, the events mapped from the
// derived cache when it holds them, and the stack frames named from this machine's files.
#pragma once

#include <string>

#include "engine/session/cache_session.h"
#include "engine/session/reporter.h"
#include "trace/binary_format.h"
#include "trace/symbolize.h"
#include "trace/trace.h"

namespace cw::session {

// Whether the file starts as the text form does.
bool is_text_trace_file(const std::string& path);

// Loads the trace at `path` into `trace` and returns what the reader skipped, which it
// also tells `reporter` (byte offsets and reasons). Throws SessionError (bad input) saying
// why when nothing could be read.
// `format` "auto" (by content), "binary", "text" or "perf-script" (trace/perf_script.h).
// Names the stack frames from the files on this machine; the files it could not find are
// told for the recorded command's processes (every process in a trace of no command), or,
// when `symbols` is given, left to the caller (which tells those of the processes it
// reports on).
// With a cache session that is on, a binary trace's events and values are mapped from the
// cache when it holds them for this content (only the small chunks are read from the
// trace), and saved there after a clean read (docs/cache.md).
ReadReport read_trace(const std::string& path, Trace& trace, Reporter& reporter,
                      SymbolizeReport* symbols = nullptr, const std::string& format = "auto",
                      const CacheSession* cache = nullptr);

}  // namespace cw::session
