// Whether any direct branch of a function lands inside the bytes a hook's jump replaces:
// such a branch would run half of the jump. Indirect branches (jump tables) and branches
// from other functions are not seen.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cw::hook {

// Window scanned when the function's size is unknown.
inline constexpr size_t kScanWindowBytes = 16384;

// Scans the function at `address` (`code` holds `available` bytes from there): all of it
// when `size_hint` is known, else by linear sweep up to the first ret or unconditional jmp
// past every forward branch seen (the usual end of a function), within kScanWindowBytes.
// Returns true and writes `reason` (NUL-terminated) if a direct jmp, jcc, call, loop or
// jrcxz targets (address, address + patched).
bool find_branch_into_patch(const uint8_t* code, size_t available, uint64_t address,
                            size_t size_hint, size_t patched, char* reason, size_t reason_size);

}  // namespace cw::hook
