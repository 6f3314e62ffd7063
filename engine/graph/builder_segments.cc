// The builder's segments: the cuts of `split … peers` rules (the Argus paper, §4.2),
// made from the link candidates or taken from the build a rebuild reuses, merged into the
// cuts the scan made on each thread; then the segments between a thread's cuts, with
// their first and last events and times, and each event's segment for the edges.
#include <malloc.h>

#include <algorithm>
#include <stdexcept>

#include "base/parallel.h"
#include "base/populate.h"
#include "engine/graph/build_state.h"

namespace cw::engine::build {

namespace {

template <class Ends>
inline bool disjoint(const Ends& ends, size_t a0, size_t a1, size_t b0, size_t b1) {
  while (a0 < a1 && b0 < b1) {
    if (ends[a0].peer == ends[b0].peer) return false;
    if (ends[a0].peer < ends[b0].peer)
      ++a0;
    else
      ++b0;
  }
  return true;
}

// Whether the thread's own cuts (its first `own_cuts`, in event order) part events
// `before` and `after`.
bool cut_between(const ThreadState& t, uint32_t own_cuts, uint32_t before, uint32_t after) {
  auto end = t.cuts.begin() + own_cuts;
  auto it = std::upper_bound(t.cuts.begin(), end, before,
                             [](uint32_t event, const Cut& c) { return event < c.event; });
  return it != end && it->event <= after;
}

// The thread's own cuts (in event order) and its peers cuts [begin, end) of `order` (in
// event order too), merged in one pass into a list made once: what appending the peers
// cuts that no own cut parts from their previous link end, a stable sort by event, keeping
// the first cut at an event (an own cut before a peers cut) and dropping one at the
// thread's first event give. Appending to the thread's list would move it as it grew, and
// the merge would take a buffer of its own.
void merge_sorted_peer_cuts(ThreadState& t, const std::vector<PendingPeerCut>& peer_cuts,
                            const std::vector<uint32_t>& order, uint32_t begin, uint32_t end) {
  if (begin == end) {
    auto last = std::unique(t.cuts.begin(), t.cuts.end(),
                            [](const Cut& a, const Cut& b) { return a.event == b.event; });
    t.cuts.erase(last, t.cuts.end());
    std::erase_if(t.cuts, [&](const Cut& c) { return c.event == t.first_event; });
    return;
  }
  const std::vector<Cut>& own = t.cuts;
  std::vector<Cut> merged;
  merged.reserve(own.size() + (end - begin));
  auto add = [&](const Cut& c) {
    if (c.event == t.first_event || (!merged.empty() && merged.back().event == c.event)) return;
    merged.push_back(c);
  };
  size_t i = 0;      // the next own cut to add
  size_t after = 0;  // the first own cut after the last peers cut's link end
  uint32_t last_since = 0;
  for (uint32_t k = begin; k < end; ++k) {
    const PendingPeerCut& p = peer_cuts[order[k]];
    // The link ends grow with the cuts of one rule: the first own cut after each is
    // walked to, not searched for, unless an end goes back (the next rule's cuts).
    if (p.since < last_since)
      after = static_cast<size_t>(
          std::upper_bound(own.begin(), own.end(), p.since,
                           [](uint32_t event, const Cut& c) { return event < c.event; }) -
          own.begin());
    else
      while (after < own.size() && own[after].event <= p.since) ++after;
    last_since = p.since;
    if (after < own.size() && own[after].event <= p.cut.event) continue;  // parted already
    while (i < own.size() && own[i].event <= p.cut.event) add(own[i++]);
    add(p.cut);
  }
  while (i < own.size()) add(own[i++]);
  t.cuts.swap(merged);
}

}  // namespace

// `split … peers LINK`: cut between consecutive ends of LINK's candidates on a thread
// whose peer processes are disjoint (the Argus paper, §4.2).
void Builder::peer_cuts() {
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
        peer_cuts_.push_back({ends[begin].thread,
                              {ends[begin].ctx.event, {RuleKind::Split, s}, rule.neighbour},
                              ends[prev_begin].ctx.event});
      prev_begin = begin;
      prev_end = end;
      begin = end;
    }
  }
  result_.peer_cuts.reserve(peer_cuts_.size());
  for (const PendingPeerCut& p : peer_cuts_)
    result_.peer_cuts.push_back(
        {p.thread, p.cut.event, p.cut.rule.index, p.cut.neighbour, p.since});
}

// The reused build's peers cuts, as it made them (checked: they name this trace's threads
// and events, and peers rules of these rules).
std::vector<PendingPeerCut> Builder::reused_peer_cuts() const {
  const std::vector<PeerCut>& cuts = reuse_->peer_cuts;
  // Each cut's event is read to check its thread: the two halves on two CPUs, the events
  // asked for ahead (they are all over the trace).
  constexpr size_t kAhead = 16;
  std::vector<PendingPeerCut> out(cuts.size());
  in_two_parts(
      cuts.size(), trace_.events.size() >= parallel_from_, [&](uint64_t begin, uint64_t end, int) {
        for (size_t i = begin; i < end; ++i) {
          if (i + kAhead < end && cuts[i + kAhead].event < trace_.events.size())
            __builtin_prefetch(&trace_.events[cuts[i + kAhead].event]);
          const PeerCut& p = cuts[i];
          if (p.thread >= threads_.size() || p.event >= trace_.events.size() ||
              p.rule >= rules_.splits.size() ||
              rules_.splits[p.rule].mode != rules::SplitRule::Mode::Peers ||
              threads_index_.get(trace_.events[p.event].tid) != p.thread || p.since >= p.event)
            throw std::invalid_argument("the graph to reuse is not of this trace and these rules");
          out[i] = {p.thread, {p.event, {RuleKind::Split, p.rule}, p.neighbour}, p.since};
        }
      });
  return out;
}

// The peers cuts join each thread's own cuts.
void Builder::merge_peer_cuts() {
  if (peer_cuts_.empty()) return;
  // Each thread's peers cuts, in their order: the threads are then merged apart.
  std::vector<uint32_t> at(threads_.size() + 1, 0);
  for (const PendingPeerCut& p : peer_cuts_) ++at[p.thread + 1];
  for (size_t t = 0; t < threads_.size(); ++t) at[t + 1] += at[t];
  std::vector<uint32_t> order(peer_cuts_.size());
  {
    std::vector<uint32_t> next(at.begin(), at.end() - 1);
    for (uint32_t i = 0; i < peer_cuts_.size(); ++i) order[next[peer_cuts_[i].thread]++] = i;
  }
  auto by_event = [](const Cut& a, const Cut& b) { return a.event < b.event; };
  parallel_for(
      threads_.size(),
      [&](size_t ti) {
        ThreadState& t = threads_[ti];
        const auto own_cuts = static_cast<uint32_t>(t.cuts.size());
        auto peer = [&](uint32_t k) -> const PendingPeerCut& { return peer_cuts_[order[k]]; };
        bool peers_sorted = true;
        for (uint32_t k = at[ti] + 1; peers_sorted && k < at[ti + 1]; ++k)
          peers_sorted = peer(k - 1).cut.event <= peer(k).cut.event;
        if (peers_sorted && std::is_sorted(t.cuts.begin(), t.cuts.end(), by_event)) {
          merge_sorted_peer_cuts(t, peer_cuts_, order, at[ti], at[ti + 1]);
          return;
        }
        // Merge into the thread's cuts; a cut already made at the same event stays.
        // A peers cut parts two messages; when the thread's own cuts (a loop wait, a
        // request's read) already part them, it would only add a segment holding nothing
        // of either.
        for (uint32_t k = at[ti]; k < at[ti + 1]; ++k) {
          const PendingPeerCut& p = peer(k);
          if (!cut_between(t, own_cuts, p.since, p.cut.event)) t.cuts.push_back(p.cut);
        }
        std::stable_sort(t.cuts.begin(), t.cuts.end(), by_event);
        auto last = std::unique(t.cuts.begin(), t.cuts.end(),
                                [](const Cut& a, const Cut& b) { return a.event == b.event; });
        t.cuts.erase(last, t.cuts.end());
        std::erase_if(t.cuts, [&](const Cut& c) { return c.event == t.first_event; });
      },
      trace_.events.size() >= parallel_from_ ? worker_count() : 1);
  peer_cuts_.clear();
  peer_cuts_.shrink_to_fit();
}

// Threads by tid, each with a contiguous run of segments: their bases, the graph's thread
// table and the cut counts. Returns the number of segments.
uint32_t Builder::lay_out_threads() {
  Graph& g = result_.graph;
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
    st.segment_end = total;
    result_.stats.cuts += st.cuts.size();
    for (const Cut& c : st.cuts) {
      if (c.rule.kind == RuleKind::Split) ++result_.counts.splits[c.rule.index];
      if (c.rule.kind == RuleKind::Batch) ++result_.counts.batches[c.rule.index];
    }
  }
  return total;
}

void Builder::make_segments() {
  report("segments", 0, trace_.events.size());
  Graph& g = result_.graph;
  resize_populated(g.segments, lay_out_threads());
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
  resize_populated(event_segment_, n);
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
      if (t == ThreadIndex::kNone)  // named from thread lists that left it out
        throw std::invalid_argument("the thread lists to rebuild the cuts with lack a thread");
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

// A cut's event and rule are the first event and the cut rule of the segment it starts:
// once the segments are made, only its neighbour strength is left to keep (a byte a
// segment instead of 16 a cut: 4.4 M cuts, 67 MB, at 19 M events, freed before the
// edges, the build's peak, are made).
void Builder::fold_cuts() {
  cut_neighbour_.assign(result_.graph.segments.size(), Neighbour::None);
  for (ThreadState& st : threads_) {
    for (size_t k = 0; k < st.cuts.size(); ++k)
      cut_neighbour_[st.segment_base + k + 1] = st.cuts[k].neighbour;
    std::vector<Cut>().swap(st.cuts);
  }
  malloc_trim(0);
}

// Whether the caller's thread lists (BuildOptions::thread_events) can stand for the pass
// over the events: offsets that hold together, every event in one list, and each named
// thread's list starting at its first event.
bool Builder::thread_lists_fit() const {
  const ThreadEventLists* lists = options_.thread_events;
  if (!lists) return false;
  const size_t slots = lists->tids.size();
  if (lists->at.size() != slots + 1 || lists->at[0] != 0 ||
      lists->at[slots] != lists->events.size() || lists->events.size() != trace_.events.size())
    return false;
  for (size_t i = 0; i < slots; ++i)
    if (lists->at[i] > lists->at[i + 1] || (i > 0 && lists->tids[i - 1] >= lists->tids[i]))
      return false;
  return true;
}

// A rebuild's segments from the reused graph's (BuildOptions::thread_events): a thread
// whose cuts are the reused graph's keeps its segments as they were; the others' are made
// from their cuts, ending where an old segment ended when the next cut is an old one, else
// at the event before the new cut in the thread's list. Each old segment learns the new
// segments its events are in, for the reused edges. False (nothing done) when the lists or
// the reused graph's segments are not there to do it with.
bool Builder::segments_from_reused() {
  const Graph& old = reuse_->graph;  // its segments are freed at the end
  if (!thread_lists_fit() || (old.segments.empty() && !old.threads.empty())) return false;
  const ThreadEventLists& lists = *options_.thread_events;
  std::vector<std::span<const uint32_t>> of(threads_.size());
  for (uint32_t t = 0; t < threads_.size(); ++t) {
    of[t] = lists.of(threads_[t].tid);
    if (of[t].empty() || of[t].front() != threads_[t].first_event) return false;
  }
  report("segments", 0, threads_.size());
  Graph& g = result_.graph;
  resize_populated(g.segments, lay_out_threads());
  old_lo_.assign(old.segments.size(), kNoSegment);
  old_hi_.assign(old.segments.size(), kNoSegment);
  // Each thread's segments, and its old segments' places, are its own: the threads are
  // spread over the CPUs.
  std::vector<uint8_t> kept(threads_.size(), 0);
  const bool spread = trace_.events.size() >= parallel_from_;
  parallel_for(
      threads_.size(),
      [&](size_t t) {
        const ThreadState& st = threads_[t];
        const Graph::ThreadSegments* was = old.thread_segments(st.tid);
        const auto count = static_cast<uint32_t>(st.cuts.size()) + 1;
        bool same = was && was->end - was->begin == count &&
                    old.segments[was->begin].first == st.first_event;
        for (uint32_t k = 0; same && k + 1 < count; ++k) {
          const Segment& o = old.segments[was->begin + 1 + k];
          same = o.first == st.cuts[k].event && o.cut_rule == st.cuts[k].rule;
        }
        if (same) {
          std::copy(old.segments.begin() + was->begin, old.segments.begin() + was->end,
                    g.segments.begin() + st.segment_base);
          for (uint32_t k = 0; k < count; ++k) {
            g.segments[st.segment_base + k].pid = st.pid;
            old_lo_[was->begin + k] = old_hi_[was->begin + k] = st.segment_base + k;
          }
          kept[t] = 1;
        } else {
          segments_of_changed_thread(st, was, of[t]);
        }
      },
      spread ? worker_count() : 1);
  result_.threads_kept = static_cast<uint64_t>(std::count(kept.begin(), kept.end(), uint8_t{1}));
  // The old segments are read no more (old_lo_ and old_hi_ say where they went): ~100 MB
  // at 19 M events, freed before the edges and the csr are made.
  std::vector<Segment>().swap(reuse_->graph.segments);
  report("segments", threads_.size(), threads_.size());
  result_.segments_from_reused = true;
  return true;
}

// The segments of a thread whose cuts changed, and where its old segments went. `was` is
// its run in the reused graph (none for a thread that had no segments there), `events`
// its events.
void Builder::segments_of_changed_thread(const ThreadState& st, const Graph::ThreadSegments* was,
                                         std::span<const uint32_t> events) {
  const Graph& old = reuse_->graph;
  Graph& g = result_.graph;
  const auto count = static_cast<uint32_t>(st.cuts.size()) + 1;
  const uint32_t base = st.segment_base;
  const uint32_t ob = was ? was->begin : 0, oe = was ? was->end : 0;
  auto first_of = [&](uint32_t k) { return k == 0 ? st.first_event : st.cuts[k - 1].event; };
  uint32_t o = ob;  // the first old segment starting at or after the new one's first
  size_t at = 0;    // where the last search of the thread's list ended
  for (uint32_t k = 0; k < count; ++k) {
    Segment& s = g.segments[base + k];
    s.tid = st.tid;
    s.pid = st.pid;
    s.first = first_of(k);
    s.cut_rule = k == 0 ? RuleRef{} : st.cuts[k - 1].rule;
    while (o < oe && old.segments[o].first < s.first) ++o;
    const bool starts_old = o < oe && old.segments[o].first == s.first;
    s.start_ns = starts_old ? old.segments[o].start_ns : trace_.events[s.first].ts;
    if (k + 1 == count) {
      s.last = events.back();
      break;
    }
    // Where it ends: before the next cut. An old segment that starts there says which
    // event that is; else the thread's list does, searched ahead from the last search.
    const uint32_t next = st.cuts[k].event;
    uint32_t p = o;
    while (p < oe && old.segments[p].first < next) ++p;
    if (p > ob && p < oe && old.segments[p].first == next) {
      s.last = old.segments[p - 1].last;
    } else {
      size_t step = 1, hi = at;
      while (hi < events.size() && events[hi] < next) {
        at = hi;
        hi += step;
        step *= 2;
      }
      hi = std::min(hi, events.size());
      at = static_cast<size_t>(std::lower_bound(events.begin() + static_cast<ptrdiff_t>(at),
                                                events.begin() + static_cast<ptrdiff_t>(hi), next) -
                               events.begin());
      s.last = at > 0 ? events[at - 1] : s.first;
    }
  }
  for (uint32_t k = 0; k < count; ++k) {
    Segment& s = g.segments[base + k];
    // Lists that do not fit the cuts or the trace (the caller's to get right): the segment
    // still ends in order, and no event past the trace is read.
    if (s.last < s.first || s.last >= trace_.events.size()) s.last = s.first;
    s.end_ns = k + 1 < count ? g.segments[base + k + 1].start_ns : trace_.events[s.last].ts;
  }
  // Each old segment's first and last event: in which new segments they are.
  uint32_t lo = 0, hi = 0;
  for (uint32_t i = ob; i < oe; ++i) {
    const Segment& os = old.segments[i];
    while (lo + 1 < count && first_of(lo + 1) <= os.first) ++lo;
    if (hi < lo) hi = lo;
    while (hi + 1 < count && first_of(hi + 1) <= os.last) ++hi;
    old_lo_[i] = base + lo;
    old_hi_[i] = base + hi;
  }
}

}  // namespace cw::engine::build
