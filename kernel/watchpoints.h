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

// The threads of process `pid` now (/proc/PID/task); empty when the process is gone.
std::vector<uint32_t> threads_of(uint32_t pid);

}  // namespace cw::kernel
