// Reading a trace named on the command line, with the reader's report shown to the user.
#pragma once

#include <string>

#include "trace/binary_format.h"
#include "trace/symbolize.h"

namespace cw::cli {

bool is_text_trace_file(const std::string& path);

// Loads either form. Prints what the reader skipped (byte offsets and reasons) to stderr.
// Returns kExitOk, or kExitBadInput after printing why nothing could be read.
// Names the stack frames from the files on this machine; the files it could not find are
// noted for every process, or, when `symbols` is given, left to the caller (which notes
// those of the processes it reports on).
int read_trace_input(const std::string& path, Trace& trace, ReadReport& report,
                     SymbolizeReport* symbols = nullptr);

}  // namespace cw::cli
