// A culprit thread over the hang's window: whether it was hung too, the root cause it is
// blamed as, and the recursion into it (the Argus paper, Algorithm 1: Diagnose on the
// culprit in turn).
#include <fmt/format.h>

#include <algorithm>

#include "engine/diagnosis/diagnoser.h"

namespace cw::engine::diagnose_detail {

namespace {

// A busy culprit's segments looked at for the busiest one.
constexpr uint32_t kMaxSegmentsScanned = 256;

}  // namespace

RootCause Diagnoser::root(uint32_t s, HangKind kind, const SegmentProfile& p,
                          uint32_t depth) const {
  RootCause r;
  r.segment = s;
  r.kind = kind;
  r.what = behaviour(kind, p);
  r.start_ns = p.start_ns;
  r.end_ns = p.end_ns;
  if (kind == HangKind::LongWait && p.longest_block_ns > 0)
    if (const uint32_t ei = wait_ended_by(s, p); ei != kNoIndex)
      r.what += wait_edge_text(g_.edges[ei], p);
  r.stack = stack_of_segment(s, p);
  r.depth = depth;
  return r;
}

// A segment is blamed once: a culprit found by comparison and then diagnosed itself
// keeps its first entry.
void Diagnoser::add_root(RootCause r) {
  for (const RootCause& have : d_.root_causes)
    if (have.segment == r.segment) return;
  d_.root_causes.push_back(std::move(r));
}

// What `culprit`'s thread did during `window`: hung too → a root cause, and maybe a
// recursion into it.
void Diagnoser::examine_thread(uint32_t culprit, Window window, uint32_t depth) {
  const Tid tid = g_.segments[culprit].tid;
  if (visited_threads_.count(tid)) return;
  const ThreadInfo* info = trace_.thread(tid);
  if (info && info->kernel) return;
  SegmentProfile p;
  HangKind kind;
  if (!hung_in(tid, window, &p, &kind)) return;
  visited_threads_.insert(tid);
  // Its own segment for that: where the block began, or the busiest one. A loop of
  // waits that is one wait retried after timeouts (a poll with a short timeout until its
  // upstream wrote) is a LongWait, at the slice that a wake-up ended.
  uint32_t seg = kind == HangKind::LongWait ? segment_at(tid, p.longest_block_start)
                                            : busiest_segment(tid, window);
  // A device waited on turn after turn has no one block to point at: its last turn in the
  // window is where it finished and went on (wrote its result, exited), so the causal
  // path leaves it there.
  if (kind == HangKind::LongWait && waits_in_turns(p) && 2 * p.uninterruptible_ns >= p.blocked_ns)
    if (const uint32_t last = segment_at(tid, window.end - std::min<uint64_t>(window.end, 1));
        last != kNoIndex)
      seg = last;
  if (kind == HangKind::RepeatedYield) {
    const LogicalWait lw =
        retried_wait(trace_, events_, g_, segment_at(tid, p.longest_block_start), p);
    if (lw.wake_edge != kNoIndex) {
      kind = HangKind::LongWait;
      seg = lw.woken;
    }
  }
  if (seg == kNoIndex) return;
  // A wait that the hang's own thread ended once the hang was over (a shell in wait4 for
  // the hung command, reaped when it exited), by a thread nowhere on the hang's path,
  // waited for the hang: it came after it and is no cause of it. (A thread on the path
  // that the hang's thread freed at its end is a circle, told as one.)
  if (kind == HangKind::LongWait && waited_for_hang(seg)) {
    d_.notes.push_back(fmt::format(
        "{} waited for {}, the hang's own thread, which ended that wait after the hang: it "
        "waited for the hang, not the reverse",
        who(seg), thread_name(d_.hang.tid)));
    return;
  }
  blame(seg, kind, p, depth);
}

bool Diagnoser::waited_for_hang(uint32_t seg) const {
  // Only when another thread ended the hang's own wait: its path then says what the hang
  // waited for. A hang that timed out may have waited for this very thread (a circle).
  if (d_.path.empty()) return false;
  const uint32_t hang_seg = d_.path.back().segment;
  const SegmentProfile hp = profile_segment(trace_, events_, g_, hang_seg);
  const uint32_t hang_waker = wake_edge(trace_, events_, g_, hang_seg, hp);
  if (hang_waker == kNoIndex || g_.segments[g_.edges[hang_waker].from].tid == d_.hang.tid)
    return false;
  // Freed by the hang's thread once its wait was over (its exit, as often as not, which
  // also ends the hang's stretch).
  const SegmentProfile sp = profile_segment(trace_, events_, g_, seg);
  const uint32_t waker = wake_edge(trace_, events_, g_, seg, sp);
  if (waker == kNoIndex) return false;
  const Edge& e = g_.edges[waker];
  if (g_.segments[e.from].tid != d_.hang.tid) return false;
  if (trace_.events[e.from_event].ts < hp.longest_block_start + hp.longest_block_ns) return false;
  const Tid tid = g_.segments[seg].tid;
  return std::none_of(d_.path.begin(), d_.path.end(),
                      [&](const PathStep& s) { return g_.segments[s.segment].tid == tid; });
}

// Blames `seg` (which behaved as `kind` over the window) one level below `depth`,
// and asks whether to diagnose it too.
void Diagnoser::blame(uint32_t seg, HangKind kind, const SegmentProfile& over_window,
                      uint32_t depth, const std::string& started) {
  visited_threads_.insert(g_.segments[seg].tid);
  SegmentProfile sp = profile_segment(trace_, events_, g_, seg);
  RootCause r = root(seg, kind, sp, depth + 1);
  // A wait in many turns (a device waited on per record, a wait retried after timeouts)
  // is told over the window it filled, not by the one segment it is blamed at.
  if (kind == HangKind::LongWait && waits_in_turns(over_window) &&
      over_window.blocked_ns > sp.longest_block_ns) {
    r.what = behaviour(kind, over_window) + r.what.substr(behaviour(kind, sp).size());
    r.start_ns = over_window.start_ns;
    r.end_ns = over_window.end_ns;
  }
  r.what += started;
  add_root(std::move(r));
  if (depth + 1 >= opt_.max_recursion) return;
  // A thread that slept for time (a sleep on no descriptor or lock) and that no other
  // thread woke waited for nobody: there is nothing behind it to look for, so no
  // question and no recursion (whose baseline comparison could only blame bystanders).
  // Only a causal edge ends such a sleep early (a signal); a weak wake-up at its end is
  // the timer's expiry delivered by whoever ran it (a kernel worker).
  const uint32_t waker =
      kind == HangKind::LongWait ? wake_edge(trace_, events_, g_, seg, sp) : kNoIndex;
  if (kind == HangKind::LongWait && sleeps_for_time(trace_, sp.longest_block_call) &&
      (waker == kNoIndex || g_.edges[waker].strength == Strength::Weak)) {
    d_.notes.push_back(fmt::format(
        "{} slept for time ({} ms, on no descriptor or lock) and no other thread ended that "
        "sleep: nothing behind it to diagnose",
        who(seg), fmt::format("{:.1f}", double(sp.longest_block_ns) / 1e6)));
    return;
  }
  // A wait its own timer ended (a timerfd it armed, a timeout it set), which no other
  // thread ended early, waited for time as a sleep does.
  if (kind == HangKind::LongWait && waker == kNoIndex && own_timer_ended(seg, sp)) {
    d_.notes.push_back(fmt::format(
        "{} waited {} for a timer it had armed itself, and no other thread ended that wait: "
        "nothing behind it to diagnose",
        who(seg), ms(sp.longest_block_ns)));
    return;
  }
  // A thread that spent its wait in the kernel's uninterruptible sleep, which no other
  // program's thread ended (the device's interrupt or a kernel worker did), waited on the
  // device: no thread is behind it to look for. Blamed for waits in turns (a device waited
  // on per record), its segment's longest block may be another wait that another thread
  // ended (a pipe it then drained, woken by the writer): when that block is a small part
  // of the device's time, the device is still what it waited on.
  const bool turns = waits_in_turns(over_window);
  const SegmentProfile& waited = turns ? over_window : sp;
  if (kind == HangKind::LongWait && waited.blocked_ns > 0 &&
      2 * waited.uninterruptible_ns >= waited.blocked_ns) {
    const ThreadInfo* from =
        waker == kNoIndex ? nullptr : trace_.thread(g_.segments[g_.edges[waker].from].tid);
    const bool woken_wait_minor = turns && 2 * sp.longest_block_ns < waited.uninterruptible_ns;
    if (waker == kNoIndex || (from && from->kernel) || woken_wait_minor) {
      d_.notes.push_back(fmt::format(
          "{} waited {} in uninterruptible sleep (a device, or the kernel on its behalf) and "
          "no other program's thread ended that wait: nothing behind it to diagnose",
          who(seg), ms(waited.uninterruptible_ns)));
      return;
    }
  }
  Question q;
  q.kind = QuestionKind::Recurse;
  q.subject = seg;
  q.text = fmt::format(
      "{} {} (from {:.6f} s), while the hang lasted. Find out why it did, in turn?", who(seg),
      behaviour(kind, sp), secs(kind == HangKind::LongWait ? sp.longest_block_start : sp.start_ns));
  q.help =
      "A thread on the normal run's causal path was itself hung while the hang lasted. "
      "Diagnosing it looks for what it was waiting for, recursively; stopping keeps it as "
      "the root cause.";
  Option yes;
  yes.cost = 1;
  yes.segment = seg;
  yes.label = fmt::format("diagnose {}", who(seg));
  if (evidence_) yes.evidence = segment_evidence(seg);
  Option no;
  no.stop = true;
  no.cost = 2;
  no.label = "stop: it is the root cause";
  q.options = {yes, no};
  if (ask(std::move(q)).stop) {
    stopped_ = true;  // "it is the root cause": the diagnosis ends here
    return;
  }
  Window w = kind == HangKind::LongWait
                 ? Window{sp.longest_block_start, sp.longest_block_start + sp.longest_block_ns}
                 : Window{sp.start_ns, sp.end_ns};
  uint32_t follow = seg;
  if (kind == HangKind::LongWait) {
    // Its wait in slices: follow the slice a wake-up ended, not one that timed out, over
    // the whole wait. That slice may be `seg` itself (a loop of timeouts judged as one
    // wait is blamed at it): what its upstream did is still judged over every slice, not
    // over the last alone (a poll's last 20 ms, in which a stage that spent a second on
    // its disk only wrote its result).
    LogicalWait lw = logical_wait(trace_, events_, g_, seg);
    if (lw.woken != kNoIndex) {
      if (lw.woken != seg) {
        follow = lw.woken;
        sp = profile_segment(trace_, events_, g_, follow);
      }
      w = Window{std::min(w.start, lw.start_ns), std::max(w.end, lw.end_ns)};
    }
  }
  diagnose_vertex(follow, kind, sp, depth + 1, w, follow, follow);
}

// The segment of `tid` running or waiting at time `ts`.
uint32_t Diagnoser::segment_at(Tid tid, uint64_t ts) const {
  const Graph::ThreadSegments* t = g_.thread_segments(tid);
  if (!t || t->begin == t->end) return kNoIndex;
  auto begin = g_.segments.begin() + t->begin, end = g_.segments.begin() + t->end;
  auto it =
      std::upper_bound(begin, end, ts, [](uint64_t x, const Segment& s) { return x < s.start_ns; });
  if (it == begin) return kNoIndex;  // the thread did not exist yet
  return static_cast<uint32_t>(it - g_.segments.begin() - 1);
}

// The segment of `tid` at the window's start, or, for a thread born during the window
// (a child forked after the hang began), its first segment.
uint32_t Diagnoser::segment_in(Tid tid, Window window) const {
  uint32_t s = segment_at(tid, window.start);
  if (s != kNoIndex) return s;
  const Graph::ThreadSegments* t = g_.thread_segments(tid);
  if (!t || t->begin == t->end || g_.segments[t->begin].start_ns >= window.end) return kNoIndex;
  return t->begin;
}

// Whether `tid` spent most of `window` blocked, busy or yielding; `p` and `kind` say how.
// A thread born during the window is profiled from its birth (before it, it was not
// running), but its share is still of the whole window.
bool Diagnoser::hung_in(Tid tid, Window window, SegmentProfile* p, HangKind* kind) const {
  uint64_t len = window.end > window.start ? window.end - window.start : 0;
  if (len == 0) return false;
  uint64_t from = window.start;
  if (segment_at(tid, window.start) == kNoIndex) {
    uint32_t first = segment_in(tid, window);
    if (first == kNoIndex) return false;
    from = g_.segments[first].start_ns;
  }
  *p = profile_range(trace_, events_, tid, from, window.end);
  *kind = classify(*p);
  switch (*kind) {
    case HangKind::LongWait:
      // A device waited on turn after turn (uninterruptible sleeps, none long) is one
      // wait: its time is the device's.
      if (2 * p->uninterruptible_ns >= p->blocked_ns &&
          p->blocked_ns >= kAbnormalShare * static_cast<double>(len))
        return true;
      return p->longest_block_ns >= kAbnormalShare * len;
    case HangKind::LongRunning: return p->on_cpu_ns + p->runnable_ns >= kAbnormalShare * len;
    case HangKind::RepeatedYield: return true;
  }
  return false;
}

// The segment of `tid` that ran or waited for a CPU longest within `window` (the one at
// its start may be a sliver before the busy one).
uint32_t Diagnoser::busiest_segment(Tid tid, Window window) const {
  uint32_t best = segment_in(tid, window);
  const Graph::ThreadSegments* t = g_.thread_segments(tid);
  if (best == kNoIndex || !t) return best;
  uint64_t best_busy = 0;
  for (uint32_t s = best; s < t->end && s < best + kMaxSegmentsScanned; ++s) {
    const Segment& seg = g_.segments[s];
    if (seg.start_ns >= window.end) break;
    SegmentProfile sp = profile_range(trace_, events_, tid, std::max(seg.start_ns, window.start),
                                      std::min(seg.end_ns, window.end));
    if (sp.on_cpu_ns + sp.runnable_ns > best_busy) {
      best_busy = sp.on_cpu_ns + sp.runnable_ns;
      best = s;
    }
  }
  return best;
}

}  // namespace cw::engine::diagnose_detail
