// Moving a function's first instructions somewhere else (the trampoline) so they still do
// the same thing: rip-relative operands and relative branches are re-aimed, short branches
// widened to 32-bit displacements (or absolute jumps when out of reach). Decoding is
// Capstone's; everything here is pure over bytes and addresses, so it is tested with byte
// vectors.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cw::hook {

// The patch: jmp rel32.
inline constexpr size_t kJumpBytes = 5;
inline constexpr size_t kMaxTrampolineBytes = 176;
// At most this many instructions cover kJumpBytes (one byte each at the least).
inline constexpr size_t kMaxPatchedInstructions = kJumpBytes;

struct RelocatedPrologue {
  uint8_t code[kMaxTrampolineBytes];
  size_t size = 0;     // bytes of `code`, the jump back included
  size_t patched = 0;  // original bytes covered, >= kJumpBytes
  // Where each instruction of the patched bytes starts, there and in `code`: a thread
  // stopped at original_offset[i] continues at relocated_offset[i].
  size_t instructions = 0;
  uint8_t original_offset[kMaxPatchedInstructions];
  uint8_t relocated_offset[kMaxPatchedInstructions];
};

// Relocates the instructions that cover the first kJumpBytes of the function at `address`
// (`code` holds `available` bytes read from there) to run at `trampoline`, followed by a
// jump back to address + patched. `size_hint` is the function's symbol size, 0 if unknown.
// Returns false with a one-line `reason` (NUL-terminated, truncated to `reason_size`) when
// that cannot be done safely: the function is shorter than the jump, an instruction cannot
// move (int3, loop/jrcxz, xbegin, rip-relative beyond ±2 GB of the trampoline), or a
// relocated branch lands inside the patched bytes.
bool relocate_prologue(const uint8_t* code, size_t available, uint64_t address, size_t size_hint,
                       uint64_t trampoline, RelocatedPrologue* out, char* reason,
                       size_t reason_size);

}  // namespace cw::hook
