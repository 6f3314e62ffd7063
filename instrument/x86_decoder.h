// x86-64 instructions decoded with Capstone, reduced to what instrumentation needs: the
// memory each one reads or writes (with our own table for the access, since Capstone 4
// reports some stores as reads), where control goes next, and which operands use rip.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cw::instrument {

enum class MemAccess : uint8_t { None = 0, Read = 1, Write = 2, ReadWrite = 3 };

// "none", "read", "write" or "read+write".
const char* mem_access_name(MemAccess access);
inline bool reads(MemAccess a) {
  return (static_cast<uint8_t>(a) & 1) != 0;
}
inline bool writes(MemAccess a) {
  return (static_cast<uint8_t>(a) & 2) != 0;
}

struct MemOperand {
  MemAccess access = MemAccess::None;
  bool rip_relative = false;
  unsigned base = 0, index = 0;  // capstone x86_reg ids (0 = none)
  int scale = 1;
  int64_t disp = 0;
  uint8_t size = 0;      // bytes accessed
  uint64_t target = 0;   // rip-relative: the absolute address accessed
  unsigned segment = 0;  // capstone x86_reg id of a segment override (fs/gs), 0 = none
};

// int3, ud2 and hlt are Other; syscall is Next (control comes back after it).
enum class Flow : uint8_t { Next, Jump, CondJump, Call, Return, Other };

struct Instruction {
  uint64_t address = 0;
  uint8_t length = 0;
  std::string text;                // "mov dword ptr [rip + 0x2f1a], 1"
  std::vector<MemOperand> memory;  // at most one for most instructions; lea's has access None
  Flow flow = Flow::Next;
  uint64_t branch_target = 0;     // direct jumps, conditional jumps and calls
  bool rip_relative_any = false;  // any operand uses rip (lea too) — for hook relocation
  unsigned id = 0;                // capstone x86_insn id
  // General registers as their 64-bit names (eax → rax; see full_register), read and
  // written, implicit ones included; rip is left out.
  std::vector<unsigned> regs_read, regs_written;
  bool writes_flags = false;  // changes rflags (cmp, test, add …)
  bool reads_flags = false;   // depends on rflags (jcc, setcc, cmovcc …)

  uint64_t end() const { return address + length; }
  // The first memory operand that reads or writes memory (not lea's), or null.
  const MemOperand* accessed_memory() const;
  bool writes_register(unsigned full) const;
  bool reads_register(unsigned full) const;
};

// The 64-bit general register holding `reg` (al, ax, eax → rax; r8d → r8); other
// registers map to themselves.
unsigned full_register(unsigned reg);
// Capstone's name of a register ("rax"), or "?" for an unknown id.
const char* register_name(unsigned reg);

class X86Decoder {  // owns a capstone handle with detail on; not thread-safe
 public:
  X86Decoder();
  ~X86Decoder();
  X86Decoder(const X86Decoder&) = delete;
  X86Decoder& operator=(const X86Decoder&) = delete;

  // The instruction at the start of `code`, which is mapped at `address`; nullopt when
  // the bytes are not a valid instruction (or are cut short).
  std::optional<Instruction> decode(std::span<const uint8_t> code, uint64_t address) const;
  // Instructions one after the other; stops at undecodable bytes.
  std::vector<Instruction> decode_all(std::span<const uint8_t> code, uint64_t address) const;

 private:
  size_t handle_ = 0;        // capstone's csh
  void* scratch_ = nullptr;  // a cs_insn reused by decode()
};

// The access our own table gives an instruction's memory operand. Capstone 4.0.2 reports
// some stores as reads (lock cmpxchg, movups/movaps/movdqa/movdqu to memory, movq m64,xmm,
// movnti, ...): fix them with a table keyed by instruction id; instructions the table does
// not know are ReadWrite, whatever Capstone says. `operand_index` is the memory operand's
// position among the instruction's operands (0 = the destination).
MemAccess table_access(unsigned instruction_id, unsigned operand_index);

// A watchpoint hit: the CPU traps after the access, so the instruction ends at `end`.
// `before` holds the up-to-15 bytes before `end`. Returns the decoding that ends exactly
// at `end` and has a memory operand that can reach `data_address` (prefer rip-relative
// operands whose target is inside [data_address, data_address+8); else the longest
// candidate with a memory operand), or nullopt.
std::optional<Instruction> decode_ending_at(const X86Decoder& decoder,
                                            std::span<const uint8_t> before, uint64_t end,
                                            uint64_t data_address);

}  // namespace cw::instrument
