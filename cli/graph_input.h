// Building the graph of a trace named on the command line, with a progress line in a
// terminal and a rule's error shown to the user.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/cache_session.h"
#include "engine/cache/cache.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/diagnosis/segment_profile.h"
#include "engine/graph/builder.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::cli {

// Returns kExitOk with the graph in `out`, or kExitBadInput after printing the error of
// the rule (or Lua hook) that could not be applied. With a cache session that is on, a
// graph built before from the same trace, packs, options and causeway is loaded instead,
// and a graph built here is saved for the next run (docs/cache.md).
// `keyed` (optional) is set to the graph's cache key when the graph is that key's (loaded,
// or built and being saved), so what is derived from it may be kept under it too.
int build_graph_input(const Trace& trace, const rules::RuleSet& rules, engine::BuildResult& out,
                      const CacheSession* cache = nullptr,
                      std::optional<cache::Key>* keyed = nullptr);

// The per-thread event index of every thread of `trace`, for the diagnosis: mapped from
// the cache when it holds one for these events, else made here and saved for the next
// run (in the background, as the graph is).
engine::ThreadEvents thread_index_input(const Trace& trace, const CacheSession* cache = nullptr);

// What the derived cache gives a diagnosis of one graph: the thread index (thread_index_input)
// and the hang found before on the graph for the same request, and it keeps the hang the
// diagnosis finds. `graph_key` as build_graph_input set it (none: nothing is looked up).
class DiagnosisCache {
 public:
  // `graph` is the graph of `graph_key` (a hang kept for it is checked against it).
  DiagnosisCache(const Trace& trace, const engine::Graph& graph, const CacheSession* cache,
                 std::optional<cache::Key> graph_key);
  // Sets options.events, and the hang's lookup and saving for options.symptom (set it
  // first). `options` must not outlive this.
  void apply(engine::DiagnoseOptions& options);

 private:
  const Trace& trace_;
  const engine::Graph& graph_;
  const CacheSession* cache_;
  std::optional<cache::Key> graph_key_;
  engine::ThreadEvents index_;
  std::optional<engine::FoundHang> known_hang_;
};

// What a command that builds a trace's graph takes first: TRACE (an existing file), --rules
// PACK… (in order) and --no-stdlib.
void add_graph_input_options(CLI::App* cmd, std::string& trace, std::vector<std::string>& rules,
                             bool& no_stdlib);

}  // namespace cw::cli
