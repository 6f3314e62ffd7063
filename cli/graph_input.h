// Building the graph of a trace named on the command line, with a progress line in a
// terminal and a rule's error shown to the user.
#pragma once

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

}  // namespace cw::cli
