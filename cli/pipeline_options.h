// The options of the commands that read a trace, build its graph and diagnose it, as
// engine/session takes them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "engine/session/cache_session.h"
#include "engine/session/trace_session.h"
#include "trace/binary_format.h"

namespace cw::cli {

// --trace-format for a command that reads a trace: which form it is in, when its content
// does not tell (a perf script file whose first line is not an event). Named apart from
// `export --format`, the form written. With `format_alias`, for a command that writes no
// form, `--format` is taken too (hidden from --help), as earlier versions named it.
CLI::Option* add_trace_format_option(CLI::App* cmd, std::string& format, bool format_alias = true);

// --compress for a command that writes a binary trace: none|zstd[=LEVEL] into `writer`
// (`text` holds the option's text for CLI11).
// `default_spec` is what no --compress means: the recorder's commands default to zstd's
// fastest level, the commands that write a trace once to level 3 ("zstd").
CLI::Option* add_compress_option(CLI::App* cmd, std::string& text, TraceWriterOptions& writer,
                                 const std::string& default_spec = "zstd");

// --no-cache for a command that reads a trace and builds its graph.
CLI::Option* add_no_cache_option(CLI::App* cmd, bool& no_cache);

// How the command uses the cache: off with --no-cache; what it did said at a terminal, or
// with CAUSEWAY_CACHE=verbose, which also waits for the saves and says how they went.
session::CacheSession::Use cache_use(bool no_cache);

// What a command that builds a trace's graph takes: TRACE, its form, the packs, the cache.
struct TraceArgs {
  std::string trace;
  std::string format = "auto";
  std::vector<std::string> rules;
  bool no_stdlib = false;
  bool no_cache = false;
};

// The session of a.trace with a's packs, form and cache use. With
// `unnamed_frames_per_diagnosis`, the files that left stack frames unnamed are told per
// diagnosis (session::unnamed_frames_note), not when the trace is read.
session::SessionConfig session_config(const TraceArgs& a,
                                      bool unnamed_frames_per_diagnosis = false);

// What a command that builds a trace's graph takes first: TRACE (an existing file), --rules
// PACK… (in order) and --no-stdlib.
void add_graph_input_options(CLI::App* cmd, std::string& trace, std::vector<std::string>& rules,
                             bool& no_stdlib);

}  // namespace cw::cli
