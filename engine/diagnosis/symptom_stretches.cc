// A thread's stretches: the time between its returns to its loop (symptom.h). A loop
// thread's run from the return of each loop wait to the next loop cut; any other
// thread's segments, a run of short ones repeating one call merged into one (a yield or
// sleep loop).
#include <algorithm>

#include "base/parallel.h"
#include "engine/diagnosis/logical_wait.h"
#include "engine/diagnosis/symptom_finder.h"

namespace cw::engine {

bool is_loop_cut(const Graph& graph, uint32_t segment) {
  const RuleRef& r = graph.segments.at(segment).cut_rule;
  if (r.kind == RuleKind::Batch) return true;
  return r.kind == RuleKind::Split && r.index < graph.rule_names.split_loops.size() &&
         graph.rule_names.split_loops[r.index];
}

namespace symptom_detail {

namespace {

// A run of 8 or more short segments that start with the same system call and that no
// other thread caused is one stretch: a yield or sleep loop.
constexpr size_t kMinMergedRun = 8;

// How many of a thread's last events are searched for its exit, at most.
constexpr size_t kExitWithin = 1u << 16;

}  // namespace

bool Finder::has_loop_cut(const Graph::ThreadSegments& t) const {
  for (uint32_t s = t.begin; s < t.end; ++s)
    if (is_loop_cut(g_, s)) return true;
  return false;
}

// When the thread's life ends for diagnosis: its exit, or the end of the recording (a
// thread still blocked or busy then is the hang still going on).
// The exit event follows the thread's last system call and function call; after it come
// only the kernel's own work on its behalf: on a loaded machine, dozens of preemptions
// while its memory is torn down, an interrupt, the parent's SIGCHLD. So the search goes
// back over those, and stops at the first thing the program itself did.
uint64_t Finder::thread_end(const Graph::ThreadSegments& t) const {
  const auto& list = ev_.of(t.tid);
  uint64_t end = std::max(trace_end_, g_.segments[t.end - 1].end_ns);
  if (thread_exit_ != kNoKind) {
    const size_t stop = list.size() - std::min(list.size(), kExitWithin);
    for (size_t i = list.size(); i > stop; --i) {
      const KindId k = trace_.events[list[i - 1]].kind;
      if (k == thread_exit_) {
        end = trace_.events[list.back()].ts;
        break;
      }
      if (program_activity(k)) break;
    }
  }
  return end;
}

// Whether an event of kind `k` is something the program did (a system or function call,
// a message), which a thread that has exited can no longer do.
bool Finder::program_activity(KindId k) const {
  return k != kNoKind && (k == enter_ || k == exit_ || k == call_enter_ || k == call_exit_ ||
                          k == send_ || k == recv_);
}

uint64_t Finder::segment_end(const Graph::ThreadSegments& t, uint32_t s) const {
  return s + 1 == t.end ? thread_end(t) : g_.segments[s].end_ns;
}

// Whether each of `loops` (ascending segments of one thread) opens a system call, and the
// syscall_exit that closes it. A loop thread has as many loop cuts as turns, hundreds of
// thousands on a busy one, and each reads two events far apart in the trace (the cut's
// first, and the call's return): first the place of each return among the thread's
// calls, searched forward from the last one's place by doubling steps (one search each
// over all its calls missed the cache at every step), then the events, asked for a few
// cuts ahead.
std::vector<Finder::LoopWait> Finder::wait_returns(const std::vector<uint32_t>& loops) const {
  std::vector<LoopWait> out(loops.size());
  if (loops.empty() || enter_ == kNoKind) return out;
  const auto& calls = ev_.syscalls_of(g_.segments[loops.front()].tid);
  std::vector<uint32_t> next(loops.size(), kNoIndex);  // the call after each cut's first event
  size_t at = 0;  // calls[0, at) are at or before the last loop's first event
  for (size_t i = 0; i < loops.size(); ++i) {
    const uint32_t first = g_.segments[loops[i]].first;
    size_t step = 1, lo = at, hi = at;
    while (hi < calls.size() && calls[hi] <= first) {
      lo = hi + 1;
      hi = std::min(calls.size(), hi + step);
      step *= 2;
    }
    at = static_cast<size_t>(
        std::upper_bound(calls.begin() + static_cast<std::ptrdiff_t>(lo),
                         calls.begin() + static_cast<std::ptrdiff_t>(std::max(lo, hi)), first) -
        calls.begin());
    if (at < calls.size()) next[i] = calls[at];
  }
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (i + kAhead < loops.size()) {
      __builtin_prefetch(&trace_.events[g_.segments[loops[i + kAhead]].first]);
      if (next[i + kAhead] != kNoIndex) __builtin_prefetch(&trace_.events[next[i + kAhead]]);
    }
    LoopWait& w = out[i];
    w.opens = trace_.events[g_.segments[loops[i]].first].kind == enter_;
    if (!w.opens || next[i] == kNoIndex) continue;
    if (const Event& r = trace_.events[next[i]]; r.kind == exit_) {
      w.ret = next[i];
      w.returned_ns = r.ts;
    }
  }
  return out;
}

// The segment of thread `t` holding event `event`, searched forward from segment `from`
// (whose first event is at or before it) and no further than `last`.
uint32_t Finder::segment_from(uint32_t from, uint32_t last, uint32_t event) const {
  uint32_t s = from;
  while (s < last && g_.segments[s + 1].first <= event) ++s;
  return s;
}

// A loop thread: from the return of each loop wait to the next loop cut, and the
// thread's start before its first loop cut. A loop wait for the answer to a request the
// thread made in the turn before it (a client polling its socket for the reply, a build
// tool polling the pipes of the jobs it started) is no idle wait: it stays in the
// stretch of that turn.
void Finder::loop_stretches(const Graph::ThreadSegments& t, std::vector<Stretch>& out) const {
  std::vector<uint32_t> loops;
  for (uint32_t s = t.begin; s < t.end; ++s)
    if (is_loop_cut(g_, s)) loops.push_back(s);
  const uint64_t end_of_thread = thread_end(t);
  auto end_at = [&](size_t i) {
    return i + 1 < loops.size() ? g_.segments[loops[i + 1]].start_ns : end_of_thread;
  };
  auto last_at = [&](size_t i) { return i + 1 < loops.size() ? loops[i + 1] - 1 : t.end - 1; };
  const size_t before = out.size();
  std::vector<Asked> waiting_for;  // processes asked something that have not answered yet
  // A thread the user named whose loop wait timed out and was made again on the same
  // descriptors, until what it waited for came (one wait, in as many slices as its
  // timeouts make): not turns of a loop, but a program waiting for the thing it needs
  // (its input, its job's end). Such a wait is no idle turn. `retried[i]`: loop wait i
  // timed out and wait i + 1 is the same wait. A thread that never waits again for what
  // a wait of its loop was woken by (its inputs, one after the other, each once) is no
  // event loop either: each of its waits is for a thing it needs.
  std::vector<bool> retried(loops.size(), false);
  const std::vector<LoopWait> waits = wait_returns(loops);
  const bool waits_once = named_ && waits_in_sequence(loops, waits);
  bool after_wait = false;  // the last stretch ended with a retried wait's answer
  InitiatorCache initiators;
  const ThreadAcross across = across_of(t);
  for (size_t i = 0; named_ && i + 1 < loops.size(); ++i) {
    const uint32_t r = waits[i].ret;
    retried[i] = waits[i].opens && waits[i + 1].opens &&
                 same_wait(trace_, g_.segments[loops[i]].first, g_.segments[loops[i + 1]].first) &&
                 r != kNoIndex && exit_ret_ >= 0 &&
                 trace_.int_value(trace_.events[r], exit_ret_) == 0;
  }
  if (loops.front() > t.begin)
    out.push_back({t.tid, g_.segments[t.begin].start_ns, g_.segments[loops.front()].start_ns,
                   t.begin, loops.front() - 1});
  for (size_t i = 0; i < loops.size(); ++i) {
    const uint64_t end = end_at(i);
    uint64_t start = g_.segments[loops[i]].start_ns;
    uint32_t first = loops[i];
    if (waits[i].opens) {
      const uint32_t r = waits[i].ret;
      const uint32_t turn = i == 0 ? t.begin : loops[i - 1];  // since the last loop wait
      const uint32_t woken = r == kNoIndex ? loops[i] : segment_from(loops[i], last_at(i), r);
      if (loops[i] > turn) asked_in(across, turn, loops[i] - 1, waiting_for, initiators);
      // Slices of one wait for an answer that time out (a poll with a timeout) are that
      // wait too, until the answer comes.
      const bool had_asked = !waiting_for.empty();
      const WaitEnd how = wait_end(across, loops[i], woken, waiting_for);
      const bool retry = i > 0 && retried[i - 1];  // the slice after one that timed out
      const bool one_wait = waits_once || retried[i] || retry;
      if (((had_asked && how != WaitEnd::OtherWork) || one_wait) && r != kNoIndex) {
        // A retried wait goes on the stretch of its first slice, which goes on the turn
        // that led to it, but not on the wait before (another input's, already answered).
        const bool joins = !one_wait || retry || !after_wait;
        if (joins && out.size() > before && out.back().last + 1 == loops[i]) {
          out.back().end_ns = end;
          out.back().last = last_at(i);
        } else {
          out.push_back({t.tid, start, end, first, last_at(i)});
        }
        after_wait = one_wait;
        continue;
      }
      // Idle: the wait had not returned when the recording stopped, or the loop moved on.
      after_wait = false;
      if (r == kNoIndex || waits[i].returned_ns > end) continue;
      // The user named this thread: a wait of its loop that another thread's event ended
      // (a follower of a file, woken by the write it waited for) is what the user may
      // have seen hang, as well as the turn after it; the longest of them is the hang.
      if (named_ && woken_by_other(loops[i], woken))
        out.push_back({t.tid, start, waits[i].returned_ns, first, woken});
      start = waits[i].returned_ns;
      first = woken;
    }
    after_wait = false;
    out.push_back({t.tid, start, end, first, last_at(i)});
  }
}

// Whether a strong edge from another thread lands in segments [first, last] (a wait's
// slices, up to the one it returned in).
bool Finder::woken_by_other(uint32_t first, uint32_t last) const {
  for (uint32_t s = first; s <= last; ++s)
    if (strong_in_[s]) return true;
  return false;
}

// Whether each of `loops` (a thread's loop cuts) opens a wait, and no wait that returned
// with something (not a timeout) is waited again later: the thread waits for its inputs
// in turn, not in an event loop. (Bounded: a thread with many loop waits is a loop.)
bool Finder::waits_in_sequence(const std::vector<uint32_t>& loops,
                               const std::vector<LoopWait>& waits) const {
  constexpr size_t kMaxSequence = 64;
  if (loops.empty() || loops.size() > kMaxSequence || exit_ret_ < 0) return false;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (!waits[i].opens) return false;
    const uint32_t r = waits[i].ret;
    if (r == kNoIndex || i + 1 == loops.size()) continue;
    if (trace_.int_value(trace_.events[r], exit_ret_) == 0) continue;  // timed out
    for (size_t j = i + 1; j < loops.size(); ++j)
      if (same_wait(trace_, g_.segments[loops[i]].first, g_.segments[loops[j]].first)) return false;
  }
  return true;
}

// A thread without loop cuts: every segment, except that a run of segments repeating
// one system call that no other thread caused is one stretch.
void Finder::segment_stretches(const Graph::ThreadSegments& t, std::vector<Stretch>& out) const {
  constexpr StrId kNone = StringTable::kMissing;
  const uint32_t n = t.end - t.begin;
  std::vector<StrId> key(n, kNone);
  std::vector<bool> yielding(n, false);
  const auto& calls = ev_.syscalls_of(t.tid);  // enters and exits, in order
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t s = t.begin + i;
    // Only a segment with enough calls can be a yield loop by itself: count them (two
    // binary searches) before profiling it.
    const auto lo = std::lower_bound(calls.begin(), calls.end(), g_.segments[s].first);
    const auto hi = std::upper_bound(lo, calls.end(), g_.segments[s].last);
    const bool many = static_cast<uint32_t>(hi - lo) >= kYieldCalls;
    const SegmentProfile p = many ? profile_segment(trace_, ev_, g_, s) : SegmentProfile{};
    if (many && p.syscalls >= kYieldCalls && !p.by_name.empty() &&
        2 * p.by_name.front().count >= p.syscalls) {
      yielding[i] = true;
      key[i] = p.by_name.front().name;
    } else if (const Event& first = trace_.events[g_.segments[s].first];
               enter_ != kNoKind && first.kind == enter_ && enter_name_ >= 0) {
      key[i] = static_cast<StrId>(trace_.value(first, enter_name_));
    }
    if (strong_in_[s]) key[i] = kNone;
  }
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i + 1;
    bool any_yielding = yielding[i];
    if (key[i] != kNone) {
      for (; j < n && key[j] == key[i]; ++j) any_yielding = any_yielding || yielding[j];
    }
    const bool merge = j - i >= kMinMergedRun || (j - i > 1 && any_yielding);
    if (merge) {
      const uint32_t first = t.begin + i, last = t.begin + j - 1;
      out.push_back({t.tid, g_.segments[first].start_ns, segment_end(t, last), first, last});
    } else {
      for (uint32_t k = i; k < j; ++k) {
        const uint32_t s = t.begin + k;
        out.push_back({t.tid, g_.segments[s].start_ns, segment_end(t, s), s, s});
      }
    }
    i = j;
  }
}

// Const once prepare_shared_lookups() has run, so threads may call it side by side.
std::vector<Stretch> Finder::stretches(const Graph::ThreadSegments& t) const {
  std::vector<Stretch> out;
  if (t.begin == t.end) return out;
  if (has_loop_cut(t))
    loop_stretches(t, out);
  else
    segment_stretches(t, out);
  return out;
}

}  // namespace symptom_detail
}  // namespace cw::engine
