// The processes and threads running when a recording starts, read from /proc, so the
// recording can name threads it never saw being created.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cw {

struct ProcThread {
  uint32_t tid = 0;
  uint32_t pid = 0;
  std::string comm;
  bool kernel = false;  // a kernel thread (PF_KTHREAD)
};

struct ProcProcess {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string comm;
  std::string exe;  // "" for kernel threads and when unreadable
  std::vector<ProcThread> threads;
};

// Every process under `proc_root` (default /proc); processes that vanish while being
// read are skipped.
std::vector<ProcProcess> snapshot_processes(const std::string& proc_root = "/proc");

}  // namespace cw
