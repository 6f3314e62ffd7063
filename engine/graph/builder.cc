#include "engine/graph/builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "base/parallel.h"
#include "base/source.h"
#include "dsl/rule_kinds.h"
#include "engine/graph/expr_eval.h"
#include "engine/graph/link_pairing.h"
#include "engine/graph/span_tree.h"
#include "engine/graph/thread_slots.h"
#include "rules/lua_host.h"

namespace cw::engine {

namespace {

using rules::Neighbour;
using rules::RuleSet;

constexpr size_t kMaxBatchRules = 64;
constexpr uint64_t kProgressStep = 1u << 20;

// A segment boundary: `event` starts a new segment of its thread.
struct Cut {
  uint32_t event;
  RuleRef rule;
  Neighbour neighbour;
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
  uint32_t segment_base = 0;
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

Census take_census(const Trace& trace, const SpanTree& spans, uint64_t parallel_from) {
  Census parts[2];
  const uint64_t n = trace.events.size();
  in_two_parts(n, n >= parallel_from, [&](uint64_t begin, uint64_t end, int part) {
    Census& c = parts[part];
    for (uint64_t i = begin; i < end; ++i) {
      const Event& e = trace.events[i];
      c.span_opens += spans.opens(e.kind) != kNoSpan;
    }
  });
  return {parts[0].span_opens + parts[1].span_opens};
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
constexpr uint64_t kFlagSkewNs = 1'000'000;
constexpr size_t kMaxEarlyReads = 64;

struct FlagPair {
  uint32_t write, read, rule;
};

std::pair<uint64_t, uint64_t> count_both_over_connections(const Graph& g);

// Link events passed from the scan to the thread that pairs them, in chunks, in order.
class LinkFeed {
 public:
  struct Item {
    uint32_t link;
    EventCtx ctx;
    Pid pid;
    bool as_from, as_to;
  };

  LinkFeed(std::vector<std::unique_ptr<LinkPairer>>& pairers, std::vector<Candidate>& out)
      : pairers_(pairers), out_(out) {
    chunk_.reserve(kChunk);
    thread_ = std::thread([this] { consume(); });
  }
  ~LinkFeed() {
    if (thread_.joinable()) {
      close();
      thread_.join();
    }
  }

  void add(const Item& item) {
    chunk_.push_back(item);
    if (chunk_.size() == kChunk) publish();
  }

  // Waits until every event fed is paired; rethrows what pairing threw.
  void finish() {
    if (!chunk_.empty()) publish();
    close();
    thread_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static constexpr size_t kChunk = 4096;
  static constexpr size_t kMaxReady = 16;  // chunks in flight: the feed's memory is bounded

  void publish() {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return ready_.size() < kMaxReady; });
    ready_.push_back(std::move(chunk_));
    if (!spare_.empty()) {
      chunk_ = std::move(spare_.back());
      spare_.pop_back();
    } else {
      chunk_ = {};
      chunk_.reserve(kChunk);
    }
    lock.unlock();
    work_.notify_one();
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    work_.notify_one();
  }

  void consume() {
    std::vector<Item> chunk;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        if (!chunk.empty() || chunk.capacity() > 0) {
          chunk.clear();
          spare_.push_back(std::move(chunk));
          chunk = {};
        }
        work_.wait(lock, [&] { return !ready_.empty() || closed_; });
        if (ready_.empty()) return;
        chunk = std::move(ready_.front());
        ready_.pop_front();
      }
      room_.notify_one();
      if (error_) continue;  // drain: the scan finds out at finish()
      try {
        for (const Item& it : chunk)
          pairers_[it.link]->on_event(it.ctx, it.pid, out_, it.as_from, it.as_to);
      } catch (...) {
        error_ = std::current_exception();
      }
    }
  }

  std::vector<std::unique_ptr<LinkPairer>>& pairers_;
  std::vector<Candidate>& out_;
  std::vector<Item> chunk_;  // being filled by the scan
  std::mutex mutex_;
  std::condition_variable work_, room_;
  std::deque<std::vector<Item>> ready_;
  std::vector<std::vector<Item>> spare_;
  bool closed_ = false;
  std::exception_ptr error_;  // the pairing thread's only
  std::thread thread_;
};

class Builder {
 public:
  Builder(const Trace& trace, const RuleSet& rules, const BuildOptions& options)
      : trace_(trace),
        rules_(rules),
        options_(options),
        parallel_from_(worker_count() >= 2 ? options.parallel_from : UINT64_MAX),
        reuse_(rules.lua.empty() ? options.reuse : nullptr),
        spans_(trace.schema),
        lua_(rules, options.lua_limits),
        eval_(trace, spans_, &lua_, options.interpret_expressions),
        census_(take_census(trace, spans_, parallel_from_)),
        threads_index_(trace.threads.size()) {
    spans_.reserve(census_.span_opens);
  }

  BuildResult run() {
    prepare();
    if (reuse_) {
      forget_edge_work();
      scan_events();
      peer_cuts_ = reused_peer_cuts();
      result_.peer_cuts = reuse_->peer_cuts;
      merge_peer_cuts();
      make_segments();
      spans_.release();
      reuse_edges();
      event_segment_.clear();
      event_segment_.shrink_to_fit();
    } else {
      scan_events();
      finish_links();
      peer_cuts();
      merge_peer_cuts();
      make_segments();
      classify_candidates();
      spans_.release();  // candidates were the last users of event span contexts
      neighbour_edges();
      flag_edges();
    }
    threads_.clear();
    threads_.shrink_to_fit();
    report("graph", 0, 1);
    result_.graph.build_csr();
    std::tie(result_.stats.over_connections, result_.stats.segment_over_connections) =
        count_both_over_connections(result_.graph);
    report("graph", 1, 1);
    return std::move(result_);
  }

 private:
  void report(std::string_view phase, uint64_t done, uint64_t total) {
    if (options_.progress) options_.progress(phase, done, total);
  }

  [[noreturn]] void rule_error(const rules::RuleOrigin& origin, std::string message) {
    Diagnostic d;
    d.source = origin.source;
    d.loc = origin.loc;
    d.message = std::move(message);
    throw DiagnosticError(std::move(d));
  }

  KindActions& actions(KindId kind) {
    if (kind >= by_kind_.size()) by_kind_.resize(static_cast<size_t>(kind) + 1);
    return by_kind_[kind];
  }

  void prepare() {
    const auto& r = rules_;
    result_.graph.rule_names = RuleNames::from(r);
    auto& counts = result_.counts;
    counts.splits.assign(r.splits.size(), 0);
    counts.batches.assign(r.batches.size(), 0);
    counts.edges.assign(r.edges.size(), 0);
    counts.pruned.assign(r.edges.size(), 0);
    counts.boosted.assign(r.edges.size(), 0);
    counts.flags.assign(r.flags.size(), 0);

    for (uint32_t i = 0; i < r.splits.size(); ++i) {
      const auto& s = r.splits[i];
      split_where_.push_back(eval_.prepare(s.where, s.origin));
      split_span_.push_back(s.cut_span.empty() ? kNoSpan : spans_.span_id(s.cut_span));
      if (!s.origin.active()) continue;  // turned off by another pack's `disable`
      if (s.mode == rules::SplitRule::Mode::AtEvent) {
        if (s.at != kNoKind) actions(s.at).splits.push_back(i);
      } else if (s.link >= r.links.size()) {
        rule_error(s.origin, fmt::format("{} {} names no link",
                                         dsl::rule_keyword(dsl::RuleKind::Split), s.origin.id));
      }
    }
    if (r.batches.size() > kMaxBatchRules)
      rule_error(
          r.batches[kMaxBatchRules].origin,
          fmt::format("too many batch rules: the engine supports at most {}", kMaxBatchRules));
    for (uint32_t i = 0; i < r.batches.size(); ++i) {
      const auto& b = r.batches[i];
      batch_within_.push_back(eval_.prepare(b.within_where, b.origin));
      batch_item_.push_back(eval_.prepare(b.item_where, b.origin));
      if (!b.origin.active()) continue;
      if (b.span_open != kNoKind) actions(b.span_open).batch_opens.push_back(i);
      if (b.item != kNoKind) actions(b.item).batch_items.push_back(i);
    }
    for (uint32_t i = 0; i < r.links.size(); ++i) {
      const auto& l = r.links[i];
      pairers_.push_back(std::make_unique<LinkPairer>(trace_, spans_, l, i, parallel_from_));
      link_where_.push_back(eval_.prepare(l.where, l.origin));
      link_from_where_.push_back(eval_.prepare(l.from_where, l.origin));
      link_to_where_.push_back(eval_.prepare(l.to_where, l.origin));
      if (l.from != kNoKind) actions(l.from).links.push_back(i);
      if (l.to != kNoKind && l.to != l.from) actions(l.to).links.push_back(i);
    }
    link_decide_.resize(r.links.size());
    link_prune_.resize(r.links.size());
    link_boost_.resize(r.links.size());
    link_kind_.resize(r.links.size());
    for (uint32_t i = 0; i < r.links.size(); ++i)
      link_kind_[i] = result_.graph.intern_kind(r.links[i].origin.local);
    for (uint32_t i = 0; i < r.edges.size(); ++i) {
      const auto& e = r.edges[i];
      edge_where_.push_back(eval_.prepare(e.where, e.origin));
      edge_cost_.push_back(eval_.prepare(e.cost, e.origin));
      edge_kind_.push_back(e.kind.empty() ? uint16_t{0xffff} : result_.graph.intern_kind(e.kind));
      if (e.link >= r.links.size())
        rule_error(e.origin, fmt::format("{} {} names no link",
                                         dsl::rule_keyword(dsl::RuleKind::Edge), e.origin.id));
      if (!e.origin.active()) continue;
      switch (e.strength) {
        case rules::Strength::Strong:
        case rules::Strength::Weak: link_decide_[e.link].push_back(i); break;
        case rules::Strength::Prune: link_prune_[e.link].push_back(i); break;
        case rules::Strength::Boost: link_boost_[e.link].push_back(i); break;
      }
    }
    KindId flag_write = trace_.schema.find("flag_write");
    KindId flag_read = trace_.schema.find("flag_read");
    if (flag_write != kNoKind) {
      flag_field_ = trace_.schema.field_index(flag_write, "flag");
      addr_field_ = trace_.schema.field_index(flag_write, "addr");
      value_field_ = trace_.schema.field_index(flag_write, "value");
    }
    for (uint32_t i = 0; i < r.flags.size(); ++i) {
      const auto& f = r.flags[i];
      flag_set_.push_back(eval_.prepare(f.set, f.origin));
      FlagState st;
      st.local = trace_.strings.find(f.origin.local);
      st.qualified = trace_.strings.find(f.origin.id);
      flags_.push_back(std::move(st));
      if (!f.origin.active()) continue;
      if (flag_write != kNoKind) actions(flag_write).flag_writes.push_back(i);
      if (flag_read != kNoKind) actions(flag_read).flag_reads.push_back(i);
    }
    split_kind_ = result_.graph.intern_kind(kSplitKind);
  }

  uint32_t thread_of(const Event& e, uint32_t event_index) {
    uint32_t t = threads_index_.get(e.tid);
    if (t != ThreadIndex::kNone) return t;
    t = static_cast<uint32_t>(threads_.size());
    threads_index_.set(e.tid, t);
    ThreadState st;
    st.tid = e.tid;
    st.pid = trace_.pid_of(e.tid);
    st.first_event = event_index;
    st.batch_loop.assign(rules_.batches.size(), SpanTree::kRoot);
    threads_.push_back(std::move(st));
    return t;
  }

  // A thread's first event already starts a segment; two rules cutting at the same
  // event make one cut, the first rule's.
  static void add_cut(ThreadState& t, uint32_t event, RuleRef rule, Neighbour neighbour) {
    if (event == t.first_event) return;
    if (!t.cuts.empty() && t.cuts.back().event == event) return;
    t.cuts.push_back({event, rule, neighbour});
  }

  // `cut SPAN`: before the event that opened the innermost open SPAN (a blocking call's
  // entry, cut only once the call blocks). A cut already made inside that span stands.
  void cut_at_span_opener(ThreadState& t, SpanId span, RuleRef rule, Neighbour neighbour) {
    uint32_t node = span == kNoSpan ? SpanTree::kRoot : spans_.innermost(t.node, span);
    if (node == SpanTree::kRoot) return;
    uint32_t opener = spans_.at(node).opener;
    if (!t.cuts.empty() && t.cuts.back().event > opener) return;
    add_cut(t, opener, rule, neighbour);
  }

  bool flag_event_matches(const Event& e, uint32_t f) const {
    const FlagState& st = flags_[f];
    if (flag_field_ >= 0) {
      StrId name = static_cast<StrId>(trace_.value(e, flag_field_));
      if (name != 0 && (name == st.local || name == st.qualified)) return true;
    }
    uint64_t address = rules_.flags[f].address;
    return address != 0 && addr_field_ >= 0 && trace_.value(e, addr_field_) == address;
  }

  void on_event(uint32_t i) {
    const Event& e = trace_.events[i];
    ThreadState& t = threads_[thread_of(e, i)];
    if (t.pending_after.kind != kNoRuleKind) {
      add_cut(t, i, t.pending_after, t.pending_neighbour);
      t.pending_after = {};
    }
    if (e.kind >= by_kind_.size() || !by_kind_[e.kind].any()) {
      track_spans_only(t, e, i);
      return;
    }
    const KindActions& act = by_kind_[e.kind];
    SpanId opens = spans_.opens(e.kind);
    if (opens != kNoSpan) {
      uint32_t parent = t.node;
      t.node = spans_.push(parent, i, opens);
      if (t.node != parent && !act.batch_opens.empty()) {
        uint64_t bits = 0;
        EvalScope scope{{i, t.node}, {}, {}};
        for (uint32_t b : act.batch_opens)
          if (eval_.test(batch_within_[b], scope)) bits |= uint64_t{1} << b;
        spans_.add_batch_bits(t.node, bits);
      }
    }
    EventCtx ctx{i, t.node};
    EvalScope scope{ctx, {}, {}};
    // Batch items first: when a declared loop boundary and a split rule cut at the same
    // event, the cut is the batch rule's (add_cut keeps the first).
    for (uint32_t b : act.batch_items) {
      uint64_t bit = uint64_t{1} << b;
      if (!(spans_.at(t.node).batch_mask & bit) || !eval_.test(batch_item_[b], scope)) continue;
      // The loop instance: the outermost open span that matched the batch's `within`.
      uint32_t loop = t.node;
      while (spans_.at(spans_.at(loop).parent).batch_mask & bit) loop = spans_.at(loop).parent;
      Neighbour neighbour = t.batch_loop[b] == loop ? rules_.batches[b].neighbour : Neighbour::None;
      t.batch_loop[b] = loop;
      add_cut(t, i, {RuleKind::Batch, b}, neighbour);
    }
    for (uint32_t s : act.splits) {
      const auto& rule = rules_.splits[s];
      if (!eval_.test(split_where_[s], scope)) continue;
      if (!rule.cut_span.empty()) {
        cut_at_span_opener(t, split_span_[s], {RuleKind::Split, s}, rule.neighbour);
      } else if (rule.cut_after) {
        if (t.pending_after.kind == kNoRuleKind) {
          t.pending_after = {RuleKind::Split, s};
          t.pending_neighbour = rule.neighbour;
        }
      } else {
        add_cut(t, i, {RuleKind::Split, s}, rule.neighbour);
      }
    }
    for (uint32_t l : act.links) {
      const rules::LinkRule& link = rules_.links[l];
      const bool as_from = e.kind == link.from && eval_.test(link_from_where_[l], scope);
      const bool as_to = e.kind == link.to && eval_.test(link_to_where_[l], scope);
      if (!as_from && !as_to) continue;
      if (feed_)
        feed_->add({l, ctx, t.pid, as_from, as_to});
      else
        pairers_[l]->on_event(ctx, t.pid, candidates_, as_from, as_to);
    }
    for (uint32_t f : act.flag_writes) {
      if (!flag_event_matches(e, f)) continue;
      FlagState& st = flags_[f];
      uint64_t value = value_field_ >= 0 ? trace_.value(e, value_field_) : 0;
      bool sets = rules_.flags[f].set.empty() ? value != 0 : eval_.test(flag_set_[f], scope);
      st.active = sets;
      st.write = i;
      st.writer = e.tid;
      st.value = value;
      st.readers.clear();
      if (sets) {
        for (const FlagState::EarlyRead& r : st.early) {
          if (r.value != value || r.tid == e.tid || trace_.events[r.event].ts + kFlagSkewNs < e.ts)
            continue;
          if (std::find(st.readers.begin(), st.readers.end(), r.tid) != st.readers.end()) continue;
          st.readers.push_back(r.tid);
          flag_pairs_.push_back({i, r.event, f});
        }
      }
      st.early.clear();
    }
    for (uint32_t f : act.flag_reads) {
      FlagState& st = flags_[f];
      if (!flag_event_matches(e, f)) continue;
      uint64_t value = value_field_ >= 0 ? trace_.value(e, value_field_) : 0;
      if (value != st.value) {
        // Not the value the last write stored: perhaps a write not recorded yet.
        if (st.early.size() == kMaxEarlyReads) st.early.erase(st.early.begin());
        st.early.push_back({i, e.tid, value});
        continue;
      }
      if (!st.active || e.tid == st.writer) continue;
      if (std::find(st.readers.begin(), st.readers.end(), e.tid) != st.readers.end()) continue;
      st.readers.push_back(e.tid);
      flag_pairs_.push_back({st.write, i, f});
    }
    SpanId closes = spans_.closes(e.kind);
    if (closes != kNoSpan) t.node = spans_.pop(t.node, closes);
    t.last_event = i;
  }

  void track_spans_only(ThreadState& t, const Event& e, uint32_t i) {
    SpanId opens = spans_.opens(e.kind);
    if (opens != kNoSpan) t.node = spans_.push(t.node, i, opens);
    SpanId closes = spans_.closes(e.kind);
    if (closes != kNoSpan) t.node = spans_.pop(t.node, closes);
    t.last_event = i;
  }

  static constexpr uint32_t kValuesAhead = 16;
  void scan_events() {
    const uint64_t n = trace_.events.size();
    if (n >= kNoEvent) throw std::length_error("trace has too many events for the graph");
    report("events", 0, n);
    // Pairing runs on a second thread, fed the link events in trace order, so candidates
    // come out as a single thread makes them. It reads the span tree (joins on a span's
    // field) while this thread grows it: safe only because the tree was sized by the
    // census and never moves, and each node is written before any event naming it is fed.
    std::optional<LinkFeed> feed;
    if (n >= parallel_from_ && !pairers_.empty() && spans_.room() >= census_.span_opens) {
      feed.emplace(pairers_, candidates_);
      feed_ = &*feed;
    }
    try {
      for (uint32_t i = 0; i < n; ++i) {
        // Rules read the fields of most events they see: ask for those values ahead (the
        // values array is walked in order, but sparsely).
        if (i + kValuesAhead < n)
          __builtin_prefetch(&trace_.values[trace_.events[i + kValuesAhead].values]);
        on_event(i);
        if ((i + 1) % kProgressStep == 0) report("events", i + 1, n);
      }
    } catch (...) {
      feed_ = nullptr;
      feed.reset();  // stops and joins the pairing thread
      throw;
    }
    if (feed) {
      feed_ = nullptr;
      feed->finish();  // rethrows what pairing threw
    }
    report("events", n, n);
  }

  void finish_links() {
    report("links", 0, pairers_.size());
    for (auto& p : pairers_) p->finish(candidates_);
    pairers_.clear();
    // Keep the candidates whose link `where` holds.
    size_t kept = 0;
    for (const Candidate& c : candidates_) {
      const auto& where = link_where_[c.link];
      if (!where.empty() && !eval_.test(where, {{}, c.from, c.to})) continue;
      candidates_[kept++] = c;
    }
    candidates_.resize(kept);
    candidates_.shrink_to_fit();
    result_.stats.candidates = kept;
    report("links", 1, 1);
  }

  // `split … peers LINK`: cut between consecutive ends of LINK's candidates on a thread
  // whose peer processes are disjoint (the Argus paper, §4.2).
  void peer_cuts() {
    for (uint32_t s = 0; s < rules_.splits.size(); ++s) {
      const auto& rule = rules_.splits[s];
      if (rule.mode != rules::SplitRule::Mode::Peers || !rule.origin.active()) continue;
      report("peers", s, rules_.splits.size());
      struct End {
        uint32_t thread;
        EventCtx ctx;
        Pid peer;
      };
      std::vector<End> ends;
      for (const Candidate& c : candidates_) {
        if (c.link != rule.link) continue;
        uint32_t tf = threads_index_.get(trace_.events[c.from.event].tid);
        uint32_t tt = threads_index_.get(trace_.events[c.to.event].tid);
        ends.push_back({tf, c.from, threads_[tt].pid});
        ends.push_back({tt, c.to, threads_[tf].pid});
      }
      auto by_thread_event_peer = [](const End& a, const End& b) {
        return a.thread != b.thread         ? a.thread < b.thread
               : a.ctx.event != b.ctx.event ? a.ctx.event < b.ctx.event
                                            : a.peer < b.peer;
      };
      // Ends equal in this order are equal in every field (one event has one context):
      // sorting the halves on two threads and merging them gives the single sort's order.
      in_two_parts(ends.size(), ends.size() >= parallel_from_,
                   [&](uint64_t begin, uint64_t end, int) {
                     std::sort(ends.begin() + begin, ends.begin() + end, by_thread_event_peer);
                   });
      if (ends.size() >= parallel_from_ && ends.size() >= 2)
        std::inplace_merge(ends.begin(), ends.begin() + ends.size() / 2, ends.end(),
                           by_thread_event_peer);
      // Each group of equal (thread, event) is one event's peer set, sorted.
      size_t prev_begin = 0, prev_end = 0;
      for (size_t begin = 0; begin < ends.size();) {
        size_t end = begin;
        while (end < ends.size() && ends[end].thread == ends[begin].thread &&
               ends[end].ctx.event == ends[begin].ctx.event)
          ++end;
        bool same_thread = prev_end > 0 && ends[prev_begin].thread == ends[begin].thread;
        if (same_thread && disjoint(ends, prev_begin, prev_end, begin, end) &&
            eval_.test(split_where_[s], {ends[begin].ctx, {}, {}}))
          peer_cuts_.push_back(
              {ends[begin].thread, {ends[begin].ctx.event, {RuleKind::Split, s}, rule.neighbour}});
        prev_begin = begin;
        prev_end = end;
        begin = end;
      }
    }
    result_.peer_cuts.reserve(peer_cuts_.size());
    for (const auto& [thread, cut] : peer_cuts_)
      result_.peer_cuts.push_back({thread, cut.event, cut.rule.index, cut.neighbour});
  }

  // The peers cuts join each thread's own cuts.
  void merge_peer_cuts() {
    if (peer_cuts_.empty()) return;
    // Merge into the threads' cuts; a cut already made at the same event stays.
    // A thread's own cuts are in event order, and so are the peer cuts of one rule: then
    // merging the two runs gives what a stable sort would, in one linear pass.
    std::vector<uint32_t> own_cuts(threads_.size());
    for (uint32_t t = 0; t < threads_.size(); ++t)
      own_cuts[t] = static_cast<uint32_t>(threads_[t].cuts.size());
    for (const auto& [thread, cut] : peer_cuts_) threads_[thread].cuts.push_back(cut);
    auto by_event = [](const Cut& a, const Cut& b) { return a.event < b.event; };
    for (uint32_t ti = 0; ti < threads_.size(); ++ti) {
      ThreadState& t = threads_[ti];
      auto mid = t.cuts.begin() + own_cuts[ti];
      if (std::is_sorted(t.cuts.begin(), mid, by_event) &&
          std::is_sorted(mid, t.cuts.end(), by_event))
        std::inplace_merge(t.cuts.begin(), mid, t.cuts.end(), by_event);
      else
        std::stable_sort(t.cuts.begin(), t.cuts.end(), by_event);
      auto last = std::unique(t.cuts.begin(), t.cuts.end(),
                              [](const Cut& a, const Cut& b) { return a.event == b.event; });
      t.cuts.erase(last, t.cuts.end());
      std::erase_if(t.cuts, [&](const Cut& c) { return c.event == t.first_event; });
    }
    peer_cuts_.clear();
    peer_cuts_.shrink_to_fit();
  }

  template <class Ends>
  static bool disjoint(const Ends& ends, size_t a0, size_t a1, size_t b0, size_t b1) {
    while (a0 < a1 && b0 < b1) {
      if (ends[a0].peer == ends[b0].peer) return false;
      if (ends[a0].peer < ends[b0].peer)
        ++a0;
      else
        ++b0;
    }
    return true;
  }

  void make_segments() {
    report("segments", 0, trace_.events.size());
    Graph& g = result_.graph;
    // Threads by tid, each with a contiguous run of segments.
    std::vector<uint32_t> order(threads_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return threads_[a].tid < threads_[b].tid; });
    uint32_t total = 0;
    for (uint32_t t : order) {
      ThreadState& st = threads_[t];
      st.segment_base = total;
      uint32_t count = static_cast<uint32_t>(st.cuts.size()) + 1;
      g.threads.push_back({st.tid, total, total + count});
      total += count;
      result_.stats.cuts += st.cuts.size();
      for (const Cut& c : st.cuts) {
        if (c.rule.kind == RuleKind::Split) ++result_.counts.splits[c.rule.index];
        if (c.rule.kind == RuleKind::Batch) ++result_.counts.batches[c.rule.index];
      }
    }
    g.segments.resize(total);
    for (const ThreadState& st : threads_) {
      Segment& s = g.segments[st.segment_base];
      s.tid = st.tid;
      s.pid = st.pid;
      s.first = st.first_event;
      for (size_t k = 0; k < st.cuts.size(); ++k) {
        Segment& next = g.segments[st.segment_base + k + 1];
        next.tid = st.tid;
        next.pid = st.pid;
        next.first = st.cuts[k].event;
        next.cut_rule = st.cuts[k].rule;
      }
    }
    // One pass: each event's segment (4 bytes an event, freed once edges are made, saves
    // a binary search per edge end) and each segment's last event. In two halves of the
    // events: the second starts each thread at its first cut at or after the half, and
    // notes the last events it sees apart (a segment may span both halves: its last is
    // the second half's).
    const uint64_t n = trace_.events.size();
    event_segment_.resize(n);
    std::vector<uint32_t> late_last;
    in_two_parts(n, n >= parallel_from_, [&](uint64_t begin, uint64_t end, int part) {
      std::vector<uint32_t> cursor(threads_.size(), 0);
      if (part == 1) {
        for (uint32_t t = 0; t < threads_.size(); ++t) {
          const auto& cuts = threads_[t].cuts;
          cursor[t] = static_cast<uint32_t>(
              std::lower_bound(cuts.begin(), cuts.end(), begin,
                               [](const Cut& c, uint64_t e) { return c.event < e; }) -
              cuts.begin());
        }
        late_last.assign(g.segments.size(), kNoEvent);
      }
      uint32_t* last = part == 1 ? late_last.data() : nullptr;
      const uint64_t scale = end > begin ? n / (end - begin) : 1;
      for (uint64_t ev = begin; ev < end; ++ev) {
        const auto i = static_cast<uint32_t>(ev);
        uint32_t t = threads_index_.get(trace_.events[i].tid);
        const ThreadState& st = threads_[t];
        uint32_t& k = cursor[t];
        if (k < st.cuts.size() && st.cuts[k].event == i) ++k;
        uint32_t seg = st.segment_base + k;
        event_segment_[i] = seg;
        (last ? last[seg] : g.segments[seg].last) = i;
        if (part == 0 && (i + 1) % kProgressStep == 0)
          report("segments", std::min(n - 1, (i + 1) * scale), n);
      }
    });
    for (uint32_t s = 0; s < late_last.size(); ++s)
      if (late_last[s] != kNoEvent) g.segments[s].last = late_last[s];
    for (const ThreadState& st : threads_) {
      uint32_t end = st.segment_base + static_cast<uint32_t>(st.cuts.size()) + 1;
      for (uint32_t s = st.segment_base; s < end; ++s) {
        Segment& seg = g.segments[s];
        seg.start_ns = trace_.events[seg.first].ts;
        seg.end_ns =
            s + 1 < end ? trace_.events[g.segments[s + 1].first].ts : trace_.events[seg.last].ts;
      }
    }
    report("segments", n, n);
  }

  uint32_t segment_of(uint32_t event) const { return event_segment_[event]; }

  static constexpr uint32_t kNoSegment = 0xffffffffu;

  // The segment an edge of `rule` leaves from: its from event's, or with `from_thread`,
  // the segment of the thread that field names (when not 0) at the from event's time,
  // kNoSegment when that thread has none then (unrecorded, or not started yet).
  uint32_t from_segment(const rules::EdgeRule& rule, uint32_t event) const {
    if (rule.from_thread < 0) return segment_of(event);
    const Event& ev = trace_.events[event];
    const uint64_t value = trace_.value(ev, rule.from_thread);
    if (value == 0 || value == ev.tid) return segment_of(event);
    if (value > std::numeric_limits<Tid>::max()) return kNoSegment;
    const uint32_t t = threads_index_.get(static_cast<Tid>(value));
    if (t == ThreadIndex::kNone) return kNoSegment;
    const ThreadState& st = threads_[t];
    const auto& segments = result_.graph.segments;
    const uint32_t first = st.segment_base;
    const uint32_t end = first + static_cast<uint32_t>(st.cuts.size()) + 1;
    if (ev.ts < segments[first].start_ns) return kNoSegment;
    // The last of the thread's segments that started at or before the event.
    uint32_t lo = first, hi = end;
    while (hi - lo > 1) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (segments[mid].start_ns <= ev.ts)
        lo = mid;
      else
        hi = mid;
    }
    return lo;
  }

  // Candidates name events all over the trace (a stream's pairs come in key order): asking
  // for a later candidate's events and segments ahead overlaps those cache misses.
  static constexpr size_t kPrefetchAhead = 16;
  void prefetch_events(size_t ci) const {
    if (ci >= candidates_.size()) return;
    const Candidate& c = candidates_[ci];
    __builtin_prefetch(&trace_.events[c.from.event]);
    __builtin_prefetch(&trace_.events[c.to.event]);
  }
  void prefetch_segments(size_t ci) const {
    if (ci >= candidates_.size()) return;
    const Candidate& c = candidates_[ci];
    __builtin_prefetch(&event_segment_[c.from.event]);
    __builtin_prefetch(&event_segment_[c.to.event]);
  }

  // What one worker of classify_candidates learns from its range of candidates. Each has
  // its own evaluator and prepared expressions: their caches are not shared.
  struct Classifier {
    Evaluator* eval = nullptr;
    const std::vector<PreparedExpr>* where = nullptr;  // per edge rule
    const std::vector<PreparedExpr>* cost = nullptr;
    Edge* out = nullptr;  // where its edges go, in candidate order
    uint64_t kept = 0;
    uint64_t unclassified = 0, pruned = 0, boosted = 0;
    std::vector<uint64_t> edges, pruned_by, boosted_by;  // per edge rule
  };

  void classify_candidates() {
    const uint64_t n = candidates_.size();
    report("edges", 0, n);
    auto& edges = result_.graph.edges;
    // Room for every edge the build adds (neighbour and flag edges follow): growing the
    // vector past its reservation would copy it while holding it twice.
    edges.reserve(n + neighbour_cuts() + flag_pairs_.size());
    // Kind labels as values for `edge.kind`, resolved against the trace's strings once.
    const auto& kinds = result_.graph.kinds;
    std::vector<Value> kind_values(kinds.size());
    for (size_t k = 0; k < kinds.size(); ++k) {
      StrId id = trace_.strings.find(kinds[k]);
      kind_values[k] = {rules::ValueType::Str, id, kinds[k].c_str()};
    }
    // Each candidate makes at most one edge, and edges keep candidate order: two workers
    // classify the two halves (the machine has two cores), each writing its edges from
    // the slot of its first candidate; the second's are then moved down behind the
    // first's. Lua hooks run single-threaded, so packs with Lua classify on one thread.
    const bool parallel = n >= parallel_from_ && n >= 2 && rules_.lua.empty();
    edges.resize(n);
    auto classifier = [&](Evaluator* ev, const std::vector<PreparedExpr>* where,
                          const std::vector<PreparedExpr>* cost, uint64_t first) {
      Classifier c;
      c.eval = ev;
      c.where = where;
      c.cost = cost;
      c.out = edges.data() + first;
      c.edges.assign(rules_.edges.size(), 0);
      c.pruned_by.assign(rules_.edges.size(), 0);
      c.boosted_by.assign(rules_.edges.size(), 0);
      return c;
    };
    const uint64_t mid = parallel ? n / 2 : n;
    std::vector<Classifier> workers;
    workers.push_back(classifier(&eval_, &edge_where_, &edge_cost_, 0));
    // The second worker's evaluator and expressions, prepared here: preparing may throw.
    std::optional<Evaluator> second_eval;
    std::vector<PreparedExpr> second_where, second_cost;
    if (parallel) {
      second_eval.emplace(trace_, spans_, nullptr, options_.interpret_expressions);
      for (const auto& e : rules_.edges) {
        second_where.push_back(second_eval->prepare(e.where, e.origin));
        second_cost.push_back(second_eval->prepare(e.cost, e.origin));
      }
      workers.push_back(classifier(&*second_eval, &second_where, &second_cost, mid));
    }
    in_two_parts(n, parallel, [&](uint64_t begin, uint64_t end, int part) {
      classify_range(workers[part], begin, end, kind_values, part == 0);
    });
    uint64_t kept = workers[0].kept;
    if (parallel) {
      std::copy(edges.begin() + mid, edges.begin() + mid + workers[1].kept, edges.begin() + kept);
      kept += workers[1].kept;
    }
    edges.resize(kept);
    for (const Classifier& c : workers) {
      result_.stats.unclassified += c.unclassified;
      result_.stats.pruned += c.pruned;
      result_.stats.boosted += c.boosted;
      for (size_t r = 0; r < rules_.edges.size(); ++r) {
        result_.counts.edges[r] += c.edges[r];
        result_.counts.pruned[r] += c.pruned_by[r];
        result_.counts.boosted[r] += c.boosted_by[r];
      }
    }
    candidates_.clear();
    candidates_.shrink_to_fit();
    report("edges", n, n);
  }

  // Classifies candidates [begin, end) into c.out. `reports`: this worker reports progress
  // (the caller's thread only); with two workers its half stands for the whole.
  void classify_range(Classifier& c, uint64_t begin, uint64_t end,
                      const std::vector<Value>& kind_values, bool reports) {
    const uint64_t n = candidates_.size();
    const uint64_t scale = end > begin ? n / (end - begin) : 1;
    for (uint64_t ci = begin; ci < end; ++ci) {
      if (ci + kPrefetchAhead < end) {
        prefetch_events(ci + kPrefetchAhead);
        prefetch_segments(ci + kPrefetchAhead);
      }
      const Candidate& cand = candidates_[ci];
      EvalScope scope{{}, cand.from, cand.to};
      uint32_t decided = kNoRule, from = kNoSegment;
      // A rule whose `from_thread` names a thread with no segment then does not decide.
      for (uint32_t r : link_decide_[cand.link])
        if (c.eval->test((*c.where)[r], scope) &&
            (from = from_segment(rules_.edges[r], cand.from.event)) != kNoSegment) {
          decided = r;
          break;
        }
      if (reports && (ci + 1 - begin) % kProgressStep == 0)
        report("edges", std::min(n - 1, (ci + 1 - begin) * scale), n);
      if (decided == kNoRule) {
        ++c.unclassified;
        continue;
      }
      const auto& rule = rules_.edges[decided];
      Edge e;
      e.from = from;
      e.to = segment_of(cand.to.event);
      e.from_event = cand.from.event;
      e.to_event = cand.to.event;
      e.kind = edge_kind_[decided] != 0xffff ? edge_kind_[decided] : link_kind_[cand.link];
      e.rule = {RuleKind::Edge, decided};
      e.link = cand.link;
      e.strength = rule.strength == rules::Strength::Strong ? Strength::Strong : Strength::Weak;
      if (e.strength == Strength::Weak) {
        scope.edge_kind = &kind_values[e.kind];
        uint32_t pruned = first_match(c, link_prune_[cand.link], scope);
        if (pruned != kNoRule) {
          ++c.pruned_by[pruned];
          ++c.pruned;
          continue;
        }
        uint32_t boosted = first_match(c, link_boost_[cand.link], scope);
        if (boosted != kNoRule) {
          e.strength = Strength::Boosted;
          e.boost_rule = boosted;
          if (!(*c.cost)[boosted].empty()) e.cost = search_cost(c, boosted, scope);
          ++c.boosted_by[boosted];
          ++c.boosted;
        }
      }
      if (e.cost == Edge::kDefaultCost && !(*c.cost)[decided].empty())
        e.cost = search_cost(c, decided, scope);
      ++c.edges[decided];
      c.out[c.kept++] = e;
    }
  }

  // An edge rule's `cost` clause for this candidate; negative costs are a rule error, since
  // the searches add costs along a path and prefer the cheapest.
  uint8_t search_cost(Classifier& c, uint32_t rule, const EvalScope& scope) {
    Value v = c.eval->eval((*c.cost)[rule], scope);
    if (v.type != rules::ValueType::Int || v.i < 0 || v.i >= Edge::kDefaultCost)
      rule_error(rules_.edges[rule].origin,
                 fmt::format("edge {}: cost must be an integer from 0 to 254, got {}",
                             rules_.edges[rule].origin.id,
                             v.type == rules::ValueType::Int ? std::to_string(v.i) : "no integer"));
    return static_cast<uint8_t>(v.i);
  }

  uint32_t first_match(Classifier& c, const std::vector<uint32_t>& rules, const EvalScope& scope) {
    for (uint32_t r : rules)
      if (c.eval->test((*c.where)[r], scope)) return r;
    return kNoRule;
  }

  // ---- a rebuild of the cuts only (BuildOptions::reuse) ----

  // The scan makes no link candidates and no flag pairs: the reused graph has their
  // edges.
  void forget_edge_work() {
    for (KindActions& a : by_kind_) {
      a.links.clear();
      a.flag_writes.clear();
      a.flag_reads.clear();
    }
    pairers_.clear();
  }

  // The reused build's peers cuts, as it made them (checked: they name this trace's threads
  // and events, and peers rules of these rules).
  std::vector<std::pair<uint32_t, Cut>> reused_peer_cuts() const {
    std::vector<std::pair<uint32_t, Cut>> out;
    out.reserve(reuse_->peer_cuts.size());
    for (const PeerCut& p : reuse_->peer_cuts) {
      if (p.thread >= threads_.size() || p.event >= trace_.events.size() ||
          p.rule >= rules_.splits.size() ||
          rules_.splits[p.rule].mode != rules::SplitRule::Mode::Peers ||
          threads_index_.get(trace_.events[p.event].tid) != p.thread)
        throw std::invalid_argument("the graph to reuse is not of this trace and these rules");
      out.push_back({p.thread, {p.event, {RuleKind::Split, p.rule}, p.neighbour}});
    }
    return out;
  }

  // The reused graph's link edges and flag edges, in its order, their ends mapped to this
  // build's segments, around this build's neighbour edges (a whole build's order: link
  // edges, neighbour edges, flag edges); its counts of those rules are this build's. The
  // link edges are mapped where they are, in the reused graph's vector, which becomes
  // this graph's.
  void reuse_edges() {
    Graph& old = reuse_->graph;
    Graph& g = result_.graph;
    if (old.kinds.size() < g.kinds.size() ||
        !std::equal(g.kinds.begin(), g.kinds.end(), old.kinds.begin()))
      throw std::invalid_argument("the graph to reuse has other edge kinds");
    const uint64_t n = trace_.events.size();
    std::vector<Edge> flags;
    flags.reserve(reuse_->stats.flag_edges);
    std::vector<Edge>& edges = old.edges;
    size_t kept = 0;
    for (size_t i = 0; i < edges.size(); ++i) {
      Edge e = edges[i];
      if (e.rule.kind != RuleKind::Edge && e.rule.kind != RuleKind::Flag) continue;
      if (e.from_event >= n || e.to_event >= n)
        throw std::invalid_argument("the graph to reuse names events this trace does not have");
      if (e.rule.kind == RuleKind::Edge) {
        if (e.rule.index >= rules_.edges.size())
          throw std::invalid_argument("the graph to reuse names edge rules these rules lack");
        e.from = from_segment(rules_.edges[e.rule.index], e.from_event);
        if (e.from == kNoSegment)
          throw std::invalid_argument(
              "the graph to reuse has an edge from a thread this trace lacks");
      } else {
        e.from = segment_of(e.from_event);
      }
      e.to = segment_of(e.to_event);
      if (e.rule.kind == RuleKind::Flag)
        flags.push_back(e);
      else
        edges[kept++] = e;
    }
    edges.resize(kept);
    g.edges = std::move(edges);
    // Room for the rest at once (a fresh copy only when there are more than the reused
    // graph had room for).
    g.edges.reserve(kept + neighbour_cuts() + flags.size());
    neighbour_edges();
    // Flag kinds are interned as flag edges are made, as flag_edges() does.
    for (Edge& e : flags) {
      e.kind = g.intern_kind(old.kinds.at(e.kind));
      g.edges.push_back(e);
    }
    result_.counts.edges = reuse_->counts.edges;
    result_.counts.pruned = reuse_->counts.pruned;
    result_.counts.boosted = reuse_->counts.boosted;
    result_.counts.flags = reuse_->counts.flags;
    const BuildStats& st = reuse_->stats;
    result_.stats.candidates = st.candidates;
    result_.stats.unclassified = st.unclassified;
    result_.stats.pruned = st.pruned;
    result_.stats.boosted = st.boosted;
    result_.stats.flag_edges = st.flag_edges;
    result_.stats.data_flags_used = st.data_flags_used;
  }

  // The edges neighbour_edges() will add.
  uint64_t neighbour_cuts() const {
    uint64_t n = 0;
    for (const ThreadState& st : threads_)
      for (const Cut& c : st.cuts) n += c.neighbour != Neighbour::None;
    return n;
  }

  void neighbour_edges() {
    Graph& g = result_.graph;
    for (const ThreadState& st : threads_) {
      for (size_t k = 0; k < st.cuts.size(); ++k) {
        const Cut& c = st.cuts[k];
        if (c.neighbour == Neighbour::None) continue;
        Edge e;
        e.from = st.segment_base + static_cast<uint32_t>(k);
        e.to = e.from + 1;
        e.from_event = g.segments[e.from].last;
        e.to_event = c.event;
        e.kind = split_kind_;
        e.strength = c.neighbour == Neighbour::Strong ? Strength::Strong : Strength::Weak;
        e.rule = c.rule;
        g.edges.push_back(e);
      }
    }
  }

  void flag_edges() {
    Graph& g = result_.graph;
    for (const FlagPair& p : flag_pairs_) {
      const auto& rule = rules_.flags[p.rule];
      Edge e;
      e.from = segment_of(p.write);
      e.to = segment_of(p.read);
      e.from_event = p.write;
      e.to_event = p.read;
      e.kind = g.intern_kind(rule.kind.empty() ? std::string_view("flag") : rule.kind);
      e.strength = rule.strength == rules::Strength::Weak ? Strength::Weak : Strength::Strong;
      e.rule = {RuleKind::Flag, p.rule};
      g.edges.push_back(e);
      ++result_.counts.flags[p.rule];
      ++result_.stats.flag_edges;
    }
    for (uint64_t n : result_.counts.flags)
      if (n > 0) ++result_.stats.data_flags_used;
    event_segment_.clear();
    event_segment_.shrink_to_fit();
  }

  const Trace& trace_;
  const RuleSet& rules_;
  const BuildOptions& options_;
  // parallel_from_, or never when one CPU is all there is (or CAUSEWAY_THREADS=1).
  const uint64_t parallel_from_;
  BuildResult* reuse_;  // BuildOptions::reuse, unless packs have Lua hooks
  SpanTree spans_;
  LuaHost lua_;
  Evaluator eval_;
  Census census_;
  ThreadIndex threads_index_;
  BuildResult result_;

  std::vector<KindActions> by_kind_;
  std::vector<SpanId> split_span_;  // per split rule: its `cut SPAN`, else kNoSpan
  std::vector<PreparedExpr> link_from_where_, link_to_where_;  // per link
  std::vector<PreparedExpr> split_where_, batch_within_, batch_item_, link_where_, edge_where_,
      edge_cost_, flag_set_;
  std::vector<std::unique_ptr<LinkPairer>> pairers_;
  std::vector<std::vector<uint32_t>> link_decide_, link_prune_, link_boost_;
  std::vector<uint16_t> link_kind_, edge_kind_;
  uint16_t split_kind_ = 0;
  std::vector<FlagState> flags_;
  int flag_field_ = -1, addr_field_ = -1, value_field_ = -1;

  LinkFeed* feed_ = nullptr;  // while the scan pairs links on a second thread
  std::vector<ThreadState> threads_;
  std::vector<uint32_t> event_segment_;
  std::vector<Candidate> candidates_;
  std::vector<std::pair<uint32_t, Cut>> peer_cuts_;
  std::vector<FlagPair> flag_pairs_;
};

}  // namespace

BuildResult build_graph(const Trace& trace, const rules::RuleSet& rules,
                        const BuildOptions& options) {
  return Builder(trace, rules, options).run();
}

namespace {

uint16_t split_kind(const Graph& g) {
  for (uint32_t k = 0; k < g.kinds.size(); ++k)
    if (g.kinds[k] == kSplitKind) return static_cast<uint16_t>(k);
  return 0xffffu;
}

// Both over-connection counts (BuildStats) in one sequential walk of the CSR: per vertex,
// the distinct other processes met through counted edges are stamped per segment and per
// request (a run of segments joined by neighbour edges), instead of listing and sorting
// (group, process) pairs. Random reads go to small arrays: a 2-byte process number per
// vertex and one flag byte per CSR slot.
std::pair<uint64_t, uint64_t> count_both_over_connections(const Graph& g) {
  CsrGraph rebuilt;
  const CsrGraph* csr = &g.csr;
  if (num_vertices(g.csr) != g.segments.size() || num_edges(g.csr) != g.edges.size()) {
    Graph copy;  // a graph whose csr was not built (or is stale): build one for counting
    copy.segments = g.segments;
    copy.edges = g.edges;
    copy.build_csr();
    rebuilt = std::move(copy.csr);
    csr = &rebuilt;
  }
  const auto& forward = csr->m_forward;
  const auto& backward = csr->m_backward;
  const auto n = static_cast<uint32_t>(g.segments.size());
  const uint16_t split = split_kind(g);

  // Dense process numbers: consecutive segments almost always share a process.
  std::vector<Pid> pids;
  for (const Segment& s : g.segments)
    if (pids.empty() || pids.back() != s.pid) pids.push_back(s.pid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  std::vector<uint32_t> process32;
  std::vector<uint16_t> process16;
  const bool narrow = pids.size() <= 0xffff;
  (narrow ? process16.resize(n) : process32.resize(n));
  uint32_t p = 0;
  for (uint32_t v = 0; v < n; ++v) {
    Pid pid = g.segments[v].pid;
    if (v == 0 || g.segments[v - 1].pid != pid)
      p = static_cast<uint32_t>(std::lower_bound(pids.begin(), pids.end(), pid) - pids.begin());
    if (narrow)
      process16[v] = static_cast<uint16_t>(p);
    else
      process32[v] = p;
  }
  auto process = [&](uint32_t v) -> uint32_t { return narrow ? process16[v] : process32[v]; };

  // Per forward CSR slot: bit 0 counts for segments, bit 1 for requests.
  constexpr uint8_t kSegment = 1, kRequest = 2;
  std::vector<uint8_t> starts_request(n, 1), slot_flags(g.edges.size());
  for (const Edge& e : g.edges)
    if (e.kind == split && e.to == e.from + 1) starts_request[e.to] = 0;
  for (size_t k = 0; k < slot_flags.size(); ++k) {
    const Edge& e = g.edges[forward.m_edge_properties[k]];
    if (e.kind == split) continue;
    slot_flags[k] = kSegment | (e.strength == Strength::Strong ? kRequest : 0);
  }

  constexpr uint32_t kNever = 0xffffffffu;
  std::vector<uint32_t> seen_by_segment(pids.size(), kNever), seen_by_request(pids.size(), kNever);
  uint64_t segment_total = 0, request_total = 0;
  uint32_t request = 0, segment_distinct = 0, request_distinct = 0;
  auto meet = [&](uint32_t v, uint32_t peer, uint8_t flags) {
    if ((flags & kSegment) && seen_by_segment[peer] != v) {
      seen_by_segment[peer] = v;
      ++segment_distinct;
    }
    if ((flags & kRequest) && seen_by_request[peer] != request) {
      seen_by_request[peer] = request;
      ++request_distinct;
    }
  };
  for (uint32_t v = 0; v < n; ++v) {
    if (starts_request[v]) {
      if (request_distinct > 1) request_total += request_distinct - 1;
      request = v;
      request_distinct = 0;
    }
    segment_distinct = 0;
    const uint32_t own = process(v);
    for (uint32_t k = forward.m_rowstart[v]; k < forward.m_rowstart[v + 1]; ++k)
      if (uint8_t flags = slot_flags[k]) {
        uint32_t peer = process(forward.m_column[k]);
        if (peer != own) meet(v, peer, flags);
      }
    for (uint32_t k = backward.m_rowstart[v]; k < backward.m_rowstart[v + 1]; ++k)
      if (uint8_t flags = slot_flags[backward.m_edge_properties[k]]) {
        uint32_t peer = process(backward.m_column[k]);
        if (peer != own) meet(v, peer, flags);
      }
    if (segment_distinct > 1) segment_total += segment_distinct - 1;
  }
  if (request_distinct > 1) request_total += request_distinct - 1;
  return {request_total, segment_total};
}

}  // namespace

uint64_t count_segment_over_connections(const Graph& g) {
  return count_both_over_connections(g).second;
}

uint64_t count_over_connections(const Graph& g) {
  return count_both_over_connections(g).first;
}

}  // namespace cw::engine
