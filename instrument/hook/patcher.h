// Installing and removing inline hooks in this process, without libstdc++ so the preload
// library can use it as is (inline_hook.h is the C++ face of this).
//
// Install: the prologue is relocated into a trampoline near the function, a stub that
// records the entry is written next to it, every other thread is parked, the function's
// first 5 bytes become a jmp to the stub (one atomic 8-byte store when they share an
// aligned word), parked threads stopped inside those bytes are moved to the matching
// instruction of the trampoline, the threads are released and every core serialized
// (membarrier SYNC_CORE). Remove: the same in reverse; trampolines and stubs stay, since a
// thread may still be running in them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cw::hook {

// Hooks the function at `address` (`size_hint`: its symbol size, 0 if unknown); its events
// carry `index`. Returns a hook id (> 0), or 0 with a one-line `reason` (NUL-terminated)
// when the function cannot be hooked safely.
uint32_t install(uint64_t address, size_t size_hint, uint32_t index, char* reason,
                 size_t reason_size);
// Restores the function's bytes. False with `reason` when `id` is not installed, its bytes
// were changed by someone else, or the threads cannot be parked.
bool remove(uint32_t id, char* reason, size_t reason_size);

// Parked threads moved from patched bytes into a trampoline, since the process started.
uint64_t threads_moved();

// Fork safety: no patching across fork (pthread_atfork handlers of the preload library).
void lock_patching();
void unlock_patching();

}  // namespace cw::hook
