// Who owns the locks that threads are still blocked on when a recording ends, where the
// lock keeps its owner's thread id beside the word a waiter sleeps on (glibc's
// pthread_mutex_t: the futex word at 0, __owner at 8). Where it is comes from the packs
// (a `holder` rule, docs/rules.md), not from the recorder: the recorder reads /proc for
// threads blocked in the rule's system call and the owner word from their memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/lock_wait.h"

namespace cw {

// Reads `n` bytes at `addr` in process `pid`; false when it cannot.
using MemoryReader = std::function<bool(uint32_t pid, uint64_t addr, void* out, size_t n)>;
bool read_process_memory(uint32_t pid, uint64_t addr, void* out, size_t n);

// The threads under `proc_root` of the processes `keep` accepts that are blocked in a
// field's system calls (named by `syscall_name`), with the owner each one's lock names.
// An owner is believed only when it is another thread of the waiter's process (a word
// that is not a mutex's owner field rarely is): `lock` says "owner (RULE)", `object` is
// the waited-on address.
// Fields with `peer` set are not this function's.
std::vector<LockWait> find_owner_waits(
    const std::vector<HolderField>& fields,
    const std::function<std::string_view(uint32_t)>& syscall_name,
    const std::function<bool(uint32_t pid)>& keep, const std::string& proc_root = "/proc",
    const MemoryReader& read = read_process_memory);

}  // namespace cw
