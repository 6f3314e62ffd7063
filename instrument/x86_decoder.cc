#include "instrument/x86_decoder.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace cw::instrument {
namespace {

// How an instruction uses its memory operand, by the operand's position.
enum class Rule : uint8_t {
  None,           // computes an address or hints; touches no data (lea, nop, prefetch)
  Read,           // every memory operand is read
  Write,          // every memory operand is written
  ReadWrite,      // every memory operand is read and written (xchg, cmpxchg8b)
  DestWrite,      // operand 0 written, the others read (the mov family, string movs)
  DestReadWrite,  // operand 0 read and written, the others read (add, inc, xadd, shl …)
};

using RuleTable = std::unordered_map<unsigned, Rule>;

void add(RuleTable& table, Rule rule, std::initializer_list<x86_insn> ids) {
  for (x86_insn id : ids) table[id] = rule;
}

// Checked against Capstone 4.0.2's answers, which are wrong for several stores (see the
// header) and for `test m, imm` (reported as read+write).
const RuleTable& rule_table() {
  static const RuleTable table = [] {
    RuleTable t;
    add(t, Rule::None,
        {X86_INS_LEA, X86_INS_NOP, X86_INS_PREFETCH, X86_INS_PREFETCHNTA, X86_INS_PREFETCHT0,
         X86_INS_PREFETCHT1, X86_INS_PREFETCHT2, X86_INS_PREFETCHW});
    add(t, Rule::Read,
        {X86_INS_CMP,       X86_INS_TEST,     X86_INS_BT,       X86_INS_PUSH,     X86_INS_MOVZX,
         X86_INS_MOVSX,     X86_INS_MOVSXD,   X86_INS_CMOVA,    X86_INS_CMOVAE,   X86_INS_CMOVB,
         X86_INS_CMOVBE,    X86_INS_CMOVE,    X86_INS_CMOVG,    X86_INS_CMOVGE,   X86_INS_CMOVL,
         X86_INS_CMOVLE,    X86_INS_CMOVNE,   X86_INS_CMOVNO,   X86_INS_CMOVNP,   X86_INS_CMOVNS,
         X86_INS_CMOVO,     X86_INS_CMOVP,    X86_INS_CMOVS,    X86_INS_CRC32,    X86_INS_CALL,
         X86_INS_JMP,       X86_INS_LCALL,    X86_INS_LJMP,     X86_INS_MUL,      X86_INS_IMUL,
         X86_INS_DIV,       X86_INS_IDIV,     X86_INS_BSF,      X86_INS_BSR,      X86_INS_TZCNT,
         X86_INS_LZCNT,     X86_INS_POPCNT,   X86_INS_LODSB,    X86_INS_LODSW,    X86_INS_LODSD,
         X86_INS_LODSQ,     X86_INS_SCASB,    X86_INS_SCASW,    X86_INS_SCASD,    X86_INS_SCASQ,
         X86_INS_CMPSB,     X86_INS_CMPSW,    X86_INS_CMPSD,    X86_INS_CMPSQ,    X86_INS_CMPSS,
         X86_INS_FLD,       X86_INS_FILD,     X86_INS_COMISS,   X86_INS_COMISD,   X86_INS_UCOMISS,
         X86_INS_UCOMISD,   X86_INS_ADDSS,    X86_INS_ADDSD,    X86_INS_ADDPS,    X86_INS_ADDPD,
         X86_INS_SUBSS,     X86_INS_SUBSD,    X86_INS_SUBPS,    X86_INS_SUBPD,    X86_INS_MULSS,
         X86_INS_MULSD,     X86_INS_MULPS,    X86_INS_MULPD,    X86_INS_DIVSS,    X86_INS_DIVSD,
         X86_INS_DIVPS,     X86_INS_DIVPD,    X86_INS_PXOR,     X86_INS_POR,      X86_INS_PAND,
         X86_INS_PANDN,     X86_INS_PCMPEQB,  X86_INS_PCMPEQW,  X86_INS_PCMPEQD,  X86_INS_PTEST,
         X86_INS_MOVDDUP,   X86_INS_MOVSHDUP, X86_INS_MOVSLDUP, X86_INS_MOVNTDQA, X86_INS_VMOVNTDQA,
         X86_INS_LDDQU,     X86_INS_CVTSI2SD, X86_INS_CVTSI2SS, X86_INS_CVTSS2SD, X86_INS_CVTSD2SS,
         X86_INS_CVTTSD2SI, X86_INS_CVTTSS2SI});
    add(t, Rule::Write,
        {X86_INS_SETA,         X86_INS_SETAE,     X86_INS_SETB,       X86_INS_SETBE,
         X86_INS_SETE,         X86_INS_SETG,      X86_INS_SETGE,      X86_INS_SETL,
         X86_INS_SETLE,        X86_INS_SETNE,     X86_INS_SETNO,      X86_INS_SETNP,
         X86_INS_SETNS,        X86_INS_SETO,      X86_INS_SETP,       X86_INS_SETS,
         X86_INS_POP,          X86_INS_STMXCSR,   X86_INS_VSTMXCSR,   X86_INS_FNSTCW,
         X86_INS_FNSTSW,       X86_INS_FNSTENV,   X86_INS_FST,        X86_INS_FSTP,
         X86_INS_FIST,         X86_INS_FISTP,     X86_INS_FISTTP,     X86_INS_MOVNTI,
         X86_INS_MOVNTDQ,      X86_INS_MOVNTPS,   X86_INS_MOVNTPD,    X86_INS_MOVNTQ,
         X86_INS_MOVNTSD,      X86_INS_MOVNTSS,   X86_INS_VMOVNTDQ,   X86_INS_VMOVNTPS,
         X86_INS_VMOVNTPD,     X86_INS_PEXTRB,    X86_INS_PEXTRW,     X86_INS_PEXTRD,
         X86_INS_PEXTRQ,       X86_INS_VPEXTRB,   X86_INS_VPEXTRW,    X86_INS_VPEXTRD,
         X86_INS_VPEXTRQ,      X86_INS_EXTRACTPS, X86_INS_VEXTRACTPS, X86_INS_VEXTRACTF128,
         X86_INS_VEXTRACTI128, X86_INS_STOSB,     X86_INS_STOSW,      X86_INS_STOSD,
         X86_INS_STOSQ});
    add(t, Rule::ReadWrite, {X86_INS_XCHG, X86_INS_CMPXCHG8B, X86_INS_CMPXCHG16B});
    add(t, Rule::DestWrite,
        {X86_INS_MOV,       X86_INS_MOVABS,    X86_INS_MOVAPS,  X86_INS_MOVAPD,   X86_INS_MOVUPS,
         X86_INS_MOVUPD,    X86_INS_MOVDQA,    X86_INS_MOVDQU,  X86_INS_MOVD,     X86_INS_MOVQ,
         X86_INS_MOVSS,     X86_INS_MOVSD,     X86_INS_MOVHPS,  X86_INS_MOVHPD,   X86_INS_MOVLPS,
         X86_INS_MOVLPD,    X86_INS_MOVBE,     X86_INS_MOVSB,   X86_INS_MOVSW,    X86_INS_MOVSQ,
         X86_INS_VMOVAPS,   X86_INS_VMOVAPD,   X86_INS_VMOVUPS, X86_INS_VMOVUPD,  X86_INS_VMOVDQA,
         X86_INS_VMOVDQA32, X86_INS_VMOVDQA64, X86_INS_VMOVDQU, X86_INS_VMOVDQU8, X86_INS_VMOVDQU16,
         X86_INS_VMOVDQU32, X86_INS_VMOVDQU64, X86_INS_VMOVD,   X86_INS_VMOVQ,    X86_INS_VMOVSS,
         X86_INS_VMOVSD,    X86_INS_VMOVHPS,   X86_INS_VMOVHPD, X86_INS_VMOVLPS,  X86_INS_VMOVLPD});
    add(t, Rule::DestReadWrite,
        {X86_INS_ADD,  X86_INS_SUB,    X86_INS_AND,  X86_INS_OR,  X86_INS_XOR, X86_INS_ADC,
         X86_INS_SBB,  X86_INS_INC,    X86_INS_DEC,  X86_INS_NEG, X86_INS_NOT, X86_INS_SHL,
         X86_INS_SHR,  X86_INS_SAR,    X86_INS_SAL,  X86_INS_ROL, X86_INS_ROR, X86_INS_RCL,
         X86_INS_RCR,  X86_INS_SHLD,   X86_INS_SHRD, X86_INS_BTS, X86_INS_BTR, X86_INS_BTC,
         X86_INS_XADD, X86_INS_CMPXCHG});
    return t;
  }();
  return table;
}

// The 16 general registers, each with its 8/16/32/64-bit names.
struct RegisterFamily {
  x86_reg full;
  std::initializer_list<x86_reg> parts;
};

const std::unordered_map<unsigned, unsigned>& register_families() {
  static const std::unordered_map<unsigned, unsigned> families = [] {
    const RegisterFamily table[] = {
        {X86_REG_RAX, {X86_REG_AL, X86_REG_AH, X86_REG_AX, X86_REG_EAX}},
        {X86_REG_RBX, {X86_REG_BL, X86_REG_BH, X86_REG_BX, X86_REG_EBX}},
        {X86_REG_RCX, {X86_REG_CL, X86_REG_CH, X86_REG_CX, X86_REG_ECX}},
        {X86_REG_RDX, {X86_REG_DL, X86_REG_DH, X86_REG_DX, X86_REG_EDX}},
        {X86_REG_RSI, {X86_REG_SIL, X86_REG_SI, X86_REG_ESI}},
        {X86_REG_RDI, {X86_REG_DIL, X86_REG_DI, X86_REG_EDI}},
        {X86_REG_RBP, {X86_REG_BPL, X86_REG_BP, X86_REG_EBP}},
        {X86_REG_RSP, {X86_REG_SPL, X86_REG_SP, X86_REG_ESP}},
        {X86_REG_R8, {X86_REG_R8B, X86_REG_R8W, X86_REG_R8D}},
        {X86_REG_R9, {X86_REG_R9B, X86_REG_R9W, X86_REG_R9D}},
        {X86_REG_R10, {X86_REG_R10B, X86_REG_R10W, X86_REG_R10D}},
        {X86_REG_R11, {X86_REG_R11B, X86_REG_R11W, X86_REG_R11D}},
        {X86_REG_R12, {X86_REG_R12B, X86_REG_R12W, X86_REG_R12D}},
        {X86_REG_R13, {X86_REG_R13B, X86_REG_R13W, X86_REG_R13D}},
        {X86_REG_R14, {X86_REG_R14B, X86_REG_R14W, X86_REG_R14D}},
        {X86_REG_R15, {X86_REG_R15B, X86_REG_R15W, X86_REG_R15D}},
    };
    std::unordered_map<unsigned, unsigned> m;
    for (const auto& family : table)
      for (x86_reg part : family.parts) m[part] = family.full;
    return m;
  }();
  return families;
}

bool in(unsigned id, std::initializer_list<x86_insn> ids) {
  return std::find(ids.begin(), ids.end(), static_cast<x86_insn>(id)) != ids.end();
}

Flow flow_of(const cs_insn& insn) {
  const unsigned id = insn.id;
  if (in(id,
         {X86_INS_RET, X86_INS_RETF, X86_INS_RETFQ, X86_INS_IRET, X86_INS_IRETD, X86_INS_IRETQ}))
    return Flow::Return;
  if (in(id, {X86_INS_CALL, X86_INS_LCALL})) return Flow::Call;
  if (in(id, {X86_INS_JMP, X86_INS_LJMP})) return Flow::Jump;
  if (in(id, {X86_INS_INT3, X86_INS_INT1, X86_INS_UD0, X86_INS_UD2, X86_INS_UD2B, X86_INS_HLT}))
    return Flow::Other;
  // Every other jump-group instruction is conditional: jcc, jrcxz, loop, loope, loopne.
  const cs_detail& d = *insn.detail;
  for (uint8_t i = 0; i < d.groups_count; ++i)
    if (d.groups[i] == CS_GRP_JUMP) return Flow::CondJump;
  return Flow::Next;
}

constexpr uint64_t kFlagsWritten =
    X86_EFLAGS_MODIFY_AF | X86_EFLAGS_MODIFY_CF | X86_EFLAGS_MODIFY_SF | X86_EFLAGS_MODIFY_ZF |
    X86_EFLAGS_MODIFY_PF | X86_EFLAGS_MODIFY_OF | X86_EFLAGS_RESET_OF | X86_EFLAGS_RESET_CF |
    X86_EFLAGS_RESET_SF | X86_EFLAGS_RESET_AF | X86_EFLAGS_RESET_PF | X86_EFLAGS_RESET_ZF |
    X86_EFLAGS_SET_CF | X86_EFLAGS_SET_OF | X86_EFLAGS_SET_SF | X86_EFLAGS_SET_ZF |
    X86_EFLAGS_SET_AF | X86_EFLAGS_SET_PF | X86_EFLAGS_UNDEFINED_OF | X86_EFLAGS_UNDEFINED_SF |
    X86_EFLAGS_UNDEFINED_ZF | X86_EFLAGS_UNDEFINED_PF | X86_EFLAGS_UNDEFINED_AF |
    X86_EFLAGS_UNDEFINED_CF;
constexpr uint64_t kFlagsRead = X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF | X86_EFLAGS_TEST_ZF |
                                X86_EFLAGS_TEST_PF | X86_EFLAGS_TEST_CF | X86_EFLAGS_TEST_AF;

void add_register(std::vector<unsigned>& regs, unsigned reg) {
  const unsigned full = full_register(reg);
  if (std::find(regs.begin(), regs.end(), full) == regs.end()) regs.push_back(full);
}

Instruction convert(csh handle, const cs_insn& insn) {
  Instruction out;
  out.address = insn.address;
  out.length = static_cast<uint8_t>(insn.size);
  out.id = insn.id;
  out.text = insn.mnemonic;
  if (insn.op_str[0] != '\0') out.text += std::string(" ") + insn.op_str;
  out.flow = flow_of(insn);

  const cs_x86& x86 = insn.detail->x86;
  for (uint8_t i = 0; i < x86.op_count; ++i) {
    const cs_x86_op& op = x86.operands[i];
    if (op.type == X86_OP_IMM && i == 0 && out.flow != Flow::Next && out.flow != Flow::Other)
      out.branch_target = static_cast<uint64_t>(op.imm);
    if (op.type != X86_OP_MEM) continue;
    MemOperand m;
    m.access = table_access(insn.id, i);
    m.base = op.mem.base == X86_REG_INVALID ? 0 : op.mem.base;
    m.index = op.mem.index == X86_REG_INVALID ? 0 : op.mem.index;
    m.segment = op.mem.segment == X86_REG_INVALID ? 0 : op.mem.segment;
    m.scale = op.mem.scale;
    m.disp = op.mem.disp;
    m.size = op.size;
    m.rip_relative = op.mem.base == X86_REG_RIP;
    if (m.rip_relative) {
      m.target = insn.address + insn.size + static_cast<uint64_t>(op.mem.disp);
      out.rip_relative_any = true;
    }
    out.memory.push_back(m);
  }

  cs_regs read, written;
  uint8_t read_count = 0, written_count = 0;
  if (cs_regs_access(handle, &insn, read, &read_count, written, &written_count) == CS_ERR_OK) {
    for (uint8_t i = 0; i < read_count; ++i) {
      if (read[i] == X86_REG_EFLAGS)
        out.reads_flags = true;
      else if (read[i] != X86_REG_RIP)
        add_register(out.regs_read, read[i]);
    }
    for (uint8_t i = 0; i < written_count; ++i) {
      if (written[i] == X86_REG_EFLAGS)
        out.writes_flags = true;
      else if (written[i] != X86_REG_RIP)
        add_register(out.regs_written, written[i]);
    }
  }
  if (x86.eflags & kFlagsWritten) out.writes_flags = true;
  if (x86.eflags & kFlagsRead) out.reads_flags = true;
  // Capstone 4 leaves out cmpxchg's implicit accumulator; it may be overwritten.
  if (in(insn.id, {X86_INS_CMPXCHG})) add_register(out.regs_written, X86_REG_RAX);
  if (in(insn.id, {X86_INS_CMPXCHG8B, X86_INS_CMPXCHG16B})) {
    add_register(out.regs_written, X86_REG_RAX);
    add_register(out.regs_written, X86_REG_RDX);
  }
  return out;
}

}  // namespace

const char* mem_access_name(MemAccess access) {
  switch (access) {
    case MemAccess::None: return "none";
    case MemAccess::Read: return "read";
    case MemAccess::Write: return "write";
    case MemAccess::ReadWrite: return "read+write";
  }
  return "?";
}

const MemOperand* Instruction::accessed_memory() const {
  for (const MemOperand& m : memory)
    if (m.access != MemAccess::None) return &m;
  return nullptr;
}

bool Instruction::writes_register(unsigned full) const {
  return std::find(regs_written.begin(), regs_written.end(), full) != regs_written.end();
}

bool Instruction::reads_register(unsigned full) const {
  return std::find(regs_read.begin(), regs_read.end(), full) != regs_read.end();
}

unsigned full_register(unsigned reg) {
  const auto& families = register_families();
  auto it = families.find(reg);
  return it == families.end() ? reg : it->second;
}

const char* register_name(unsigned reg) {
  // cs_reg_name needs a handle; one without details, never closed, serves every caller.
  static const csh handle = [] {
    csh h = 0;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) return csh{0};
    return h;
  }();
  const char* name = handle ? cs_reg_name(handle, reg) : nullptr;
  return name ? name : "?";
}

MemAccess table_access(unsigned instruction_id, unsigned operand_index) {
  const auto& table = rule_table();
  auto it = table.find(instruction_id);
  if (it == table.end()) return MemAccess::ReadWrite;
  switch (it->second) {
    case Rule::None: return MemAccess::None;
    case Rule::Read: return MemAccess::Read;
    case Rule::Write: return MemAccess::Write;
    case Rule::ReadWrite: return MemAccess::ReadWrite;
    case Rule::DestWrite: return operand_index == 0 ? MemAccess::Write : MemAccess::Read;
    case Rule::DestReadWrite: return operand_index == 0 ? MemAccess::ReadWrite : MemAccess::Read;
  }
  return MemAccess::ReadWrite;
}

X86Decoder::X86Decoder() {
  csh handle = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK)
    throw std::runtime_error("capstone: cs_open(CS_ARCH_X86, CS_MODE_64) failed");
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  handle_ = handle;
  scratch_ = cs_malloc(handle);
}

X86Decoder::~X86Decoder() {
  csh handle = handle_;
  if (scratch_) cs_free(static_cast<cs_insn*>(scratch_), 1);
  cs_close(&handle);
}

std::optional<Instruction> X86Decoder::decode(std::span<const uint8_t> code,
                                              uint64_t address) const {
  const uint8_t* bytes = code.data();
  size_t size = code.size();
  uint64_t at = address;
  auto* insn = static_cast<cs_insn*>(scratch_);
  if (size == 0 || !cs_disasm_iter(handle_, &bytes, &size, &at, insn)) return std::nullopt;
  return convert(handle_, *insn);
}

std::vector<Instruction> X86Decoder::decode_all(std::span<const uint8_t> code,
                                                uint64_t address) const {
  std::vector<Instruction> out;
  const uint8_t* bytes = code.data();
  size_t size = code.size();
  uint64_t at = address;
  auto* insn = static_cast<cs_insn*>(scratch_);
  while (size > 0 && cs_disasm_iter(handle_, &bytes, &size, &at, insn))
    out.push_back(convert(handle_, *insn));
  return out;
}

std::optional<Instruction> decode_ending_at(const X86Decoder& decoder,
                                            std::span<const uint8_t> before, uint64_t end,
                                            uint64_t data_address) {
  std::optional<Instruction> rip_match, longest;
  const size_t most = std::min<size_t>(before.size(), 15);
  for (size_t length = most; length >= 1; --length) {
    const uint64_t start = end - length;
    auto insn = decoder.decode(before.subspan(before.size() - length), start);
    if (!insn || insn->length != length) continue;
    bool reaches_by_rip = false, reaches = false;
    for (const MemOperand& m : insn->memory) {
      if (m.access == MemAccess::None) continue;
      if (!m.rip_relative) {
        reaches = true;  // through registers: any address
        continue;
      }
      const uint64_t size = std::max<uint64_t>(m.size, 1);
      if (m.target < data_address + 8 && data_address < m.target + size)
        reaches = reaches_by_rip = true;
    }
    if (reaches_by_rip && !rip_match)
      rip_match = std::move(insn);
    else if (reaches && !longest)
      longest = std::move(insn);  // lengths go down: first is longest
  }
  return rip_match ? rip_match : longest;
}

}  // namespace cw::instrument
