// Spin loops from sampled program counters: which loops of a function the samples fall
// in, and which memory the loop's exit conditions read — the candidates for a data flag.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "instrument/x86_decoder.h"

namespace cw::instrument {

struct LoopExitRead {
  uint64_t address = 0;  // the data read; 0 when only known through a pointer (below) or not at all
  uint8_t size = 0;
  uint64_t instruction = 0;  // the instruction that reads it
  std::string text;
  uint64_t branch = 0;  // the conditional branch it decides
  // Read through a pointer the code loaded from memory at `pointer_slot` (a GOT slot, a
  // global pointer): the data is at *pointer_slot + pointer_offset in the running process.
  uint64_t pointer_slot = 0;
  int64_t pointer_offset = 0;
  unsigned base_register = 0;  // neither known: the register the address is in (capstone id)
};

struct SpinLoop {
  uint64_t head = 0, end = 0;  // the loop header's address; the end of its last block
  uint64_t samples = 0;
  std::vector<LoopExitRead> exit_reads;  // by instruction address
  size_t blocks = 0;                     // basic blocks in the loop
};

// The loops (back edges in the function's control flow) holding the sampled addresses,
// most-sampled first; for each, the memory read by the instructions that decide its
// exit conditional branches (cmp/test with a memory operand, or a load whose register
// the branch's flags depend on, within the branch's basic block). Loops with one header
// are one loop; of loops with equal samples the smaller (inner) comes first.
std::vector<SpinLoop> find_spin_loops(const X86Decoder& decoder,
                                      std::span<const uint8_t> function_code,
                                      uint64_t function_address,
                                      std::span<const std::pair<uint64_t, uint64_t>> samples);

}  // namespace cw::instrument
