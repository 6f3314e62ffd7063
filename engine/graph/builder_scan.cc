// The builder's scan: every event once, in trace order, applying each rule kind that
// cares about the event's kind (build_state.h, KindActions). It tracks each thread's open
// spans, makes the cuts of batch and split rules, feeds link events to their pairers (on
// a second thread through LinkFeed, on a large trace) and pairs data-flag writes with
// their reads; then keeps the link candidates whose `where` holds. The per-event work is
// the build's hottest loop: what it calls is defined here, beside it.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "engine/graph/build_state.h"
#include "engine/graph/link_feed.h"

namespace cw::engine::build {

namespace {

// A thread's first event already starts a segment; two rules cutting at the same
// event make one cut, the first rule's. Always inlined into the per-event step, as it was
// when the builder was one file (build_state.h, Builder).
[[gnu::always_inline]] inline void add_cut(ThreadState& t, uint32_t event, RuleRef rule,
                                           Neighbour neighbour) {
  if (event == t.first_event) return;
  if (!t.cuts.empty() && t.cuts.back().event == event) return;
  t.cuts.push_back({event, rule, neighbour});
}

}  // namespace

uint32_t Builder::thread_of(const Event& e, uint32_t event_index) {
  uint32_t t = threads_index_.get(e.tid);
  if (t != ThreadIndex::kNone) return t;
  t = static_cast<uint32_t>(threads_.size());
  threads_index_.set(e.tid, t);
  ThreadState st;
  st.tid = e.tid;
  st.pid = trace_.pid_of(e.tid);
  st.first_event = event_index;
  st.batch_loop.assign(rules_.batches.size(), SpanTree::kRoot);
  st.batch_key.assign(rules_.batches.size(), 0);
  st.batch_keyed.assign(rules_.batches.size(), 0);
  threads_.push_back(std::move(st));
  return t;
}

// `cut SPAN`: the event that opened the thread's innermost open SPAN (a blocking call's
// entry, cut only once the call blocks), or kNoEvent.
uint32_t Builder::span_opener(CutScope& c, const ThreadState& t, SpanId span) const {
  const uint32_t node = span == kNoSpan ? SpanTree::kRoot : c.spans.innermost(t.node, span);
  return node == SpanTree::kRoot ? kNoEvent : c.spans.at(node).opener;
}

// Where a batch item at `event` starts: at it, or before the entry of the span its `cut
// SPAN` names: the innermost open one, else the one whose close was the thread's last
// event (a recv is recorded just after its read returns).
uint32_t Builder::batch_place(CutScope& c, const ThreadState& t, uint32_t event,
                              uint32_t batch) const {
  const SpanId span = batch_cut_span_[batch];
  if (span == kNoSpan) return event;
  uint32_t node = c.spans.innermost(t.node, span);
  if (node == SpanTree::kRoot && t.closed_event != kNoEvent && t.closed_event == t.last_event)
    node = c.spans.innermost(t.closed_node, span);
  return node != SpanTree::kRoot ? c.spans.at(node).opener : event;
}

// A `within loop` item of a thread not in its event loop yet: the build does not evaluate
// it, but a rebuild whose new `loop` rule puts the thread in its loop earlier needs to
// know whether it matched. An evaluation that fails here would not have run in the build:
// the rule's list is then not whole, and not kept.
void Builder::record_outside_loop(CutScope& c, ThreadState& t, uint32_t event, uint32_t batch,
                                  const EvalScope& scope) {
  if (c.rec->batch_lost[batch]) return;
  try {
    if (!c.eval.test(c.batch_item[batch], scope)) return;
    const int64_t key =
        rules_.batches[batch].per.empty() ? 0 : c.eval.eval(c.batch_per[batch], scope).i;
    c.rec->batches[batch].push_back({event, batch_place(c, t, event, batch), 0, key});
  } catch (const std::exception&) {
    c.rec->batch_lost[batch] = 1;
    c.rec->batches[batch].clear();
  }
}

// The thread's innermost span of the kind `e` closes ends; `cut SPAN` may still name it.
void Builder::close_span(CutScope& c, ThreadState& t, const Event& e, uint32_t i) {
  SpanId closes = c.spans.closes(e.kind);
  if (closes != kNoSpan) {
    t.closed_node = t.node;
    t.closed_event = i;
    t.node = c.spans.pop(t.node, closes);
  }
  t.last_event = i;
}

bool Builder::flag_event_matches(const Event& e, uint32_t f) const {
  const FlagState& st = flags_[f];
  if (flag_field_ >= 0) {
    StrId name = static_cast<StrId>(trace_.value(e, flag_field_));
    if (name != 0 && (name == st.local || name == st.qualified)) return true;
  }
  uint64_t address = rules_.flags[f].address;
  return address != 0 && addr_field_ >= 0 && trace_.value(e, addr_field_) == address;
}

// The cut part of event `i` of thread `t`: a pending `cut after`, the spans it opens, its
// batch items and its split rules. Returns its kind's actions, or null when it has none
// (its spans are then tracked, closes included).
const KindActions* Builder::cut_event(CutScope& c, ThreadState& t, const Event& e, uint32_t i) {
  if (t.pending_after.kind != kNoRuleKind) {
    add_cut(t, i, t.pending_after, t.pending_neighbour);
    t.pending_after = {};
  }
  if (!t.awaiting_next.empty()) [[unlikely]] {
    for (const auto& [rule, k] : t.awaiting_next) c.rec->splits[rule][k].at = i;
    t.awaiting_next.clear();
  }
  if (e.kind >= by_kind_.size() || !by_kind_[e.kind].any()) {
    track_spans_only(c, t, e, i);
    return nullptr;
  }
  const KindActions& act = by_kind_[e.kind];
  SpanId opens = c.spans.opens(e.kind);
  if (opens != kNoSpan) {
    uint32_t parent = t.node;
    t.node = c.spans.push(parent, i, opens);
    if (t.node != parent && !act.batch_opens.empty()) {
      uint64_t bits = 0;
      EvalScope scope{{i, t.node}, {}, {}};
      for (uint32_t b : act.batch_opens)
        if (c.eval.test(c.batch_within[b], scope)) bits |= uint64_t{1} << b;
      c.spans.add_batch_bits(t.node, bits);
    }
  }
  EvalScope scope{{i, t.node}, {}, {}};
  // Batch items first: when a declared loop boundary and a split rule cut at the same
  // event, the cut is the batch rule's (the first made stands).
  for (uint32_t b : act.batch_items) {
    const rules::BatchRule& rule = rules_.batches[b];
    uint64_t bit = uint64_t{1} << b;
    // The loop instance: the thread's own event loop, or the outermost open span that
    // matched the batch's `within`.
    uint32_t loop = SpanTree::kRoot;
    if (rule.thread_loop) {
      if (!t.in_loop) {
        if (c.rec) record_outside_loop(c, t, i, b, scope);
        continue;
      }
      if (!c.eval.test(c.batch_item[b], scope)) continue;
    } else {
      if (!(c.spans.at(t.node).batch_mask & bit) || !c.eval.test(c.batch_item[b], scope)) continue;
      loop = t.node;
      while (c.spans.at(c.spans.at(loop).parent).batch_mask & bit) loop = c.spans.at(loop).parent;
    }
    const bool same_loop = t.batch_loop[b] == loop;
    const int64_t key = rule.per.empty() ? 0 : c.eval.eval(c.batch_per[b], scope).i;
    if (c.rec) {
      const uint32_t loop_id = loop == SpanTree::kRoot ? 0 : c.spans.at(loop).opener + 1;
      c.rec->batches[b].push_back({i, batch_place(c, t, i, b), loop_id, key});
    }
    if (!rule.per.empty()) {
      // Reads of one client's descriptor in a row are one request.
      if (same_loop && t.batch_keyed[b] && t.batch_key[b] == key) continue;
      t.batch_key[b] = key;
      t.batch_keyed[b] = 1;
    }
    t.batch_loop[b] = loop;
    const uint32_t at = c.rec ? c.rec->batches[b].back().at : batch_place(c, t, i, b);
    // A cut already made at the item's start or after it stands (a split rule that cut at
    // the read's entry when it blocked keeps its name and neighbour).
    if (at == t.first_event) continue;
    if (!t.cuts.empty() && t.cuts.back().event >= at) continue;
    t.cuts.push_back({at, {RuleKind::Batch, b}, same_loop ? rule.neighbour : Neighbour::None});
  }
  for (uint32_t s : act.splits) {
    const auto& rule = rules_.splits[s];
    if (!c.eval.test(c.split_where[s], scope)) continue;
    if (rule.loop) {
      // Back in its event loop: the next request read starts an item, whichever client.
      t.in_loop = true;
      std::fill(t.batch_keyed.begin(), t.batch_keyed.end(), uint8_t{0});
    }
    if (!rule.cut_span.empty()) {
      // Before the opener of the innermost open SPAN; a cut already made inside it stands.
      const uint32_t opener = span_opener(c, t, split_span_[s]);
      if (c.rec) c.rec->splits[s].push_back({i, opener});
      if (opener == kNoEvent || (!t.cuts.empty() && t.cuts.back().event > opener)) continue;
      add_cut(t, opener, {RuleKind::Split, s}, rule.neighbour);
    } else if (rule.cut_after) {
      if (c.rec) {
        t.awaiting_next.emplace_back(s, static_cast<uint32_t>(c.rec->splits[s].size()));
        c.rec->splits[s].push_back({i, kNoEvent});
      }
      if (t.pending_after.kind == kNoRuleKind) {
        t.pending_after = {RuleKind::Split, s};
        t.pending_neighbour = rule.neighbour;
      }
    } else {
      if (c.rec) c.rec->splits[s].push_back({i, i});
      add_cut(t, i, {RuleKind::Split, s}, rule.neighbour);
    }
  }
  return &act;
}

void Builder::on_event(CutScope& c, uint32_t i) {
  const Event& e = trace_.events[i];
  ThreadState& t = threads_[thread_of(e, i)];
  const KindActions* actions = cut_event(c, t, e, i);
  if (!actions) return;
  const KindActions& act = *actions;
  EventCtx ctx{i, t.node};
  EvalScope scope{ctx, {}, {}};
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
  close_span(c, t, e, i);
}

void Builder::track_spans_only(CutScope& c, ThreadState& t, const Event& e, uint32_t i) {
  SpanId opens = c.spans.opens(e.kind);
  if (opens != kNoSpan) t.node = c.spans.push(t.node, i, opens);
  close_span(c, t, e, i);
}

constexpr uint32_t kValuesAhead = 16;
void Builder::scan_events() {
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
  std::vector<MatchRecorder> recorders;
  if (record_) recorders.emplace_back(rules_.splits.size(), rules_.batches.size());
  CutScope scope{spans_,
                 eval_,
                 split_where_,
                 batch_within_,
                 batch_item_,
                 batch_per_,
                 recorders.empty() ? nullptr : &recorders[0]};
  try {
    for (uint32_t i = 0; i < n; ++i) {
      // Rules read the fields of most events they see: ask for those values ahead (the
      // values array is walked in order, but sparsely).
      if (i + kValuesAhead < n)
        __builtin_prefetch(&trace_.values[trace_.events[i + kValuesAhead].values]);
      on_event(scope, i);
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
  if (record_) keep_matches(recorders);
  report("events", n, n);
}

// Every thread of the trace, named in the order of their first events as the scan names
// them, without the scan.
void Builder::name_threads() {
  const auto n = static_cast<uint32_t>(trace_.events.size());
  if (thread_lists_fit()) {
    // From each thread's first event in the caller's lists, when each is its thread's.
    const ThreadEventLists& lists = *options_.thread_events;
    std::vector<std::pair<uint32_t, Tid>> firsts;
    firsts.reserve(lists.tids.size());
    bool fit = true;
    for (size_t i = 0; fit && i < lists.tids.size(); ++i) {
      if (lists.at[i] == lists.at[i + 1]) continue;
      const uint32_t first = lists.events[lists.at[i]];
      fit = first < n && trace_.events[first].tid == lists.tids[i];
      firsts.emplace_back(first, lists.tids[i]);
    }
    if (fit) {
      std::sort(firsts.begin(), firsts.end());
      for (const auto& [first, tid] : firsts) thread_of(trace_.events[first], first);
      return;
    }
  }
  for (uint32_t i = 0; i < n; ++i) thread_of(trace_.events[i], i);
}

// The matches the scan's shares recorded, each rule's in event order (each share's are,
// and a thread's events are all in one share).
void Builder::keep_matches(std::vector<MatchRecorder>& shares) {
  // The shares' lists merged by event into one compact list, each freed as it is read.
  auto merged = [](auto lists, CutMatches& out) {
    using Match = typename std::remove_pointer_t<typename decltype(lists)::value_type>::value_type;
    MatchWriter w(out);
    std::vector<size_t> at(lists.size(), 0);
    for (;;) {
      const Match* next = nullptr;
      size_t from = 0;
      for (size_t k = 0; k < lists.size(); ++k)
        if (at[k] < lists[k]->size() && (!next || (*lists[k])[at[k]].event < next->event)) {
          next = &(*lists[k])[at[k]];
          from = k;
        }
      if (!next) break;
      w.add(*next);
      ++at[from];
    }
    for (auto* list : lists) std::vector<Match>().swap(*list);
    out.bytes.shrink_to_fit();
    out.known = true;
  };
  CutMatchSet& kept = result_.matches;
  kept.splits.assign(rules_.splits.size(), {});
  kept.batches.assign(rules_.batches.size(), {});
  for (uint32_t s = 0; s < rules_.splits.size(); ++s) {
    const auto& rule = rules_.splits[s];
    if (!rule.origin.active() || rule.mode != rules::SplitRule::Mode::AtEvent || rule.at == kNoKind)
      continue;
    std::vector<std::vector<SplitMatch>*> lists;
    for (MatchRecorder& r : shares) lists.push_back(&r.splits[s]);
    merged(lists, kept.splits[s]);
  }
  for (uint32_t b = 0; b < rules_.batches.size(); ++b) {
    const auto& rule = rules_.batches[b];
    kept.batches[b].batch = true;
    if (!rule.origin.active() || rule.item == kNoKind) continue;
    bool lost = false;
    std::vector<std::vector<BatchMatch>*> lists;
    for (MatchRecorder& r : shares) {
      lost |= r.batch_lost[b] != 0;
      lists.push_back(&r.batches[b]);
    }
    if (lost) continue;
    merged(lists, kept.batches[b]);
  }
}

void Builder::finish_links() {
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

}  // namespace cw::engine::build

namespace cw::engine::build {

// A rebuild of the cuts alone (BuildOptions::reuse) on two CPUs: each thread's cuts
// depend on its own events only (no link pairing, no data flags), so the threads are
// shared between two scans of the events, each making the cuts of its own threads with a
// span tree, an evaluator and prepared rules of its own; each thread's events are seen in
// trace order, as one scan sees them, and so make the same cuts. A first pass names the
// threads in the order of their first events (as one scan does: peers cuts name them by
// it) and counts their events, to share them evenly. False (nothing done) when the trace
// is too small to share or there is one CPU.
bool Builder::scan_cuts_in_two_shares() {
  const uint64_t n = trace_.events.size();
  if (!reuse_ || n < parallel_from_ || n < 2) return false;
  if (n >= kNoEvent) throw std::length_error("trace has too many events for the graph");
  // Each thread's events weigh it: counted by a pass that names the threads, or given by
  // the caller's lists.
  std::vector<uint32_t> weight;
  if (thread_lists_fit()) {
    name_threads();
    for (const ThreadState& t : threads_)
      weight.push_back(static_cast<uint32_t>(options_.thread_events->of(t.tid).size()));
  } else {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t t = thread_of(trace_.events[i], i);
      if (t == weight.size()) weight.push_back(0);
      ++weight[t];
    }
  }
  // Heaviest first into the lighter share.
  std::vector<uint32_t> by_weight(threads_.size());
  for (uint32_t i = 0; i < by_weight.size(); ++i) by_weight[i] = i;
  std::stable_sort(by_weight.begin(), by_weight.end(),
                   [&](uint32_t a, uint32_t b) { return weight[a] > weight[b]; });
  std::vector<uint8_t> share(threads_.size(), 0);
  uint64_t load[2] = {0, 0};
  for (uint32_t i : by_weight) {
    const int to = load[1] < load[0] ? 1 : 0;
    share[i] = static_cast<uint8_t>(to);
    load[to] += weight[i];
  }
  // The second share's own span tree, evaluator and prepared cut rules.
  SpanTree spans(trace_.schema);
  spans.reserve(census_.span_opens);
  Evaluator eval(trace_, spans, nullptr, options_.interpret_expressions);
  std::vector<PreparedExpr> split_where, batch_within, batch_item, batch_per;
  for (const auto& r : rules_.splits) split_where.push_back(eval.prepare(r.where, r.origin));
  for (const auto& b : rules_.batches) {
    batch_within.push_back(eval.prepare(b.within_where, b.origin));
    batch_item.push_back(eval.prepare(b.item_where, b.origin));
    batch_per.push_back(eval.prepare(b.per, b.origin));
  }
  std::vector<MatchRecorder> recorders;
  if (record_)
    for (int k = 0; k < 2; ++k) recorders.emplace_back(rules_.splits.size(), rules_.batches.size());
  CutScope scopes[2] = {{spans_, eval_, split_where_, batch_within_, batch_item_, batch_per_,
                         record_ ? &recorders[0] : nullptr},
                        {spans, eval, split_where, batch_within, batch_item, batch_per,
                         record_ ? &recorders[1] : nullptr}};
  report("events", 0, n);
  in_two_parts(2, true, [&](uint64_t, uint64_t, int part) {
    CutScope& c = scopes[part];
    const auto mine = static_cast<uint8_t>(part);
    for (uint32_t i = 0; i < n; ++i) {
      const Event& e = trace_.events[i];
      const uint32_t ti = threads_index_.get(e.tid);
      if (ti == ThreadIndex::kNone)  // named from thread lists that left it out
        throw std::invalid_argument("the thread lists to rebuild the cuts with lack a thread");
      if (share[ti] != mine) continue;
      ThreadState& t = threads_[ti];
      if (cut_event(c, t, e, i)) close_span(c, t, e, i);
      if (part == 0 && (i + 1) % kProgressStep == 0) report("events", i + 1, n);
    }
  });
  if (record_) keep_matches(recorders);
  report("events", n, n);
  return true;
}

}  // namespace cw::engine::build
