// The builder's segments: the cuts of `split … peers` rules (the Argus paper, §4.2),
// made from the link candidates or taken from the build a rebuild reuses, merged into the
// cuts the scan made on each thread; then the segments between a thread's cuts, with
// their first and last events and times, and each event's segment for the edges.
#include <algorithm>
#include <stdexcept>

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
  std::vector<PendingPeerCut> out;
  out.reserve(reuse_->peer_cuts.size());
  for (const PeerCut& p : reuse_->peer_cuts) {
    if (p.thread >= threads_.size() || p.event >= trace_.events.size() ||
        p.rule >= rules_.splits.size() ||
        rules_.splits[p.rule].mode != rules::SplitRule::Mode::Peers ||
        threads_index_.get(trace_.events[p.event].tid) != p.thread || p.since >= p.event)
      throw std::invalid_argument("the graph to reuse is not of this trace and these rules");
    out.push_back({p.thread, {p.event, {RuleKind::Split, p.rule}, p.neighbour}, p.since});
  }
  return out;
}

// The peers cuts join each thread's own cuts.
void Builder::merge_peer_cuts() {
  if (peer_cuts_.empty()) return;
  // Merge into the threads' cuts; a cut already made at the same event stays.
  // A thread's own cuts are in event order, and so are the peer cuts of one rule: then
  // merging the two runs gives what a stable sort would, in one linear pass.
  std::vector<uint32_t> own_cuts(threads_.size());
  for (uint32_t t = 0; t < threads_.size(); ++t)
    own_cuts[t] = static_cast<uint32_t>(threads_[t].cuts.size());
  // A peers cut parts two messages; when the thread's own cuts (a loop wait, a request's
  // read) already part them, it would only add a segment holding nothing of either.
  for (const PendingPeerCut& p : peer_cuts_)
    if (!cut_between(threads_[p.thread], own_cuts[p.thread], p.since, p.cut.event))
      threads_[p.thread].cuts.push_back(p.cut);
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

void Builder::make_segments() {
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

}  // namespace cw::engine::build
