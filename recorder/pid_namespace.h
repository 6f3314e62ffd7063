// Recording from inside a PID namespace (a container): the eBPF probes report every
// task's pid as the host (the initial PID namespace) sees it, while /proc, getpid() and
// `--pid` here give the namespace's own pids, and a host process has none here at all.
// The recorder's filter on itself, `--pid`, the process and thread names and the memory
// maps would each use a different numbering, so recording there is refused, saying why
// and what to do instead.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace cw {

// The inode of the initial PID namespace (include/linux/proc_ns.h, PROC_PID_INIT_INO),
// fixed since Linux 3.8.
inline constexpr uint64_t kInitialPidNamespaceInode = 0xEFFFFFFCu;

// Why recording cannot work in the PID namespace whose /proc/PID/ns/pid inode is `inode`;
// "" for the initial one.
std::string pid_namespace_problem(uint64_t inode);

// The same for this process (/proc/self/ns/pid); "" also when that cannot be read.
std::string pid_namespace_problem();

}  // namespace cw
