#include "recorder/pid_namespace.h"

#include <fmt/format.h>
#include <sys/stat.h>

namespace cw {

std::string pid_namespace_problem(uint64_t inode) {
  if (inode == kInitialPidNamespaceInode) return "";
  return fmt::format(
      "cannot record inside a PID namespace (a container; pid:[{}]): the kernel reports the "
      "host's pids, while /proc, --pid and this process's own pid here are the namespace's, so "
      "the trace's processes, names and memory maps would not match its events. Record from the "
      "host's PID namespace instead: on the host (with --pid HOST_PID for a container's "
      "process), in a container that shares the host's pids (docker run --pid=host), or through "
      "'nsenter --target 1 --pid --mount' from a privileged container",
      inode);
}

std::string pid_namespace_problem() {
  struct stat st {};
  // An unreadable link says nothing either way: recording goes on as before.
  if (::stat("/proc/self/ns/pid", &st) != 0) return "";
  return pid_namespace_problem(static_cast<uint64_t>(st.st_ino));
}

}  // namespace cw
