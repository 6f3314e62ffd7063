// What a thread did over a stretch of time, from its scheduler and system-call events:
// time on a CPU, runnable, blocked; its longest block and the call it was in; which
// system calls it made. Diagnosis classifies hangs and compares segments with it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::engine {

inline constexpr uint32_t kNoIndex = 0xffffffffu;

struct SyscallCount {
  StrId name = 0;
  uint32_t count = 0;
};

struct SegmentProfile {
  uint64_t start_ns = 0, end_ns = 0;  // the range profiled
  uint64_t on_cpu_ns = 0;             // between switch_in and the next switch_out
  uint64_t runnable_ns = 0;           // after a switch_out with state R, until switch_in
  uint64_t blocked_ns = 0;            // after any other switch_out, until switch_in
  // Where a scheduler event is missing (a switch_in with no switch_out before it, or the
  // reverse), the thread's state in between is not known: it counts here, not as
  // running, runnable or blocked.
  uint64_t unknown_ns = 0;
  // When the thread exited (its switch_out with state X or Z) within or before the range,
  // 0 if it did not: after that it is neither running nor blocked.
  uint64_t exited_ns = 0;
  // The longest blocked interval, and the system call open across it (its syscall_enter
  // event), or kNoIndex when the thread blocked outside a recorded call.
  uint64_t longest_block_ns = 0;
  uint64_t longest_block_start = 0;
  uint32_t longest_block_call = kNoIndex;
  uint32_t longest_block_exit = kNoIndex;  // that call's syscall_exit, kNoIndex if none yet
  uint32_t blocks = 0;                     // number of blocked intervals
  uint32_t syscalls = 0;                   // system calls entered in the range
  // The longest stretch of the range with no system call entered (from its start to the
  // first, between two, from the last to its end), and the longest between two calls:
  // a loop calls all along.
  uint64_t longest_quiet_ns = 0;
  uint64_t longest_gap_ns = 0;
  std::vector<SyscallCount> by_name;  // most frequent first
  uint32_t flag_events = 0;           // flag_write / flag_read events
  uint32_t events = 0;                // the thread's events in the range
};

// Events of each thread, in time order (indexes into Trace::events). Built once per
// trace for the threads diagnosis looks at.
class ThreadEvents {
 public:
  // Indexes the given threads (all threads when `tids` is empty) in one pass.
  ThreadEvents(const Trace& trace, const std::vector<Tid>& tids = {});
  // The thread's events, empty when the thread was not indexed.
  const std::vector<uint32_t>& of(Tid tid) const;
  // The thread's switch_out / switch_in events, and its syscall_enter / syscall_exit
  // events (subsets of of(tid)), so a profile finds the state at a range's start by
  // binary search.
  const std::vector<uint32_t>& switches_of(Tid tid) const;
  const std::vector<uint32_t>& syscalls_of(Tid tid) const;
  // The indexed threads, sorted.
  const std::vector<Tid>& tids() const { return tids_; }

 private:
  const std::vector<uint32_t>& list(const std::vector<std::vector<uint32_t>>& lists, Tid tid) const;
  std::vector<Tid> tids_;                                   // sorted
  std::vector<std::vector<uint32_t>> events_;               // parallel to tids_
  std::vector<std::vector<uint32_t>> switches_, syscalls_;  // parallel to tids_
  std::vector<uint32_t> empty_;
};

// The thread's activity in [start_ns, end_ns). A thread that was off CPU when the range
// starts counts as blocked (or runnable) from `start_ns` according to its last
// switch_out before it.
SegmentProfile profile_range(const Trace& trace, const ThreadEvents& events, Tid tid,
                             uint64_t start_ns, uint64_t end_ns);
// The segment's time range of its thread; the thread's last segment, which ends at its
// last event's time, also counts the events at that time.
SegmentProfile profile_segment(const Trace& trace, const ThreadEvents& events, const Graph& graph,
                               uint32_t segment);

}  // namespace cw::engine
