// The human-writable trace form (docs/trace-format.md): one record per line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/source.h"
#include "trace/trace.h"

namespace cw {

// The first word of every text trace; readers tell the two forms apart by it.
inline constexpr std::string_view kTextTraceHeader = "causeway-trace";

// Parses text[begin, end) of `source` (the whole text by default; pack tests embed a
// trace in a .cw file, so positions are reported against the whole source). Throws
// DiagnosticError with file:line:col on the first error. Events come out sorted by time.
Trace parse_text_trace(const SourcePtr& source, size_t begin = 0, size_t end = std::string::npos);

// Writes the text form; parse_text_trace(write_text_trace(t)) reproduces t.
std::string write_text_trace(const Trace& trace);

}  // namespace cw
