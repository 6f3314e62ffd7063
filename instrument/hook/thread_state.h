// What each thread keeps for the hook stubs (hook_stubs.S): the reentrancy guard, the shadow
// stack of real return addresses, and where its next event goes. One initial-exec TLS
// block per thread, zero at thread start. The offsets are shared with the assembly, so
// they are plain macros checked against the struct below.
#pragma once

#define CW_TS_BUSY 0
#define CW_TS_DEPTH 4
#define CW_TS_GENERATION 8
#define CW_TS_EVENTS 16
#define CW_TS_PUBLISHED 24
#define CW_TS_USED 32
#define CW_TS_CAPACITY 36
#define CW_TS_TID 40
#define CW_TS_SHADOW 64
#define CW_TS_SHADOW_CAPACITY 128
#define CW_SHADOW_ENTRY_SHIFT 5  // 32-byte entries

// HookDesc, the per-hook record a generated entry stub passes in r11.
#define CW_DESC_TRAMPOLINE 0
#define CW_DESC_ADDRESS 8
#define CW_DESC_INDEX 16
#define CW_DESC_HOOK 20

#ifndef __ASSEMBLER__
#include <cstddef>
#include <cstdint>

#include "instrument/hook/log_format.h"

namespace cw::hook {

struct HookDesc {
  uint64_t trampoline;  // relocated prologue, then a jump back to address + patched bytes
  uint64_t address;     // the hooked function
  // The second half of its events, in this order (log::Event): one 8-byte load.
  uint32_t index;  // the function index events carry
  uint32_t hook;   // the hook id (patcher.cc); its address is in the log's hook table
};

struct ShadowEntry {
  uint64_t return_address;  // the caller's, replaced on the stack by the exit stub's
  uint64_t slot;            // where it was on the stack: matches the frame at exit
  const HookDesc* desc;
  uint64_t caller_r11;  // the stub borrows r11; restored at exit (see hook_stubs.S)
};

struct ThreadState {
  uint8_t busy;  // inside hook code, or recording paused (fork): calls pass through
  uint8_t pad[3];
  uint32_t depth;       // shadow entries in use
  uint64_t generation;  // the event log `events` belongs to (see event_sink.h)
  log::Event* events;   // the claimed chunk's events, or null
  uint32_t* published;  // the claimed chunk's `used`
  uint32_t used;
  uint32_t capacity;
  uint32_t tid;          // cached; 0 until the first claim
  uint32_t chunk;        // the claimed chunk, index + 1, or 0 (the slow path's)
  uint64_t chunk_claim;  // its claim number
  uint64_t pad2;
  ShadowEntry shadow[CW_TS_SHADOW_CAPACITY];
};

static_assert(offsetof(ThreadState, busy) == CW_TS_BUSY);
static_assert(offsetof(ThreadState, depth) == CW_TS_DEPTH);
static_assert(offsetof(ThreadState, generation) == CW_TS_GENERATION);
static_assert(offsetof(ThreadState, events) == CW_TS_EVENTS);
static_assert(offsetof(ThreadState, published) == CW_TS_PUBLISHED);
static_assert(offsetof(ThreadState, used) == CW_TS_USED);
static_assert(offsetof(ThreadState, capacity) == CW_TS_CAPACITY);
static_assert(offsetof(ThreadState, tid) == CW_TS_TID);
static_assert(offsetof(ThreadState, shadow) == CW_TS_SHADOW);
static_assert(sizeof(ShadowEntry) == 1 << CW_SHADOW_ENTRY_SHIFT);
static_assert(offsetof(HookDesc, trampoline) == CW_DESC_TRAMPOLINE);
static_assert(offsetof(HookDesc, address) == CW_DESC_ADDRESS);
static_assert(offsetof(HookDesc, index) == CW_DESC_INDEX);
static_assert(offsetof(HookDesc, hook) == CW_DESC_HOOK);
static_assert(offsetof(log::Event, fn_index) + 4 == offsetof(log::Event, hook));

}  // namespace cw::hook

extern "C" {
// This thread's state; initial-exec TLS so the stubs reach it with one %fs-relative load.
extern __thread cw::hook::ThreadState cw_hook_thread
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
// Where generated entry stubs jump (r11 = HookDesc*), and where hooked functions return.
void cw_hook_enter() __attribute__((visibility("hidden")));
void cw_hook_exit() __attribute__((visibility("hidden")));
}
#endif
