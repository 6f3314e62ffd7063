// Who holds the file locks that recorded threads are still waiting for when a recording
// ends: /proc/locks lists each lock and, under it, the requests blocked on it ("->"); the
// waiting thread is the one whose system call's first argument is an fd on that file.
// A hang still in progress has no waker yet; its holder is the next best evidence.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/lock_wait.h"

namespace cw {

struct ProcLock {
  uint32_t id = 0;       // the line's number: a blocked request repeats its blocker's
  bool blocked = false;  // a "->" line: a request waiting for lock `id`
  std::string type;      // FLOCK, POSIX, OFDLCK, LEASE, ...
  std::string mode;      // READ, WRITE, ...
  int64_t pid = -1;      // -1 for OFD locks (owned by an open file, not a process)
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
};

// Parses /proc/locks text; lines it cannot read are skipped.
std::vector<ProcLock> parse_proc_locks(std::string_view text);

// The blocked requests of `locks` matched to their waiting threads (under `proc_root`,
// /proc/PID/task/TID/syscall and /proc/PID/fd) and their holders; `lock` is the holder's
// type and mode ("FLOCK WRITE"), `object` the file's inode.
std::vector<LockWait> find_lock_waits(const std::vector<ProcLock>& locks,
                                      const std::string& proc_root = "/proc");

}  // namespace cw
