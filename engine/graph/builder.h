// Builds the event graph of a trace under a rule set (docs/rules.md): spans, link
// candidates, cuts (split, peers, batch), segments, edge classification (strong / weak /
// prune / boost), neighbour edges across cuts, data-flag edges, statistics.
//
// Every decision is a rule's: the builder knows mechanisms only.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/graph/cut_matches.h"
#include "engine/graph/event_names.h"
#include "engine/graph/graph.h"
#include "rules/lua_sandbox.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::engine {

// Graph statistics; names as in `graph --json` "stats" (docs/json.md).
struct BuildStats {
  uint64_t candidates = 0;    // link candidates that passed `where` and `within`
  uint64_t unclassified = 0;  // candidates no strong/weak rule classified
  uint64_t pruned = 0;        // weak edges dropped by a prune rule
  uint64_t boosted = 0;       // weak edges boosted
  uint64_t cuts = 0;          // segment boundaries made by split and batch rules
  // Σ over requests (a thread's segments joined by neighbour edges) of max(0, distinct
  // other processes joined to the request by strong edges − 1): one unit of work strongly
  // tied to several peers (the Argus paper, §3.1). Only cuts without neighbour edges lower it.
  uint64_t over_connections = 0;
  // Σ over segments of max(0, distinct other processes joined by non-split edges − 1).
  uint64_t segment_over_connections = 0;
  uint64_t flag_edges = 0;
  uint64_t data_flags_used = 0;  // flag rules with at least one edge
};

// How often each rule acted, indexed like the RuleSet's lists.
struct RuleCounts {
  std::vector<uint64_t> splits;   // cuts per split rule
  std::vector<uint64_t> batches;  // cuts per batch rule
  std::vector<uint64_t> edges;    // edges (in the graph) classified per strong/weak rule
  std::vector<uint64_t> pruned;   // per prune rule (the first that matched)
  std::vector<uint64_t> boosted;  // per boost rule (the first that matched)
  std::vector<uint64_t> flags;    // edges per flag rule
};

// A cut a `split … peers` rule made, before it joined the thread's own cuts (where a cut
// of another rule at the same event hides it). Kept with the graph so that a rebuild that
// changes only other cut rules reuses it (BuildOptions::reuse): it comes from link
// candidates, which the graph does not keep.
struct PeerCut {
  uint32_t thread = 0;  // the build's thread order: by first event in the trace
  uint32_t event = 0;
  uint32_t rule = 0;  // index into RuleSet::splits
  rules::Neighbour neighbour = rules::Neighbour::None;
  // The previous link end on the thread: the cut is made only when no other cut lies
  // between it and `event`.
  uint32_t since = 0;
};

struct BuildResult {
  Graph graph;
  BuildStats stats;
  RuleCounts counts;
  std::vector<PeerCut> peer_cuts;  // in the order the build made them
  // The matches of the cut rules this build evaluated (BuildOptions::record_matches): every
  // active cut rule's after a scan of the events, the new rules' after a replay.
  CutMatchSet matches;
  // A rebuild's cuts came from the cut rules' matches (BuildOptions::known_matches), not
  // from a scan of the events.
  bool cuts_replayed = false;
  // A rebuild's segments were made from the reused graph's and each thread's events
  // (BuildOptions::thread_events), not by a pass over the events; how many threads kept
  // theirs as they were.
  bool segments_from_reused = false;
  uint64_t threads_kept = 0;
  // BuildStats::over_connections and ::segment_over_connections are made (see
  // BuildOptions::count_over_connections and fill_over_connections).
  bool over_connections_counted = false;
};

// Each thread's events in trace order, from an index the caller keeps (the diagnosis's
// thread index, mapped from the derived cache): the thread tids[i] (sorted, distinct) has
// events[at[i]] … events[at[i + 1] - 1], ascending; at has tids.size() + 1 entries.
struct ThreadEventLists {
  std::span<const Tid> tids;
  std::span<const uint32_t> events;
  std::span<const uint32_t> at;
  // The thread's events, empty when it has none here.
  std::span<const uint32_t> of(Tid tid) const;
};

// Called between and during phases: ("events", done, total) …
using Progress = std::function<void(std::string_view phase, uint64_t done, uint64_t total)>;

struct BuildOptions {
  Progress progress;
  rules::LuaLimits lua_limits;
  // Evaluate rule expressions by walking their trees instead of their compiled programs
  // (expr_eval.h): the reference tests compare the compiled form with.
  bool interpret_expressions = false;
  // From how many items (events, link candidates) a phase splits its work over two
  // threads (below, a second thread costs more to start than it saves; tests lower it to
  // run both paths on small traces). The result does not depend on it. With one CPU
  // (worker_count(), base/parallel.h: CAUSEWAY_THREADS=1 asks for that) no phase splits.
  uint64_t parallel_from = uint64_t{1} << 16;
  // A graph built before from the same trace whose rules differ from these at most in
  // their cut rules (split rules other than `peers`, batch rules): the link candidates,
  // the edge classification and the flag pairs do not depend on cuts, so its edges are
  // taken as they are (their events mapped to the new segments) and only the cuts are
  // derived again. The caller vouches for the rules (the derived cache keys the graph by
  // cache::links_key). When a cut rule calls a Lua hook the graph is built whole: a hook
  // keeps state, so the cut rule's calls change what later calls (an edge rule's) return.
  // Hooks that only link, edge and flag rules call are called in an order the cut rules
  // do not change. Its edges are taken (moved into the new graph, not copied: at 19 M
  // events they are ~170 MB).
  BuildResult* reuse = nullptr;
  // Keep each cut rule's matches (BuildResult::matches) for a later rebuild. None are kept
  // when a cut rule calls a Lua hook (the rebuilds are whole builds).
  bool record_matches = false;
  // With `reuse`: the matches of these rules found before (cut_matches.h). When every
  // active cut rule's are known, or the rule can be evaluated alone (a split that cuts at
  // its event and whose `where` reads only the event's own fields), the cuts are replayed
  // from the matches instead of a scan of the events.
  const KnownCutMatches* known_matches = nullptr;
  // With `known_matches`: the trace's events listed by kind and name (event_names.h),
  // asked for (once, when a rule is evaluated alone) and null when there are none. Such
  // a rule is then evaluated at the events its kind and `name` test select, not at every
  // event of the trace.
  std::function<const EventNames*()> event_names;
  // With `reuse`, when the reused graph kept its segments: every thread's events. The
  // rebuild then names the threads from their first events, takes the segments of a
  // thread whose cuts did not change as the reused graph has them, finds where the
  // others' segments end by searching their lists at the new cuts alone, and maps the
  // reused edges through the old segments, instead of a pass over every event for each.
  const ThreadEventLists* thread_events = nullptr;
  // Count the over-connections at the end (BuildStats). A diagnosis does not read them: a
  // caller that only diagnoses leaves them to fill_over_connections, for the graph report
  // or the cache's save (by a copy of the process, out of the diagnosis's way).
  bool count_over_connections = true;
};

// Throws rules::LuaError when a hook fails (its message names pack, rule and line), and
// DiagnosticError (at the rule) for a rule the engine cannot apply or an expression error.
BuildResult build_graph(const Trace& trace, const rules::RuleSet& rules,
                        const BuildOptions& options = {});

// Over-connections of a built graph (see BuildStats). fill_over_connections counts them into
// a build's stats when they are not counted yet.
void fill_over_connections(BuildResult& result);
uint64_t count_over_connections(const Graph& graph);
uint64_t count_segment_over_connections(const Graph& graph);

}  // namespace cw::engine
