// A rebuild's cuts from the cut rules' matches (cut_matches.h) instead of a scan of the
// events: the matches of the rules a build saw before are given; a new split rule that
// cuts at its event and whose `where` reads only that event is evaluated at the events of
// its kind alone (no spans tracked, no other rule evaluated). Then each thread's matches
// (the threads on every CPU: a thread's cuts depend on its own matches alone), in trace
// order and at one event in the order the scan applies rules (batch items, then splits,
// each by index), go through the same per-thread steps the scan takes (builder_scan.cc,
// cut_event): a pending `cut after`, the thread's event loop, a batch's loop and `per`
// value, a cut hidden by one made at or after its place.
#include <malloc.h>

#include <algorithm>
#include <exception>
#include <queue>
#include <stdexcept>

#include "base/parallel.h"
#include "engine/graph/build_state.h"

namespace cw::engine::build {

namespace {

using Code = PreparedExpr::Code;

// Whether an attribute of the event itself (not a field of its kind) has the same value
// wherever it is read: its time, thread, CPU, kind, and what the trace says of its thread
// and process, which do not change with the spans open or the cuts made. Not its stack: an
// event without one takes the innermost open span's.
bool attribute_of_event_alone(rules::FieldScope scope) {
  using rules::FieldScope;
  switch (scope) {
    case FieldScope::Ts:
    case FieldScope::Tid:
    case FieldScope::Pid:
    case FieldScope::Cpu:
    case FieldScope::KindName:
    case FieldScope::ThreadComm:
    case FieldScope::ThreadKernel:
    case FieldScope::ProcessComm:
    case FieldScope::ProcessExe: return true;
    default: return false;
  }
}

// Whether a prepared `where` reads its own event only: constants, the event's fields and
// attributes (attribute_of_event_alone) and operators on them; no span, no stack, no call.
bool reads_own_event_only(const PreparedExpr& p) {
  if (p.empty()) return true;
  if (p.code.empty()) return false;  // walked as a tree: not looked into
  for (const PreparedExpr::Instr& in : p.code) {
    switch (in.code) {
      case Code::Field:
        if (in.side != rules::Side::Self ||
            !attribute_of_event_alone(p.expr->nodes[in.node].field.scope))
          return false;
        break;
      case Code::SpanField:
      case Code::SpanOpen:
      case Code::Tree: return false;
      case Code::EventField:
        if (in.side != rules::Side::Self) return false;
        break;
      default: break;
    }
  }
  return true;
}

// One rule's matches, read in order: `split` or `batch` is the next one to replay.
// One rule's matches to replay (the new rules' are set once found).
struct Stream {
  bool batch = false;
  uint32_t rule = 0;
  const CutMatches* list = nullptr;
};

constexpr unsigned kStreamBits = 20;

// A cut at `at` unless the thread starts there or a cut at or after it stands. A scan's
// cuts come in event order; replayed ones do too (a cut is placed at or before its match,
// a pending `cut after` at the thread's next event), which this keeps however the matches
// were made: cuts out of order would make segments that end before they begin.
void cut_in_order(ThreadState& t, uint32_t at, RuleRef rule, Neighbour neighbour) {
  if (at == t.first_event) return;
  if (!t.cuts.empty() && t.cuts.back().event >= at) return;
  t.cuts.push_back({at, rule, neighbour});
}

void pending_to_cut(ThreadState& t) {
  cut_in_order(t, t.pending_at, t.pending_after, t.pending_neighbour);
  t.pending_after = {};
  t.pending_at = kNoEvent;
}

// One rule's matches, by thread: thread i's (threads_ order) are splits or items
// [at[i], at[i + 1]), in event order.
struct ByThread {
  bool batch = false;
  std::vector<uint32_t> at;
  std::vector<SplitMatch> splits;
  std::vector<BatchMatch> items;
  uint32_t event(uint32_t i) const { return batch ? items[i].event : splits[i].event; }
};

// Reads `st`'s matches, checking that each is an event of a thread named and that a cut
// place is on the match's thread, and puts them by thread (`threads` of them): the list
// read once, then each match's event read (asked for some matches ahead) for its thread,
// then each match moved into its thread's run.
ByThread split_by_thread(const Trace& trace, const ThreadIndex& index, const Stream& st,
                         uint32_t threads) {
  const uint64_t n = trace.events.size();
  const CutMatches& list = *st.list;
  ByThread out;
  out.batch = st.batch;
  out.at.assign(static_cast<size_t>(threads) + 1, 0);
  // The list in event order (a match takes a byte at least).
  std::vector<SplitMatch> splits;
  std::vector<BatchMatch> items;
  const uint64_t expected = std::min<uint64_t>(list.count, list.bytes.size());
  if (st.batch) {
    items.reserve(expected);
    for (MatchReader r(list); !r.done();) items.push_back(r.batch());
  } else {
    splits.reserve(expected);
    for (MatchReader r(list); !r.done();) splits.push_back(r.split());
  }
  const size_t count = st.batch ? items.size() : splits.size();
  auto event_of = [&](size_t i) { return st.batch ? items[i].event : splits[i].event; };
  auto place_of = [&](size_t i) { return st.batch ? items[i].at : splits[i].at; };
  std::vector<uint32_t> thread_of(count);
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count && event_of(i + kAhead) < n)
      __builtin_prefetch(&trace.events[event_of(i + kAhead)]);
    const uint32_t event = event_of(i);
    if (event >= n)
      throw std::invalid_argument("the matches to rebuild the cuts from are not of this trace");
    if (i > 0 && event <= event_of(i - 1))
      throw std::invalid_argument("the matches to rebuild the cuts from are out of order");
    const Tid tid = trace.events[event].tid;
    // A cut place on another thread would cut that thread's events out of order.
    const uint32_t place = place_of(i);
    if (place != event && place != kNoEvent && (place >= n || trace.events[place].tid != tid))
      throw std::invalid_argument(
          "the matches to rebuild the cuts from place a cut on another thread");
    const uint32_t thread = index.get(tid);
    if (thread == ThreadIndex::kNone)  // named from thread lists that left it out
      throw std::invalid_argument("the thread lists to rebuild the cuts with lack a thread");
    thread_of[i] = thread;
    ++out.at[thread + 1];
  }
  for (uint32_t t = 0; t < threads; ++t) out.at[t + 1] += out.at[t];
  std::vector<uint32_t> slot(out.at.begin(), out.at.end() - 1);
  if (st.batch) {
    out.items.resize(count);
    for (size_t i = 0; i < count; ++i) out.items[slot[thread_of[i]]++] = items[i];
  } else {
    out.splits.resize(count);
    for (size_t i = 0; i < count; ++i) out.splits[slot[thread_of[i]]++] = splits[i];
  }
  return out;
}

}  // namespace

bool Builder::evaluate_selected(const EventNames& names, uint32_t s, Evaluator& second,
                                const PreparedExpr& second_where,
                                std::vector<std::vector<SplitMatch>> (&parts)[2], size_t k) {
  const rules::SplitRule& rule = rules_.splits[s];
  const NameSelector selector = name_selector(rule.where, rule.at, trace_.schema);
  std::vector<uint32_t> events;
  try {
    events = names.events(rule.at, selector);
  } catch (const std::invalid_argument&) {
    return false;  // lists that do not decode: the scan
  }
  // A `where` that is the name test alone holds at every event listed: the list is the
  // matches, no event read (the cache's lists are trusted as its cut matches are: they are
  // this trace's, checksummed, and only their bounds are checked).
  if (selector.whole) {
    parts[0][k].reserve(events.size());
    for (const uint32_t i : events) parts[0][k].push_back({i, i});
    return true;
  }
  // Else each event is checked to be of the kind and name asked for: lists of another
  // trace (or damaged) leave the rule to the scan.
  const int field = naming_field(trace_.schema, rule.at);
  std::vector<StrId> wanted;
  for (const std::string& name : selector.names)
    if (const StrId id = trace_.strings.find(name); id != StringTable::kMissing)
      wanted.push_back(id);
  std::sort(wanted.begin(), wanted.end());
  struct NotSelected {};
  try {
    in_two_parts(
        events.size(), events.size() >= parallel_from_,
        [&](uint64_t begin, uint64_t end, int part) {
          Evaluator& eval = part == 0 ? eval_ : second;
          const PreparedExpr& where = part == 0 ? split_where_[s] : second_where;
          for (uint64_t j = begin; j < end; ++j) {
            const uint32_t i = events[j];
            const Event& e = trace_.events[i];
            if (e.kind != rule.at) throw NotSelected{};
            if (selector.by_name && !std::binary_search(wanted.begin(), wanted.end(),
                                                        static_cast<StrId>(trace_.value(e, field))))
              throw NotSelected{};
            if (eval.test(where, {{i, SpanTree::kRoot}, {}, {}})) parts[part][k].push_back({i, i});
          }
        });
  } catch (const NotSelected&) {
    parts[0][k].clear();
    parts[1][k].clear();
    return false;
  }
  return true;
}

void Builder::replay_split(ThreadState& t, uint32_t s, const SplitMatch& m) {
  const auto& rule = rules_.splits[s];
  if (rule.loop) {
    t.in_loop = true;
    std::fill(t.batch_keyed.begin(), t.batch_keyed.end(), uint8_t{0});
  }
  if (!rule.cut_span.empty()) {
    // Before the opener of the innermost open SPAN; a cut already made inside it stands.
    if (m.at != kNoEvent) cut_in_order(t, m.at, {RuleKind::Split, s}, rule.neighbour);
  } else if (rule.cut_after) {
    if (t.pending_after.kind == kNoRuleKind) {
      t.pending_after = {RuleKind::Split, s};
      t.pending_neighbour = rule.neighbour;
      t.pending_at = m.at;
    }
  } else {
    cut_in_order(t, m.event, {RuleKind::Split, s}, rule.neighbour);
  }
}

void Builder::replay_batch(ThreadState& t, uint32_t b, const BatchMatch& m) {
  const rules::BatchRule& rule = rules_.batches[b];
  if (rule.thread_loop && !t.in_loop) return;
  // Loops are named by their span's opener + 1 here, 0 for the thread's event loop: the
  // span tree's root is 0 too, what a thread's batch_loop starts at.
  const bool same_loop = t.batch_loop[b] == m.loop;
  if (!rule.per.empty()) {
    if (same_loop && t.batch_keyed[b] && t.batch_key[b] == m.key) return;
    t.batch_key[b] = m.key;
    t.batch_keyed[b] = 1;
  }
  t.batch_loop[b] = m.loop;
  cut_in_order(t, m.at, {RuleKind::Batch, b}, same_loop ? rule.neighbour : Neighbour::None);
}

bool Builder::cuts_from_matches() {
  const KnownCutMatches* known = options_.known_matches;
  if (!reuse_ || !known) return false;
  const uint64_t n = trace_.events.size();
  if (n >= kNoEvent) throw std::length_error("trace has too many events for the graph");
  std::vector<Stream> streams;
  std::vector<uint32_t> fresh;  // split rules evaluated here, by their stream
  std::vector<size_t> fresh_stream;
  for (uint32_t b = 0; b < rules_.batches.size(); ++b) {
    const rules::BatchRule& rule = rules_.batches[b];
    if (!rule.origin.active() || rule.item == kNoKind) continue;
    const CutMatches* m = b < known->batches.size() ? known->batches[b] : nullptr;
    if (!m || !m->known) return false;
    if (!m->batch) return false;
    streams.push_back({true, b, m});
  }
  for (uint32_t s = 0; s < rules_.splits.size(); ++s) {
    const rules::SplitRule& rule = rules_.splits[s];
    if (!rule.origin.active() || rule.mode != rules::SplitRule::Mode::AtEvent || rule.at == kNoKind)
      continue;
    const CutMatches* m = s < known->splits.size() ? known->splits[s] : nullptr;
    if (m && m->known) {
      if (m->batch) return false;
      streams.push_back({false, s, m});
      continue;
    }
    if (!rule.cut_span.empty() || rule.cut_after || !reads_own_event_only(split_where_[s]))
      return false;
    fresh.push_back(s);
    fresh_stream.push_back(streams.size());
    streams.push_back({false, s, nullptr});
  }
  if (streams.size() >= (size_t{1} << kStreamBits)) return false;
  report("events", 0, n);

  // The new rules at the events their kind and `name` test select, when the trace's
  // events are listed so (event_names.h), else at the events of their kinds. An error
  // falls back to the scan, whose error is the one a whole build meets first.
  std::vector<CutMatches> found(fresh.size());
  if (!fresh.empty()) {
    std::vector<std::vector<SplitMatch>> parts[2];
    parts[0].resize(fresh.size());
    parts[1].resize(fresh.size());
    Evaluator second(trace_, spans_, nullptr, options_.interpret_expressions);
    std::vector<PreparedExpr> second_where;
    for (uint32_t s : fresh)
      second_where.push_back(second.prepare(rules_.splits[s].where, rules_.splits[s].origin));
    const EventNames* names = options_.event_names ? options_.event_names() : nullptr;
    std::vector<size_t> scanned;  // the rules evaluated by the scan of kinds
    try {
      for (size_t k = 0; k < fresh.size(); ++k) {
        if (!names || !evaluate_selected(*names, fresh[k], second, second_where[k], parts, k))
          scanned.push_back(k);
      }
      if (!scanned.empty())
        in_two_parts(n, n >= parallel_from_, [&](uint64_t begin, uint64_t end, int part) {
          Evaluator& eval = part == 0 ? eval_ : second;
          for (uint64_t ev = begin; ev < end; ++ev) {
            const auto i = static_cast<uint32_t>(ev);
            const KindId kind = trace_.events[i].kind;
            for (size_t k : scanned) {
              const uint32_t s = fresh[k];
              if (kind != rules_.splits[s].at) continue;
              const PreparedExpr& where = part == 0 ? split_where_[s] : second_where[k];
              if (eval.test(where, {{i, SpanTree::kRoot}, {}, {}}))
                parts[part][k].push_back({i, i});
            }
          }
        });
    } catch (const DiagnosticError&) {
      return false;
    }
    for (size_t k = 0; k < fresh.size(); ++k) {
      // The selected events come a list at a time (one per name): their matches in order.
      std::vector<SplitMatch>& all = parts[0][k];
      all.insert(all.end(), parts[1][k].begin(), parts[1][k].end());
      std::vector<SplitMatch>().swap(parts[1][k]);
      auto by_event = [](const SplitMatch& a, const SplitMatch& b) { return a.event < b.event; };
      if (!std::is_sorted(all.begin(), all.end(), by_event))
        std::sort(all.begin(), all.end(), by_event);
      found[k].known = true;
      MatchWriter w(found[k]);
      for (const SplitMatch& m : all) w.add(m);
      std::vector<SplitMatch>().swap(all);
      streams[fresh_stream[k]].list = &found[k];
    }
  }

  // The threads, named in the order of their first events as a scan names them.
  name_threads();

  // Each rule's matches by thread, read on every CPU, then each thread's cuts replayed
  // on its own on every CPU, from its matches in trace order (at one event, in stream
  // order): a thread's cuts depend on its own matches alone. One merge of all the rules'
  // matches read each match's event as it came up, far from the last at 19 M events.
  const unsigned workers = n >= parallel_from_ ? worker_count() : 1u;
  const auto threads = static_cast<uint32_t>(threads_.size());
  std::vector<ByThread> by_thread(streams.size());
  std::vector<std::exception_ptr> errors(streams.size());
  parallel_for(
      streams.size(),
      [&](size_t k) {
        try {
          by_thread[k] = split_by_thread(trace_, threads_index_, streams[k], threads);
        } catch (...) {
          errors[k] = std::current_exception();
        }
      },
      workers);
  for (const std::exception_ptr& e : errors)  // the first rule's: as one pass in order
    if (e) std::rethrow_exception(e);
  report("events", n / 2, n);
  parallel_for(
      threads,
      [&](size_t ti) {
        ThreadState& t = threads_[ti];
        // The thread's next match of each rule, the earliest first (at one event, the
        // first rule's).
        std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> next;
        std::vector<uint32_t> at(streams.size());
        // A match makes one cut at most: the thread's list is made once.
        size_t matches = 0;
        for (const ByThread& list : by_thread) matches += list.at[ti + 1] - list.at[ti];
        t.cuts.reserve(matches);
        for (size_t k = 0; k < streams.size(); ++k) {
          at[k] = by_thread[k].at[ti];
          if (at[k] < by_thread[k].at[ti + 1])
            next.push((uint64_t{by_thread[k].event(at[k])} << kStreamBits) | k);
        }
        while (!next.empty()) {
          const uint64_t top = next.top();
          next.pop();
          const size_t k = top & ((uint64_t{1} << kStreamBits) - 1);
          const auto event = static_cast<uint32_t>(top >> kStreamBits);
          const ByThread& list = by_thread[k];
          if (t.pending_after.kind != kNoRuleKind && t.pending_at <= event) pending_to_cut(t);
          if (list.batch)
            replay_batch(t, streams[k].rule, list.items[at[k]]);
          else
            replay_split(t, streams[k].rule, list.splits[at[k]]);
          if (++at[k] < list.at[ti + 1])
            next.push((uint64_t{list.event(at[k])} << kStreamBits) | k);
        }
        if (t.pending_after.kind != kNoRuleKind && t.pending_at != kNoEvent) pending_to_cut(t);
      },
      workers);
  // The matches by thread were read on every CPU, into each worker's own heap: freed, that
  // memory would stay with the process, unused, through the build's peak.
  std::vector<ByThread>().swap(by_thread);
  malloc_trim(0);

  if (record_) {
    result_.matches.splits.assign(rules_.splits.size(), {});
    result_.matches.batches.assign(rules_.batches.size(), {});
    for (size_t k = 0; k < fresh.size(); ++k)
      result_.matches.splits[fresh[k]] = std::move(found[k]);
    for (CutMatches& b : result_.matches.batches) b.batch = true;
  }
  result_.cuts_replayed = true;
  report("events", n, n);
  return true;
}

}  // namespace cw::engine::build
