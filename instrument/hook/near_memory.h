// Executable slots within ±2 GB of a hooked function, so the 5-byte jmp rel32 reaches the
// hook's stub and the relocated prologue still reaches what its rip-relative operands and
// branches address. Slots are carved from pages mapped in free gaps next to the target
// (found in /proc/self/maps, mapped with MAP_FIXED_NOREPLACE) and are never freed: a
// thread may still be running in a removed hook's trampoline.
#pragma once

#include <cstddef>
#include <cstdint>

#include "instrument/hook/proc_maps.h"

namespace cw::hook {

inline constexpr size_t kSlotBytes = 256;
inline constexpr size_t kSlotStubOffset = 32;
inline constexpr size_t kSlotTrampolineOffset = 64;

// Whether `a` and `b` are close enough for a rel32 between anything in their pages.
bool within_rel32(uint64_t a, uint64_t b);

// A slot near `near`, or 0 with `reason` set. Pages are mapped read+exec; the caller makes
// a page writable to fill a slot (while every other thread is parked).
uint64_t allocate_slot(uint64_t near, const ProcMaps& maps, char* reason, size_t reason_size);

// Gives back the slot allocate_slot() returned last (a hook refused after all).
void release_slot(uint64_t slot);

// The page holding `slot`.
inline uint64_t slot_page(uint64_t slot) {
  return slot & ~uint64_t{4095};
}

}  // namespace cw::hook
