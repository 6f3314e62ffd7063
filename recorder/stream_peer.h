// Who is at the other end of the pipe or socket a thread is still blocked on when a
// recording ends: a reader waits for whoever can write to it. Which calls wait on an fd
// comes from the packs (a `holder` rule with `peer fd`, docs/rules.md); the recorder finds
// the fd's pipe or socket in /proc/PID/fd, and the other end among every process's fds
// (pipes: the same pipe open the other way; TCP: the socket whose addresses are this
// one's swapped, /proc/net/tcp and tcp6). Unix sockets are not followed: /proc does not
// name their peers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/lock_wait.h"

namespace cw {

// The threads under `proc_root` of the processes `keep` accepts that are blocked in a
// `peer` field's system calls (named by `syscall_name`), with each process at the other
// end of their fd (up to 4 per wait). `object` is the waiter's pipe or socket inode,
// `lock` "pipe (RULE)" or "tcp peer (RULE)".
std::vector<LockWait> find_peer_waits(const std::vector<HolderField>& fields,
                                      const std::function<std::string_view(uint32_t)>& syscall_name,
                                      const std::function<bool(uint32_t pid)>& keep,
                                      const std::string& proc_root = "/proc");

}  // namespace cw
