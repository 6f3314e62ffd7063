// Reading a trace named on the command line, with the reader's report shown to the user.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/cache_session.h"
#include "trace/binary_format.h"
#include "trace/symbolize.h"

namespace cw::cli {

bool is_text_trace_file(const std::string& path);

// Loads either form. Prints what the reader skipped (byte offsets and reasons) to stderr.
// Returns kExitOk, or kExitBadInput after printing why nothing could be read.
// Names the stack frames from the files on this machine; the files it could not find are
// noted for every process, or, when `symbols` is given, left to the caller (which notes
// those of the processes it reports on).
// `format` "auto" (by content), "binary", "text" or "perf-script" (perf script's text
// output, trace/perf_script.h).
// With a cache session that is on, a binary trace's events and values are mapped from the
// cache when it holds them for this content (only the small chunks are read from the
// trace), and saved there after a clean read (docs/cache.md).
int read_trace_input(const std::string& path, Trace& trace, ReadReport& report,
                     SymbolizeReport* symbols = nullptr, const std::string& format = "auto",
                     const CacheSession* cache = nullptr);

// --format for a command that reads a trace: which form it is in, when its content does
// not tell (a perf script file whose first line is not an event). `name` is the option's
// name for a command whose --format is the output's (`export --trace-format`).
CLI::Option* add_trace_format_option(CLI::App* cmd, std::string& format,
                                     const std::string& name = "--format");

// --compress for a command that writes a binary trace: none|zstd[=LEVEL] into `writer`
// (`text` holds the option's text for CLI11).
CLI::Option* add_compress_option(CLI::App* cmd, std::string& text, TraceWriterOptions& writer);

}  // namespace cw::cli
