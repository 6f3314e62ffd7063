// Building the graph of a trace, or loading the one the derived cache holds for the same
// trace, packs, options and causeway; and what the cache gives its diagnosis.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/diagnosis/segment_profile.h"
#include "engine/graph/builder.h"
#include "engine/session/cache_session.h"
#include "engine/session/reporter.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::session {

// A trace's graph, and its cache key when the graph is that key's (loaded, or built and
// being saved), so what is derived from it may be kept under it too.
struct BuiltGraph {
  engine::BuildResult built;
  std::optional<cache::Key> key;
  // The graph whose cuts this one's were rebuilt from (its edges are this one's): a search
  // on it left ranks this graph's search may reuse (engine::ThreadRank).
  std::optional<cache::Key> rebuilt_from;
  // A graph built here and not saved yet (build_graph's `defer_save`): what its save needs.
  struct Unsaved {
    cache::Key key;
    std::optional<cache::Key> base, matches_key;
    // The cut matches entry (matches_key's) the build replayed cuts from was there: the
    // save merges the new lists into it, read again then (from `trace`'s cache) rather
    // than held through the diagnosis (~20 MB at 19 M events).
    bool had_stored = false;
    bool new_matches = false;  // built.matches has lists to keep
    const Trace* trace = nullptr;
    // The trace whose events to list by kind and name for the cache (none there yet).
    const Trace* list_names_of = nullptr;
  };
  std::optional<Unsaved> unsaved;
};

// Builds the graph of `trace` with `rules`; throws SessionError (bad input) with the error
// of the rule (or Lua hook) that could not be applied. With a cache session that is on, a
// graph built before from the same trace, packs, options and causeway is loaded instead,
// and a graph built here is saved for the next run (docs/cache.md): at once, or with
// `defer_save` when the caller calls save_built_graph (after a diagnosis: a copy of the
// process writing ~300 MB slows the search beside it on two CPUs).
// `index`, when given, is the caller's thread index (thread_index()): a rebuild of the
// cuts uses it (engine::BuildOptions::thread_events), mapping it from the cache into
// `*index` when it is not there yet (never made by a pass here; mapped beside the graph's
// load or rebuild, and kept for the diagnosis either way).
BuiltGraph build_graph(const Trace& trace, const rules::RuleSet& rules, Reporter& reporter,
                       const CacheSession* cache = nullptr, bool defer_save = false,
                       std::optional<engine::ThreadEvents>* index = nullptr);
// Saves what `graph` keeps unsaved (nothing when it was loaded or saved already), in a copy
// of this process; `rules` and `cache` as build_graph had them.
void save_built_graph(BuiltGraph& graph, const rules::RuleSet& rules, const CacheSession& cache);

// Saves a thread index made here (of the trace thread_index() was given) and returns the
// note.
using IndexSave = std::function<std::string(const engine::ThreadEvents&)>;
// The per-thread event index of every thread of `trace`, for the diagnosis: mapped from
// the cache when it holds one for these events, else made here and saved for the next
// run (in the background, as the graph is), or, with `save_later`, the save of it put
// there for the caller to run where the index stays.
engine::ThreadEvents thread_index(const Trace& trace, const CacheSession* cache = nullptr,
                                  bool* mapped = nullptr, IndexSave* save_later = nullptr);
// The thread index of `trace` mapped from the cache, when the cache holds one for these
// events (noted); nothing otherwise, and why in `why` when an entry was there.
std::optional<engine::ThreadEvents> mapped_thread_index(const Trace& trace,
                                                        const CacheSession* cache,
                                                        std::string* why = nullptr);

// What the derived cache gives a diagnosis of one graph: the hang found before on the
// graph for the same request, or else the candidate threads' ranks found on the graph it
// was rebuilt from; and it keeps the hang the diagnosis finds. `graph_key` as
// build_graph set it (none: nothing is looked up).
class DiagnosisCache {
 public:
  // `graph` is the graph of `graph_key` (a hang kept for it is checked against it).
  DiagnosisCache(const Trace& trace, const engine::Graph& graph, const CacheSession* cache,
                 std::optional<cache::Key> graph_key,
                 std::optional<cache::Key> rebuilt_from = std::nullopt)
      : trace_(trace),
        graph_(graph),
        cache_(cache),
        graph_key_(graph_key),
        rebuilt_from_(rebuilt_from) {}
  // Sets the hang's lookup and saving for options.symptom (set it first). `options` must
  // not outlive this.
  void apply(engine::DiagnoseOptions& options);

 private:
  const Trace& trace_;
  const engine::Graph& graph_;
  const CacheSession* cache_;
  std::optional<cache::Key> graph_key_;
  std::optional<cache::Key> rebuilt_from_;
  std::optional<engine::FoundHang> known_hang_;
  std::optional<std::vector<engine::ThreadRank>> ranks_before_;
};

}  // namespace cw::session
