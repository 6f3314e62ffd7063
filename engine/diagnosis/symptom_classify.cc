// What a stretch was (the Argus paper, §2: LongRunning, RepeatedYield, LongWait), the
// segment it is diagnosed at, and whether its thread waits by design rather than hangs.
#include <fmt/format.h>

#include <algorithm>

#include "engine/diagnosis/logical_wait.h"
#include "engine/diagnosis/symptom_finder.h"

namespace cw::engine {

HangKind classify(const SegmentProfile& p) {
  const uint64_t length = p.end_ns - std::min(p.end_ns, p.start_ns);
  // A loop calls all along, turn after turn: bursts of calls (a program's start-up, its
  // input read, its output written) around long computations without any are not one.
  // (Sixteen calls make eight turns or more: none takes a quarter of the stretch; the
  // stretch may begin or end with up to half of it outside the loop.)
  // A loop that spent most of its time in the kernel's uninterruptible sleep (a disk
  // write's completion, each fsync of a logging loop) does not yield: it waits on a device,
  // turn after turn, and the device's time is its wait.
  if (p.syscalls >= symptom_detail::kYieldCalls && !p.by_name.empty() &&
      2 * p.by_name.front().count >= p.syscalls && 2 * p.longest_block_ns <= length &&
      4 * p.longest_gap_ns <= length && 2 * p.longest_quiet_ns <= length &&
      2 * p.uninterruptible_ns < length)
    return HangKind::RepeatedYield;
  if (p.blocked_ns >= p.on_cpu_ns + p.runnable_ns) return HangKind::LongWait;
  return HangKind::LongRunning;
}

namespace symptom_detail {

namespace {

// A thread that spent less than this on a CPU outside its one wait did no work.
constexpr uint64_t kIdleCpuNs = 5'000'000;

}  // namespace

// What the stretch was, and how long it went without a response. classify() reads the
// profile alone: a wait retried after timeouts (a poll with a timeout on the same
// descriptors, a timed futex wait) looks like a loop of calls there. It is one wait when
// its slices are one logical wait that another thread's edge ended and that takes most
// of the stretch: a LongWait lasting from its first slice to that wake-up. A loop whose
// slices all timed out, or that polls a data flag between its waits, stays a yield loop.
HangKind Finder::kind_of(const Stretch& st, const SegmentProfile& p, uint64_t* waited) const {
  const HangKind k = classify(p);
  if (waited) *waited = k == HangKind::LongWait ? p.longest_block_ns : 0;
  // A stretch classified LongWait by its blocked time may be slices too (a shell's
  // `read -t` loop: each slice's look costs calls of other names): its wait is the
  // logical wait, not its longest slice.
  const uint64_t stretch = p.end_ns - std::min(p.end_ns, p.start_ns);
  if (k == HangKind::LongRunning ||
      (k == HangKind::LongWait && (p.blocks < 2 || 2 * p.longest_block_ns >= stretch)))
    return k;
  uint32_t seg = st.first;
  for (uint32_t s = st.first; s <= st.last; ++s)
    if (g_.segments[s].start_ns <= p.longest_block_start) seg = s;
  // (A loop that reads a data flag between its waits polls the flag, a pack declared it:
  // the flag's writer ends it, not the waits' wake-ups; retried_wait says no.)
  const LogicalWait lw = retried_wait(trace_, ev_, g_, seg, p);
  if (lw.wake_edge == kNoIndex) return k;
  const uint64_t length = lw.end_ns - std::min(lw.end_ns, lw.start_ns);
  if (waited) *waited = std::max(length, p.longest_block_ns);
  return HangKind::LongWait;
}

Hang Finder::make_hang(const Stretch& st, std::string chosen_by) const {
  SegmentProfile p = profile_range(trace_, ev_, st.tid, st.start_ns, st.end_ns);
  const HangKind kind = kind_of(st, p);
  return make_hang(st, std::move(chosen_by), std::move(p), kind);
}

Hang Finder::make_hang(const Stretch& st, std::string chosen_by, SegmentProfile profile,
                       HangKind kind) const {
  Hang h;
  h.tid = st.tid;
  h.pid = g_.segments[st.first].pid;
  h.start_ns = st.start_ns;
  h.end_ns = st.end_ns;
  h.first_segment = st.first;
  h.last_segment = st.last;
  h.profile = std::move(profile);
  h.kind = kind;
  h.chosen_by = std::move(chosen_by);
  h.segment = st.first;
  switch (h.kind) {
    case HangKind::RepeatedYield: break;
    case HangKind::LongWait:
      if (h.profile.longest_block_ns > 0) {
        // The last of the stretch's segments starting at or before the block.
        for (uint32_t s = st.first; s <= st.last; ++s)
          if (g_.segments[s].start_ns <= h.profile.longest_block_start) h.segment = s;
      }
      break;
    case HangKind::LongRunning: {
      const Graph::ThreadSegments* t = g_.thread_segments(st.tid);
      uint64_t best = 0;
      for (uint32_t s = st.first; s <= st.last; ++s) {
        const uint64_t from = std::max(g_.segments[s].start_ns, st.start_ns);
        const uint64_t to = std::min(s == st.last ? st.end_ns : segment_end(*t, s), st.end_ns);
        if (to <= from) continue;
        const SegmentProfile p = profile_range(trace_, ev_, st.tid, from, to);
        if (p.on_cpu_ns + p.runnable_ns > best) {
          best = p.on_cpu_ns + p.runnable_ns;
          h.segment = s;
        }
      }
      break;
    }
  }
  return h;
}

// The other thread whose edge into `tid` landed in [from, to]: the strongest, then the
// latest. 0 when none did.
Tid Finder::woken_by(Tid tid, uint64_t from, uint64_t to) const {
  const Graph::ThreadSegments* t = g_.thread_segments(tid);
  if (!t) return 0;
  Tid best = 0;
  Strength best_strength = Strength::Weak;
  uint64_t best_ts = 0;
  for (uint32_t s = t->begin; s < t->end; ++s) {
    if (g_.segments[s].start_ns > to) break;
    if (segment_end(*t, s) < from) continue;
    for (auto [it, end] = in_edges(s, g_.csr); it != end; ++it) {
      const Edge& e = g_.edges[g_.csr[*it]];
      const Tid other = g_.segments[e.from].tid;
      const uint64_t ts = trace_.events[e.to_event].ts;
      if (other == tid || ts < from || ts > to) continue;
      const bool stronger =
          best == 0 || (e.strength == Strength::Strong && best_strength != Strength::Strong);
      const bool as_strong_later = e.strength == best_strength && ts >= best_ts;
      if (stronger || as_strong_later) {
        best = other;
        best_strength = e.strength;
        best_ts = ts;
      }
    }
  }
  return best;
}

// Whether a segment of `tid` caused something in another thread before `before`.
bool Finder::told_another(Tid tid, uint64_t before) const {
  const Graph::ThreadSegments* t = g_.thread_segments(tid);
  if (!t) return false;
  for (uint32_t s = t->begin; s < t->end && g_.segments[s].start_ns < before; ++s)
    for (auto [it, end] = out_edges(s, g_.csr); it != end; ++it) {
      const Edge& e = g_.edges[g_.csr[*it]];
      if (g_.segments[e.to].tid != tid && trace_.events[e.from_event].ts < before) return true;
    }
  return false;
}

int64_t Finder::call_int(uint32_t call, int field) const {
  return field < 0 ? 0 : static_cast<int64_t>(trace_.value(trace_.events[call], field));
}

// Why the candidate's thread waits by design (docs/diagnosis.md), or "". Only a
// LongWait can: a thread that polls or computes is doing something.
std::string Finder::by_design(const Stretch& st, const Hang& h, Tid* waker) const {
  const SegmentProfile& p = h.profile;
  if (h.kind != HangKind::LongWait || p.longest_block_ns == 0) return {};
  const uint64_t block_start = p.longest_block_start;
  const uint64_t returned = p.longest_block_exit != kNoIndex
                                ? trace_.events[p.longest_block_exit].ts
                                : block_start + p.longest_block_ns;
  *waker = woken_by(st.tid, last_sleep_start(p), returned);
  const std::string call = p.longest_block_call == kNoIndex || enter_name_ < 0
                               ? std::string("a wait")
                               : std::string(trace_.strings.get(static_cast<StrId>(trace_.value(
                                     trace_.events[p.longest_block_call], enter_name_))));
  // A sleep on nothing: the call names no descriptor (fd -1: the recorder saw none)
  // and no object, so only its timer could end it, and no other thread did.
  if (p.longest_block_call != kNoIndex && *waker == 0 &&
      call_int(p.longest_block_call, enter_fd_) < 0 &&
      call_int(p.longest_block_call, enter_resource_) == 0)
    return fmt::format("a timed sleep: {} on no descriptor or object, ended by no other thread",
                       call);
  // Idle all its life: the wait never returned, and outside it the thread did no work
  // (under kIdleCpuNs on a CPU) and told no other thread anything.
  const Graph::ThreadSegments* t = g_.thread_segments(st.tid);
  if (p.longest_block_exit == kNoIndex && t) {
    // (A stretch that is the thread's whole life, as an idle thread's is, has its profile.)
    const uint64_t born = g_.segments[t->begin].start_ns, ended = thread_end(*t);
    const SegmentProfile life = st.start_ns == born && st.end_ns == ended
                                    ? p
                                    : profile_range(trace_, ev_, st.tid, born, ended);
    if (life.on_cpu_ns < kIdleCpuNs && !told_another(st.tid, block_start))
      return fmt::format("idle all its life: it never returned from {} and did no work outside it",
                         call);
  }
  return {};
}

}  // namespace symptom_detail
}  // namespace cw::engine
