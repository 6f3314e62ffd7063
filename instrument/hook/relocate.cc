#include "instrument/hook/relocate.h"

#include <cstring>

#include "instrument/hook/decoder.h"
#include "instrument/hook/reason.h"

namespace cw::hook {
namespace {

bool fits_rel32(int64_t value) {
  return value >= INT32_MIN && value <= INT32_MAX;
}

class Emitter {
 public:
  explicit Emitter(RelocatedPrologue* out) : out_(out) {}
  bool room(size_t bytes) const { return out_->size + bytes <= kMaxTrampolineBytes; }
  uint64_t offset() const { return out_->size; }
  void byte(uint8_t b) { out_->code[out_->size++] = b; }
  void bytes(const uint8_t* p, size_t n) {
    memcpy(out_->code + out_->size, p, n);
    out_->size += n;
  }
  void u32(uint32_t v) { bytes(reinterpret_cast<const uint8_t*>(&v), 4); }
  void u64(uint64_t v) { bytes(reinterpret_cast<const uint8_t*>(&v), 8); }

 private:
  RelocatedPrologue* out_;
};

// A jmp or call to `to` from trampoline + the emitter's offset: `opcode` rel32 when in
// reach, else the absolute form `far` followed by the address.
template <size_t N>
void emit_direct(Emitter& e, uint64_t trampoline, uint8_t opcode, const uint8_t (&far)[N],
                 uint64_t to) {
  const int64_t rel = static_cast<int64_t>(to - (trampoline + e.offset() + 5));
  if (fits_rel32(rel)) {
    e.byte(opcode);
    e.u32(static_cast<uint32_t>(rel));
  } else {
    e.bytes(far, N);
    e.u64(to);
  }
}

constexpr uint8_t kJmpAbsolute[] = {0xff, 0x25, 0, 0, 0, 0};  // jmp [rip+0]; .quad to
// call [rip+2]; jmp over the address; .quad to
constexpr uint8_t kCallAbsolute[] = {0xff, 0x15, 2, 0, 0, 0, 0xeb, 8};

void emit_jump(Emitter& e, uint64_t trampoline, uint64_t to) {
  emit_direct(e, trampoline, 0xe9, kJmpAbsolute, to);
}
void emit_call(Emitter& e, uint64_t trampoline, uint64_t to) {
  emit_direct(e, trampoline, 0xe8, kCallAbsolute, to);
}

void emit_conditional(Emitter& e, uint64_t trampoline, uint8_t condition, uint64_t to) {
  int64_t rel = static_cast<int64_t>(to - (trampoline + e.offset() + 6));
  if (fits_rel32(rel)) {
    e.byte(0x0f);
    e.byte(static_cast<uint8_t>(0x80 | condition));
    e.u32(static_cast<uint32_t>(rel));
  } else {
    // The inverse condition skips the absolute jump (6 + 8 bytes).
    e.byte(static_cast<uint8_t>(0x70 | (condition ^ 1)));
    e.byte(14);
    emit_jump(e, trampoline, to);  // out of rel32 reach, so the 14-byte form
  }
}

// The condition code (low nibble) of a jcc, or -1 if `insn` is not one. Prefixes (branch
// hints, bnd) are dropped with the old encoding.
int condition_code(const cs_insn* insn) {
  const uint8_t* op = insn->detail->x86.opcode;
  if (op[0] >= 0x70 && op[0] <= 0x7f) return op[0] & 15;
  if (op[0] == 0x0f && op[1] >= 0x80 && op[1] <= 0x8f) return op[1] & 15;
  return -1;
}

bool uses_rip(const cs_insn* insn) {
  const cs_x86& x86 = insn->detail->x86;
  for (uint8_t i = 0; i < x86.op_count; ++i)
    if (x86.operands[i].type == X86_OP_MEM && x86.operands[i].mem.base == X86_REG_RIP) return true;
  return false;
}

}  // namespace

bool relocate_prologue(const uint8_t* code, size_t available, uint64_t address, size_t size_hint,
                       uint64_t trampoline, RelocatedPrologue* out, char* reason,
                       size_t reason_size) {
  *out = RelocatedPrologue{};
  if (size_hint && size_hint < kJumpBytes)
    return refuse(reason, reason_size,
                  "the function at 0x%lx is %zu bytes long, shorter than the %zu-byte jump",
                  address, size_hint, kJumpBytes);
  Decoder decoder;
  if (!decoder.ok()) return refuse(reason, reason_size, "Capstone failed to open (x86-64)");
  Emitter e(out);
  size_t offset = 0;
  uint64_t branch_targets[kMaxPatchedInstructions];
  size_t branch_offsets[kMaxPatchedInstructions];
  size_t branches = 0;
  while (offset < kJumpBytes) {
    if (offset >= available)
      return refuse(reason, reason_size, "only %zu bytes are readable at 0x%lx", available,
                    address);
    const cs_insn* insn = decoder.decode(code, available, offset, address);
    if (!insn)
      return refuse(reason, reason_size, "cannot decode the instruction at 0x%lx (+%zu)",
                    address + offset, offset);
    const uint64_t at = address + offset;
    const size_t size = insn->size;
    const uint64_t target = direct_branch_target(insn);
    out->original_offset[out->instructions] = static_cast<uint8_t>(offset);
    out->relocated_offset[out->instructions] = static_cast<uint8_t>(e.offset());
    ++out->instructions;
    if (!e.room(24)) return refuse(reason, reason_size, "the relocated prologue is too long");

    bool unconditional_end = false;
    if (insn->id == X86_INS_INT3)
      return refuse(reason, reason_size,
                    "int3 at 0x%lx (+%zu) cannot be relocated: a breakpoint or probe is there", at,
                    offset);
    if (insn->id == X86_INS_LOOP || insn->id == X86_INS_LOOPE || insn->id == X86_INS_LOOPNE ||
        insn->id == X86_INS_JRCXZ || insn->id == X86_INS_JECXZ || insn->id == X86_INS_JCXZ ||
        insn->id == X86_INS_XBEGIN)
      return refuse(reason, reason_size,
                    "'%s %s' at 0x%lx (+%zu) cannot be relocated: it has no 32-bit "
                    "displacement form",
                    insn->mnemonic, insn->op_str, at, offset);
    if (target) {
      if (insn->detail->x86.prefix[2] == X86_PREFIX_OPSIZE)
        return refuse(reason, reason_size,
                      "'%s %s' at 0x%lx (+%zu) cannot be relocated: 16-bit branch", insn->mnemonic,
                      insn->op_str, at, offset);
      int condition = condition_code(insn);
      if (insn->id == X86_INS_CALL) {
        emit_call(e, trampoline, target);
      } else if (condition >= 0) {
        emit_conditional(e, trampoline, static_cast<uint8_t>(condition), target);
      } else if (insn->id == X86_INS_JMP) {
        emit_jump(e, trampoline, target);
        unconditional_end = true;
      } else {
        return refuse(reason, reason_size, "'%s %s' at 0x%lx (+%zu) cannot be relocated",
                      insn->mnemonic, insn->op_str, at, offset);
      }
      branch_targets[branches] = target;
      branch_offsets[branches++] = offset;
    } else if (decoder.in_group(insn, CS_GRP_BRANCH_RELATIVE)) {
      return refuse(reason, reason_size, "'%s %s' at 0x%lx (+%zu) cannot be relocated",
                    insn->mnemonic, insn->op_str, at, offset);
    } else if (uses_rip(insn)) {
      const cs_x86& x86 = insn->detail->x86;
      const size_t disp_at = x86.encoding.disp_offset;
      int32_t old_disp;
      if (disp_at == 0 || x86.encoding.disp_size != 4 || disp_at + 4 > size)
        return refuse(reason, reason_size,
                      "'%s %s' at 0x%lx (+%zu): no 32-bit displacement found to re-aim",
                      insn->mnemonic, insn->op_str, at, offset);
      memcpy(&old_disp, insn->bytes + disp_at, 4);
      if (old_disp != x86.disp)
        return refuse(reason, reason_size,
                      "'%s %s' at 0x%lx (+%zu): the displacement bytes do not match the decoder",
                      insn->mnemonic, insn->op_str, at, offset);
      const uint64_t referenced = at + size + static_cast<int64_t>(old_disp);
      const int64_t new_disp = static_cast<int64_t>(referenced - (trampoline + e.offset() + size));
      if (!fits_rel32(new_disp))
        return refuse(reason, reason_size,
                      "'%s %s' at 0x%lx (+%zu) addresses 0x%lx, out of reach (±2 GB) of the "
                      "trampoline at 0x%lx",
                      insn->mnemonic, insn->op_str, at, offset, referenced, trampoline);
      uint8_t copy[16];
      memcpy(copy, insn->bytes, size);
      const int32_t disp32 = static_cast<int32_t>(new_disp);
      memcpy(copy + disp_at, &disp32, 4);
      e.bytes(copy, size);
      unconditional_end = insn->id == X86_INS_JMP;
    } else {
      if (decoder.in_group(insn, CS_GRP_RET)) {
        if (!size_hint)
          return refuse(reason, reason_size,
                        "the function at 0x%lx returns at +%zu, within the %zu bytes the jump "
                        "needs",
                        address, offset, kJumpBytes);
      }
      unconditional_end = insn->id == X86_INS_JMP;
      e.bytes(insn->bytes, size);
    }
    if (decoder.in_group(insn, CS_GRP_CALL) && offset + size < kJumpBytes)
      return refuse(reason, reason_size,
                    "'%s %s' at 0x%lx (+%zu) returns to +%zu, inside the bytes the jump "
                    "replaces",
                    insn->mnemonic, insn->op_str, at, offset, offset + size);
    offset += size;
    if (unconditional_end && offset < kJumpBytes && !size_hint)
      return refuse(reason, reason_size,
                    "the function at 0x%lx may end with the jump at +%zu, within the %zu bytes "
                    "the jump needs (its size is unknown)",
                    address, offset - size, kJumpBytes);
  }
  out->patched = offset;
  if (size_hint && offset > size_hint)
    return refuse(reason, reason_size,
                  "the function at 0x%lx is %zu bytes long, shorter than the %zu bytes its "
                  "first instructions take",
                  address, size_hint, offset);
  for (size_t i = 0; i < branches; ++i)
    if (branch_targets[i] > address && branch_targets[i] < address + offset)
      return refuse(reason, reason_size,
                    "the branch at 0x%lx (+%zu) jumps to +%lu, inside the %zu bytes the jump "
                    "replaces",
                    address + branch_offsets[i], branch_offsets[i], branch_targets[i] - address,
                    offset);
  emit_jump(e, trampoline, address + offset);
  return true;
}

}  // namespace cw::hook
