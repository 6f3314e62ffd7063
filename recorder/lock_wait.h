// A lock a thread was still waiting for when a recording ended, and who held it then: a
// hang still in progress has no waker yet, and its holder is the next best evidence. Read
// from /proc/locks (recorder/proc_locks.h) and from a mutex's owner field
// (recorder/mutex_owner.h); written into the trace as lock_held and lock_wait events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cw {

struct LockWait {
  uint32_t waiter_pid = 0, waiter_tid = 0;
  int64_t holder_pid = -1;  // -1: no process named (an OFD lock is owned by an open file)
  uint32_t holder_tid = 0;  // 0: the holder process's main thread stands for it
  uint64_t object = 0;      // the lock: a locked file's inode, a mutex's address
  std::string lock;         // what kind of lock, e.g. "FLOCK WRITE"
};

// A pack's `holder` rule as the recorder needs it (rules::HolderRule): a thread still
// blocked in one of `syscalls` waits for the owner whose tid is the `size`-byte word
// `offset` bytes from the call's first argument (recorder/mutex_owner.h) or, with `peer`, for
// the process at the other end of the stream the first argument's fd names
// (recorder/stream_peer.h).
struct HolderField {
  std::string rule;  // its id, e.g. glibc.pthread/mutex.owner
  std::vector<std::string> syscalls;
  bool peer = false;
  int64_t offset = 0;
  int size = 4;
};

}  // namespace cw
