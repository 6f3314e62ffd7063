// Private to the graph builder's files: nothing else includes it (the builder's interface
// is builder.h). What they share: the state the builder keeps per thread, per event kind
// and per flag rule, the class whose passes they define (builder.cc: their order;
// builder_scan.cc: the scan of the events; builder_segments.cc: cuts and segments;
// builder_edges.cc: edges), and the over-connection count (over_connections.cc).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "engine/graph/builder.h"
#include "engine/graph/cut_matches.h"
#include "engine/graph/expr_eval.h"
#include "engine/graph/link_pairing.h"
#include "engine/graph/span_tree.h"
#include "engine/graph/thread_slots.h"
#include "rules/lua_host.h"

namespace cw::engine::build {

using rules::Neighbour;
using rules::RuleSet;

inline constexpr uint64_t kProgressStep = 1u << 20;
inline constexpr uint32_t kNoSegment = 0xffffffffu;

// A segment boundary: `event` starts a new segment of its thread.
struct Cut {
  uint32_t event;
  RuleRef rule;
  Neighbour neighbour;
};

// A cut of a `split … peers` rule on a thread, between the link end at `since` and the one
// the cut starts with: made only when the thread's own cuts do not part them already.
struct PendingPeerCut {
  uint32_t thread;
  Cut cut;
  uint32_t since;
};

struct ThreadState {
  Tid tid = 0;
  Pid pid = 0;
  uint32_t node = SpanTree::kRoot;
  uint32_t first_event = kNoEvent;
  uint32_t last_event = kNoEvent;
  RuleRef pending_after;  // a `cut after` waiting for the thread's next event
  Neighbour pending_neighbour = Neighbour::None;
  std::vector<Cut> cuts;
  std::vector<uint32_t> batch_loop;  // per batch rule: the loop node of its last item
  // Per batch rule with `per`: the last item's value, and whether there is one (none after
  // the thread returned to its loop).
  std::vector<int64_t> batch_key;
  std::vector<uint8_t> batch_keyed;
  // A split rule with `loop` has matched: the thread runs an event loop (`within loop`).
  bool in_loop = false;
  // The innermost span open before the thread's last span closed, and the event that
  // closed it: what `cut SPAN` of an event recorded as its call returns (a recv) names.
  uint32_t closed_node = SpanTree::kRoot;
  uint32_t closed_event = kNoEvent;
  uint32_t segment_base = 0;
  uint32_t segment_end = 0;  // one past the thread's last segment
  // While matches are recorded: the `cut after` matches (split rule, index in its list)
  // whose place is the thread's next event.
  std::vector<std::pair<uint32_t, uint32_t>> awaiting_next;
  // While cuts are replayed from matches: where the pending `cut after` goes (kNoEvent:
  // the thread has no next event).
  uint32_t pending_at = 0xffffffffu;
};

// The matches of the cut rules (cut_matches.h) one scan, or one share of it, records.
struct MatchRecorder {
  MatchRecorder(size_t splits, size_t batches)
      : splits(splits), batches(batches), batch_lost(batches, 0) {}
  std::vector<std::vector<SplitMatch>> splits;   // per split rule
  std::vector<std::vector<BatchMatch>> batches;  // per batch rule
  // Per batch rule: evaluating its item where the build itself does not (a thread not in
  // its event loop yet) failed, so its list is not whole.
  std::vector<uint8_t> batch_lost;
};

// What one pass over the events learns before the scan, to size its tables up front:
// growing the span tree by doubling copies it and briefly holds it twice.
struct Census {
  uint64_t span_opens = 0;  // events whose kind opens a span
};

// Runs work(begin, end, part) over [0, n): in two parts, the second (part 1) on a thread
// of its own, when `two` (the machine has two cores); else as one part 0. Callers merge
// what the parts found in part order. When both parts fail, the first part's error is the
// one thrown: a single pass would have met it first.
template <class Work>
void in_two_parts(uint64_t n, bool two, Work&& work) {
  if (!two || n < 2) {
    work(uint64_t{0}, n, 0);
    return;
  }
  const uint64_t mid = n / 2;
  std::exception_ptr second_error;
  std::thread second([&] {
    try {
      work(mid, n, 1);
    } catch (...) {
      second_error = std::current_exception();
    }
  });
  try {
    work(uint64_t{0}, mid, 0);
  } catch (...) {
    second.join();
    throw;
  }
  second.join();
  if (second_error) std::rethrow_exception(second_error);
}

// Dense thread indexes, keyed by tid (never a table sized by the largest tid).
using ThreadIndex = ThreadSlots;

// What rules care about events of one kind.
struct KindActions {
  std::vector<uint32_t> splits;       // AtEvent split rules
  std::vector<uint32_t> batch_opens;  // batch rules whose loop this kind opens
  std::vector<uint32_t> batch_items;  // batch rules whose items are this kind
  std::vector<uint32_t> links;        // links with this kind on either side
  std::vector<uint32_t> flag_writes;  // flag rules (this kind is the flag write kind)
  std::vector<uint32_t> flag_reads;
  bool any() const {
    return !splits.empty() || !batch_opens.empty() || !batch_items.empty() || !links.empty() ||
           !flag_writes.empty() || !flag_reads.empty();
  }
};

struct FlagState {
  StrId local = StringTable::kMissing, qualified = StringTable::kMissing;
  bool active = false;  // the last write set the flag
  uint32_t write = kNoEvent;
  Tid writer = 0;
  uint64_t value = 0;
  std::vector<Tid> readers;  // threads that already saw this write
  // Reads of a value no write had stored yet: a watchpoint records a write at its trap,
  // after the store, and a thread polling on another CPU can be recorded reading the new
  // value first. The next write of that value (within kFlagSkewNs) explains them.
  struct EarlyRead {
    uint32_t event;
    Tid tid;
    uint64_t value;
  };
  std::vector<EarlyRead> early;
};

// How far before its write a read may be recorded and still have seen it.
inline constexpr uint64_t kFlagSkewNs = 1'000'000;
inline constexpr size_t kMaxEarlyReads = 64;

struct FlagPair {
  uint32_t write, read, rule;
};

// Both over-connection counts of a graph (BuildStats): {requests, segments}.
std::pair<uint64_t, uint64_t> count_both_over_connections(const Graph& g);

class LinkFeed;

// What the cut part of the scan evaluates with: the span tree its event contexts point
// into, an evaluator over that tree, and the cut rules' expressions that evaluator
// prepared. A build has one; a rebuild of the cuts alone scans its threads in two shares,
// the second with a scope of its own (builder_scan.cc, scan_cuts_in_two_shares()): the cuts of a
// thread depend on its own events only, and each share's span nodes are its own.
struct CutScope {
  SpanTree& spans;
  Evaluator& eval;
  const std::vector<PreparedExpr>& split_where;
  const std::vector<PreparedExpr>& batch_within;
  const std::vector<PreparedExpr>& batch_item;
  const std::vector<PreparedExpr>& batch_per;
  MatchRecorder* rec = nullptr;  // records the matches when set
};

// The passes of one build, each defined in the file of its job. A function declared
// `inline` here is called only in the file that defines it, as part of a pass's loop:
// `inline` lets the compiler fold it into that loop. Those marked always_inline are the
// per-event and per-candidate steps: when the class was private to one file the compiler
// folded them in because each had a single caller there; as members of a class several
// files share they could be called from elsewhere, and it no longer does on its own.
class Builder {
 public:
  Builder(const Trace& trace, const RuleSet& rules, const BuildOptions& options);
  BuildResult run();

 private:
  // builder.cc: progress, rule errors, the rules indexed per event kind.
  void report(std::string_view phase, uint64_t done, uint64_t total);
  [[noreturn]] void rule_error(const rules::RuleOrigin& origin, std::string message);
  inline KindActions& actions(KindId kind);
  void prepare();

  // builder_scan.cc: every event in trace order.
  [[gnu::always_inline]] inline uint32_t thread_of(const Event& e, uint32_t event_index);
  inline uint32_t span_opener(CutScope& c, const ThreadState& t, SpanId span) const;
  inline uint32_t batch_place(CutScope& c, const ThreadState& t, uint32_t event,
                              uint32_t batch) const;
  inline void record_outside_loop(CutScope& c, ThreadState& t, uint32_t event, uint32_t batch,
                                  const EvalScope& scope);
  [[gnu::always_inline]] inline void close_span(CutScope& c, ThreadState& t, const Event& e,
                                                uint32_t i);
  inline bool flag_event_matches(const Event& e, uint32_t f) const;
  [[gnu::always_inline]] inline const KindActions* cut_event(CutScope& c, ThreadState& t,
                                                             const Event& e, uint32_t i);
  [[gnu::always_inline]] inline void on_event(CutScope& c, uint32_t i);
  inline void track_spans_only(CutScope& c, ThreadState& t, const Event& e, uint32_t i);
  void scan_events();
  bool scan_cuts_in_two_shares();
  void name_threads();
  void count_span_opens();
  void keep_matches(std::vector<MatchRecorder>& shares);

  // builder_replay.cc: a rebuild's cuts from the cut rules' matches.
  bool cuts_from_matches();
  // A new split rule `s` evaluated at the events `names` selects for it (the k-th new
  // rule: its matches into parts[0][k] and parts[1][k], one per CPU); false, with none
  // found, when the lists cannot be used (the scan evaluates it then).
  bool evaluate_selected(const EventNames& names, uint32_t s, Evaluator& second,
                         const PreparedExpr& second_where,
                         std::vector<std::vector<SplitMatch>> (&parts)[2], size_t k);
  inline void replay_split(ThreadState& t, uint32_t rule, const SplitMatch& m);
  inline void replay_batch(ThreadState& t, uint32_t rule, const BatchMatch& m);
  void finish_links();

  // builder_segments.cc: peers cuts, then the segments between all cuts.
  void peer_cuts();
  void merge_peer_cuts();
  uint32_t lay_out_threads();
  void make_segments();
  void fold_cuts();
  bool thread_lists_fit() const;
  bool segments_from_reused();
  void segments_of_changed_thread(const ThreadState& st, const Graph::ThreadSegments* was,
                                  std::span<const uint32_t> events);
  std::vector<PendingPeerCut> reused_peer_cuts() const;

  // builder_edges.cc: edges from link candidates, across cuts and from data flags, or
  // taken from the graph a rebuild reuses.
  inline uint32_t segment_of(uint32_t event) const;
  inline uint32_t reused_segment(uint32_t old_segment, uint32_t event) const;
  template <class Own>
  inline uint32_t from_segment(const rules::EdgeRule& rule, uint32_t event, Own own) const;
  inline void prefetch_events(size_t ci) const;
  inline void prefetch_segments(size_t ci) const;
  struct Classifier;
  void classify_candidates();
  inline void classify_range(Classifier& c, uint64_t begin, uint64_t end,
                             const std::vector<Value>& kind_values, bool reports);
  inline uint8_t search_cost(Classifier& c, uint32_t rule, const EvalScope& scope);
  inline uint32_t first_match(Classifier& c, const std::vector<uint32_t>& rules,
                              const EvalScope& scope);
  void forget_edge_work();
  void reuse_edges();
  inline uint64_t neighbour_cuts() const;
  void neighbour_edges();
  void flag_edges();

  const Trace& trace_;
  const RuleSet& rules_;
  const BuildOptions& options_;
  // parallel_from_, or never when one CPU is all there is (or CAUSEWAY_THREADS=1).
  const uint64_t parallel_from_;
  BuildResult* reuse_;  // BuildOptions::reuse, unless a cut rule calls a Lua hook
  const bool record_;   // BuildOptions::record_matches, unless a cut rule calls a Lua hook
  SpanTree spans_;
  LuaHost lua_;
  Evaluator eval_;
  // Taken (count_span_opens()) before a scan of the events, which sizes the span tree by
  // it; a rebuild that replays its cuts from matches scans nothing and needs none.
  Census census_;
  bool census_taken_ = false;
  ThreadIndex threads_index_;
  BuildResult result_;

  std::vector<KindActions> by_kind_;
  std::vector<SpanId> split_span_;  // per split rule: its `cut SPAN`, else kNoSpan
  std::vector<PreparedExpr> link_from_where_, link_to_where_;  // per link
  std::vector<PreparedExpr> split_where_, batch_within_, batch_item_, batch_per_, link_where_,
      edge_where_, edge_cost_, flag_set_;
  std::vector<SpanId> batch_cut_span_;  // per batch rule: its `cut SPAN`, else kNoSpan
  std::vector<std::unique_ptr<LinkPairer>> pairers_;
  std::vector<std::vector<uint32_t>> link_decide_, link_prune_, link_boost_;
  std::vector<uint16_t> link_kind_, edge_kind_;
  uint16_t split_kind_ = 0;
  std::vector<FlagState> flags_;
  int flag_field_ = -1, addr_field_ = -1, value_field_ = -1;

  LinkFeed* feed_ = nullptr;  // while the scan pairs links on a second thread
  std::vector<ThreadState> threads_;
  std::vector<uint32_t> event_segment_;
  // Once the segments are made (fold_cuts): per segment, the neighbour edge the cut that
  // started it asks for (None for a thread's first). The cuts themselves are freed then.
  std::vector<Neighbour> cut_neighbour_;
  // A rebuild's segments made from the reused graph's (segments_from_reused): per old
  // segment, the new segments holding its first and its last event (kNoSegment for a
  // thread this build lacks).
  std::vector<uint32_t> old_lo_, old_hi_;
  std::vector<Candidate> candidates_;
  std::vector<PendingPeerCut> peer_cuts_;
  std::vector<FlagPair> flag_pairs_;
};

}  // namespace cw::engine::build
