// Hardware watchpoints: perf_event_open(PERF_TYPE_BREAKPOINT) on one thread, for the
// watch program of causeway.bpf.c to be attached to (Probes::attach_watchpoint).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cw::kernel {

// x86 debug registers per thread.
inline constexpr int kDebugRegisters = 4;

// Why the CPU cannot watch `size` bytes at `address`, or "" when it can: sizes 1, 2, 4, 8
// at an address aligned to the size, in the user half.
std::string watch_address_problem(uint64_t address, uint8_t size);

// Opens a breakpoint event on thread `tid` that traps after each write (or each read or
// write) of the watched bytes in user mode, sampling every hit, inherited by the threads
// `tid` creates from now on. Returns the event's fd, or -errno.
int open_watchpoint_event(uint32_t tid, uint64_t address, uint8_t size, bool writes_only);

// Whether this machine's watchpoints fire: some CPUs and hypervisors (seen on an AMD EPYC
// VM, kernel 6.18) open a breakpoint event and then never count a hit.
struct WatchSelfTest {
  int open_error = 0;   // errno of perf_event_open, 0 when it opened
  uint32_t writes = 0;  // writes made to the watched variable
  uint64_t hits = 0;    // hits the event counted
};

// Watches a variable of the calling thread, writes it `writes` times and reads the count
// (well under a millisecond where watchpoints work).
WatchSelfTest test_watchpoints(uint32_t writes = 64);

// What `record` does with the self-test's answer. `explicit_watch`: the user asked for
// watchpoints (--flags watch) rather than letting the recorder choose (--flags auto).
struct WatchDecision {
  bool use_watchpoints = true;
  bool refuse = false;  // --flags watch on a machine whose watchpoints do not work
  std::string message;  // one line for stderr and the trace; "" when they work
};
WatchDecision decide_watchpoints(bool explicit_watch, const WatchSelfTest& test);

// The threads of process `pid` now (/proc/PID/task); empty when the process is gone.
std::vector<uint32_t> threads_of(uint32_t pid);

}  // namespace cw::kernel
