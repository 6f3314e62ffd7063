#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "kernel/probes.h"

namespace cw::kernel {
namespace {

// The effective capability set, from capget (libcap is not a dependency).
uint64_t effective_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capget, &header, data) != 0) return 0;
  return static_cast<uint64_t>(data[0].effective) |
         (static_cast<uint64_t>(data[1].effective) << 32);
}

bool has(uint64_t caps, int cap) {
  return (caps >> cap) & 1;
}

}  // namespace

std::string missing_privileges() {
  uint64_t caps = effective_capabilities();
  bool sys_admin = has(caps, CAP_SYS_ADMIN);
  bool bpf = has(caps, CAP_BPF) || sys_admin;
  bool perfmon = has(caps, CAP_PERFMON) || sys_admin;
  if (bpf && perfmon) {
    // Kernels with memcg accounting of BPF memory ignore the memlock limit; raise it where
    // allowed for the others.
    rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_MEMLOCK, &unlimited);
    return "";
  }
  const char* lacking = !bpf && !perfmon ? "this process has neither"
                        : !bpf           ? "this process lacks CAP_BPF"
                                         : "this process lacks CAP_PERFMON";
  return std::string("recording needs root, or the capabilities CAP_BPF and CAP_PERFMON (") +
         lacking + "); run with sudo";
}

}  // namespace cw::kernel
