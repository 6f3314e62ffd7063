// The system calls the recorder records on this architecture (x86_64), by number, with
// the class that tells the eBPF side how to decode their arguments (kernel/records.h).
//
// This is a recorder's decoding table, like strace's: which of these calls are waits or
// causal hand-offs is for rule packs to say (stdlib-rules/linux-kernel).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace cw::kernel {

struct SyscallInfo {
  uint32_t nr;
  std::string_view name;  // the kernel's name without the sys_ prefix: "futex", "read"
  uint32_t sys_class;     // enum cw_sys_class
};

// Every syscall the recorder records, in number order.
const std::vector<SyscallInfo>& recorded_syscalls();
// The name of syscall `nr`, or "" when it is not in the table.
std::string_view syscall_name(uint32_t nr);

// Names of operation codes as the trace writes them in syscall_enter's `op` field:
// lower case, without the FUTEX_/F_/LOCK_ prefix and flag bits ("wait", "wake",
// "wait_bitset", "setlkw", "ex"). "" for codes it does not know.
std::string_view futex_op_name(uint32_t op);  // op already masked of PRIVATE/CLOCK_REALTIME
std::string_view fcntl_cmd_name(uint32_t cmd);
std::string_view flock_op_name(uint32_t op);  // LOCK_NB is stripped
// The name of syscall `nr`'s recorded `op` (cw_rec_sys_enter.op), by whichever of the
// tables above applies to that syscall; "" when it has no named operation.
std::string_view syscall_op_name(uint32_t nr, uint32_t op);
// The kernel's name of softirq vector `vec` ("TIMER", "NET_RX", ...), "" when unknown.
std::string_view softirq_name(uint32_t vec);

}  // namespace cw::kernel
