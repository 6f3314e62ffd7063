// The control flow of one stretch of machine code (a function): its basic blocks, their
// edges and dominators, and what each general register is known to hold on the way — the
// address of a global (lea) or a pointer loaded from one (a GOT slot) — so scans can see
// through `mov rax, [rip+GOT]; mov eax, [rax]` even when the load was hoisted out of a
// loop.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "instrument/x86_decoder.h"

namespace cw::instrument {

struct BasicBlock {
  uint64_t start = 0, end = 0;  // [start, end)
  size_t first = 0, count = 0;  // its instructions: CodeGraph::instructions[first, first+count)
  std::vector<size_t> successors, predecessors;  // block indexes, within the stretch only
};

struct CodeGraph {
  std::vector<Instruction> instructions;  // by address; undecodable bytes are skipped
  std::vector<BasicBlock> blocks;         // by address; block 0 is the entry
  // Immediate dominator of each block (itself for the entry; SIZE_MAX when unreachable).
  std::vector<size_t> idom;

  // The block holding `address` (an instruction start or any byte inside one), or nullopt.
  std::optional<size_t> block_at(uint64_t address) const;
  bool dominates(size_t a, size_t b) const;
  std::span<const Instruction> block_instructions(size_t block) const {
    return {instructions.data() + blocks[block].first, blocks[block].count};
  }
};

// Decodes `code` (mapped at `address`) and splits it at branch targets and after jumps,
// returns and traps; calls fall through. Branches leaving the stretch have no successor.
// `extra_leaders` start blocks too (other entry points, such as symbols inside it).
CodeGraph build_code_graph(const X86Decoder& decoder, std::span<const uint8_t> code,
                           uint64_t address, std::span<const uint64_t> extra_leaders = {});

// What a register is known to hold.
struct KnownValue {
  enum class Kind : uint8_t {
    Address,     // the address `value` itself (lea reg, [rip+X])
    LoadedFrom,  // the 8 bytes stored at `value` (mov reg, qword ptr [rip+X]: a GOT slot)
  };
  Kind kind = Kind::Address;
  uint64_t value = 0;
  bool operator==(const KnownValue&) const = default;
};

// Full (64-bit) register → what it holds; registers not listed are unknown.
using RegisterState = std::vector<std::pair<unsigned, KnownValue>>;

const KnownValue* known(const RegisterState& state, unsigned full_register);
// The state after `insn`: registers it writes are forgotten (a call also forgets the
// registers the SysV ABI lets the callee change), then lea/mov from rip-relative memory
// into a 64-bit register is remembered.
void step(RegisterState& state, const Instruction& insn);
// The state at the entry of each block: what every path from the stretch's entry agrees
// on. Unreachable blocks start knowing nothing.
std::vector<RegisterState> known_at_block_entry(const CodeGraph& graph);

}  // namespace cw::instrument
