// What a thread did over a stretch of time, from its scheduler and system-call events:
// time on a CPU, runnable, blocked; its longest block and the call it was in; which
// system calls it made. Diagnosis classifies hangs and compares segments with it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/graph/graph.h"
#include "trace/column.h"
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
  // Of that, after a switch_out in state D: the kernel's uninterruptible sleep, in which a
  // task waits for a device (a disk write's completion, a page read in) or a kernel lock,
  // not for another program.
  uint64_t uninterruptible_ns = 0;
  // Where a scheduler event is missing (a switch_in with no switch_out before it, or the
  // reverse), the thread's state in between is not known: it counts here, not as
  // running, runnable or blocked.
  uint64_t unknown_ns = 0;
  // When the thread exited (its switch_out with state X or Z) within or before the range,
  // 0 if it did not: after that it is neither running nor blocked.
  uint64_t exited_ns = 0;
  // The longest wait, and the system call open across it (its syscall_enter event), or
  // kNoIndex when the thread blocked outside a recorded call. The interruptible sleeps of one
  // call are one wait, from the first one's start to the last one's end: a wait woken by
  // something it was not waiting for (a reader woken as another reader drains the stream, a
  // futex's spurious wake-up) sleeps again inside the call, and the call is what its caller
  // waited on. `longest_block_last_start` is when the last of its blocks began (what ended that
  // one ended the wait); the wait's own start when it is one block.
  uint64_t longest_block_ns = 0;
  uint64_t longest_block_start = 0;
  uint64_t longest_block_last_start = 0;
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

// When the last sleep of `p`'s longest wait began: what ended the wait landed after it (a
// wake-up that ended an earlier sleep of the call let the thread look, and find nothing).
inline uint64_t last_sleep_start(const SegmentProfile& p) {
  return std::max(p.longest_block_start, p.longest_block_last_start);
}

// A thread's event indexes (into Trace::events), ascending.
using EventList = std::span<const uint32_t>;

// Events of each thread, in time order (indexes into Trace::events). Built once per
// trace for the threads diagnosis looks at. Each kind of list is one flat array with an
// offset per thread, so the whole index can be kept in the derived cache and mapped back
// (engine/cache: building it is a pass over every event, a third of a diagnosis).
class ThreadEvents {
 public:
  // The three lists' flat arrays: thread i's part of `events` is
  // [events_at[i], events_at[i + 1]), and so on; each offsets array has tids.size() + 1
  // entries, starting at 0, ascending, ending at its list's size.
  struct Parts {
    Column<Tid> tids;  // sorted, distinct
    Column<uint32_t> events, switches, syscalls;
    Column<uint32_t> events_at, switches_at, syscalls_at;
  };

  // Indexes the given threads (all threads when `tids` is empty) in one pass.
  ThreadEvents(const Trace& trace, const std::vector<Tid>& tids = {});
  // An index kept before (the cache's) of a trace of `events` events, after checking that
  // its offsets hold together and its lists name that trace's events in order (throws
  // std::invalid_argument when not). With `lists_checked` (an index checked in full by an
  // earlier run, its file unchanged since: the cache's checked_entries.h), each list's last
  // event alone is checked, not every event's order.
  ThreadEvents(Parts parts, uint64_t events, bool lists_checked = false);

  // The thread's events, empty when the thread was not indexed.
  EventList of(Tid tid) const { return list(parts_.events, parts_.events_at, tid); }
  // The thread's switch_out / switch_in events, and its syscall_enter / syscall_exit
  // events (subsets of of(tid)), so a profile finds the state at a range's start by
  // binary search.
  EventList switches_of(Tid tid) const { return list(parts_.switches, parts_.switches_at, tid); }
  EventList syscalls_of(Tid tid) const { return list(parts_.syscalls, parts_.syscalls_at, tid); }
  // The indexed threads, sorted.
  std::span<const Tid> tids() const { return {parts_.tids.data(), parts_.tids.size()}; }
  const Parts& parts() const { return parts_; }

 private:
  EventList list(const Column<uint32_t>& flat, const Column<uint32_t>& at, Tid tid) const;
  Parts parts_;
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
