// One x86-64 instruction at a time with Capstone (detail on), for the prologue relocation
// and the branch scan. Capstone allocates with malloc: never use it while threads are
// parked.
#pragma once

#include <capstone/capstone.h>

#include <cstddef>
#include <cstdint>

namespace cw::hook {

class Decoder {
 public:
  Decoder() {
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle_) != CS_ERR_OK) return;
    cs_option(handle_, CS_OPT_DETAIL, CS_OPT_ON);
    insn_ = cs_malloc(handle_);
  }
  ~Decoder() {
    if (insn_) cs_free(insn_, 1);
    if (handle_) cs_close(&handle_);
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  bool ok() const { return insn_ != nullptr; }
  // Decodes the instruction at code[offset] (address + offset); null if invalid.
  const cs_insn* decode(const uint8_t* code, size_t size, size_t offset, uint64_t address) {
    const uint8_t* at = code + offset;
    size_t left = size - offset;
    uint64_t pc = address + offset;
    if (!cs_disasm_iter(handle_, &at, &left, &pc, insn_)) return nullptr;
    return insn_;
  }
  bool in_group(const cs_insn* insn, uint8_t group) const {
    return cs_insn_group(handle_, insn, group);
  }

 private:
  csh handle_ = 0;
  cs_insn* insn_ = nullptr;
};

// The destination of a direct (immediate) jmp, jcc, call, loop or jrcxz, or 0.
inline uint64_t direct_branch_target(const cs_insn* insn) {
  const cs_x86& x86 = insn->detail->x86;
  bool branch = insn->id == X86_INS_JMP || insn->id == X86_INS_CALL ||
                (insn->id >= X86_INS_JAE && insn->id <= X86_INS_JS) || insn->id == X86_INS_LOOP ||
                insn->id == X86_INS_LOOPE || insn->id == X86_INS_LOOPNE ||
                insn->id == X86_INS_XBEGIN;
  if (!branch || x86.op_count != 1 || x86.operands[0].type != X86_OP_IMM) return 0;
  return static_cast<uint64_t>(x86.operands[0].imm);
}

}  // namespace cw::hook
