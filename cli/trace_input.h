// Reading a trace named on the command line, with the reader's report shown to the user.
#pragma once

#include <string>

#include "trace/binary_format.h"

namespace cw::cli {

bool is_text_trace_file(const std::string& path);

// Loads either form. Prints what the reader skipped (byte offsets and reasons) to stderr.
// Returns kExitOk, or kExitBadInput after printing why nothing could be read.
int read_trace_input(const std::string& path, Trace& trace, ReadReport& report);

}  // namespace cw::cli
