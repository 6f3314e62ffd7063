// What /proc says a thread is blocked in: /proc/PID/task/TID/syscall ("NR ARG1 ... SP PC",
// or "running"), and the threads of a process. Read at the end of a recording to find who
// holds what a still-blocked thread waits for (recorder/lock_wait.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cw {

struct BlockedCall {
  uint32_t nr = 0;
  std::array<uint64_t, 6> args{};
};

// The system call the thread whose /proc folder is `task_dir` is in; nullopt when it runs
// or is not in one.
std::optional<BlockedCall> blocked_call(const std::string& task_dir);

// The numeric entries of a /proc folder (processes of /proc, threads of /proc/PID/task).
std::vector<uint32_t> numeric_entries(const std::string& dir);

}  // namespace cw
