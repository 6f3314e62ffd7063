#include "instrument/hook/branch_scan.h"

#include <cstdio>

#include "instrument/hook/decoder.h"

namespace cw::hook {

bool find_branch_into_patch(const uint8_t* code, size_t available, uint64_t address,
                            size_t size_hint, size_t patched, char* reason, size_t reason_size) {
  size_t end = size_hint ? size_hint : kScanWindowBytes;
  if (end > available) end = available;
  Decoder decoder;
  if (!decoder.ok()) {
    snprintf(reason, reason_size, "Capstone failed to open (x86-64)");
    return true;
  }
  uint64_t furthest_forward = address;  // the furthest in-function branch target seen
  size_t offset = 0;
  while (offset < end) {
    const cs_insn* insn = decoder.decode(code, end, offset, address);
    if (!insn) {
      // Data or padding: the end of the function when its size is unknown.
      if (!size_hint) break;
      ++offset;
      continue;
    }
    const uint64_t target = direct_branch_target(insn);
    if (target > address && target < address + patched) {
      snprintf(reason, reason_size,
               "'%s %s' at 0x%lx (+%zu) jumps back to +%lu, inside the %zu bytes the jump "
               "replaces",
               insn->mnemonic, insn->op_str, address + offset, offset, target - address, patched);
      return true;
    }
    if (target > furthest_forward && target < address + end && insn->id != X86_INS_CALL)
      furthest_forward = target;
    offset += insn->size;
    const bool ends_flow = decoder.in_group(insn, CS_GRP_RET) || insn->id == X86_INS_JMP ||
                           insn->id == X86_INS_UD2 || insn->id == X86_INS_HLT;
    if (!size_hint && ends_flow && address + offset > furthest_forward) break;
  }
  return false;
}

}  // namespace cw::hook
