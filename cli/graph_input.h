// Building the graph of a trace named on the command line, with a progress line in a
// terminal and a rule's error shown to the user.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/cache_session.h"
#include "engine/graph/builder.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::cli {

// Returns kExitOk with the graph in `out`, or kExitBadInput after printing the error of
// the rule (or Lua hook) that could not be applied. With a cache session that is on, a
// graph built before from the same trace, packs, options and causeway is loaded instead,
// and a graph built here is saved for the next run (docs/cache.md).
int build_graph_input(const Trace& trace, const rules::RuleSet& rules, engine::BuildResult& out,
                      const CacheSession* cache = nullptr);

// What a command that builds a trace's graph takes first: TRACE (an existing file), --rules
// PACK… (in order) and --no-stdlib.
void add_graph_input_options(CLI::App* cmd, std::string& trace, std::vector<std::string>& rules,
                             bool& no_stdlib);

}  // namespace cw::cli
