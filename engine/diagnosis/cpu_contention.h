// CPU contention: a thread that wanted a CPU and did not get it. The scheduler preempts it
// (a switch_out in state R) and runs others on that CPU until it runs again; no wake-up
// joins them, so the graph has no edge for it. What the thread waited for is the time the
// others ran on the CPU it was waiting on: they are its culprits when that wait, not its
// own work, made it slow.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/diagnosis/segment_profile.h"
#include "trace/trace.h"

namespace cw::engine {

struct CpuTaker {
  Tid tid = 0;
  uint64_t ran_ns = 0;              // on the waiting thread's CPU while it waited there
  uint32_t longest_run = kNoIndex;  // the switch_in that began its longest such run
  uint64_t longest_run_ns = 0;
};

struct CpuContention {
  uint64_t runnable_ns = 0;      // preempted (state R) until it ran again, within the range
  uint64_t taken_ns = 0;         // of that, what other threads ran on its CPU
  std::vector<CpuTaker> takers;  // most first; the idle task (tid 0) is not one
};

// Who ran on `tid`'s CPU while it was preempted, between start_ns and end_ns: for each
// switch_out of state R, the threads switched in on that CPU until `tid` ran again, each
// charged until the next switch on that CPU. A preempted thread that migrates waits on the
// CPU it left. Bounded by the events within those waits.
CpuContention cpu_contention(const Trace& trace, const ThreadEvents& events, Tid tid,
                             uint64_t start_ns, uint64_t end_ns);

// Whether a thread busy over a stretch (profiled as `p`) was slow because it did not get a
// CPU: it waited for one (runnable) at least three times as long as it ran. A thread
// sharing a CPU fairly with one or two others runs a half or a third of the time and is
// still slow by its own work; one that ran a quarter of the time or less was held back.
bool starved_of_cpu(const SegmentProfile& p);

}  // namespace cw::engine
