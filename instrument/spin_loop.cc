#include "instrument/spin_loop.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <map>

#include "instrument/code_graph.h"

namespace cw::instrument {
namespace {

LoopExitRead exit_read(const Instruction& insn, const MemOperand& m, const RegisterState& state,
                       uint64_t branch) {
  LoopExitRead r;
  r.size = m.size;
  r.instruction = insn.address;
  r.text = insn.text;
  r.branch = branch;
  if (m.segment != 0) return r;  // thread-local: no address outside the thread
  if (m.rip_relative) {
    r.address = m.target;
  } else if (m.base != 0 && m.index == 0) {
    if (const KnownValue* v = known(state, full_register(m.base))) {
      if (v->kind == KnownValue::Kind::Address) {
        r.address = v->value + static_cast<uint64_t>(m.disp);
      } else {
        r.pointer_slot = v->value;
        r.pointer_offset = m.disp;
      }
    }
  }
  if (r.address == 0 && r.pointer_slot == 0) r.base_register = m.base;
  return r;
}

// The memory reads that decide the conditional branch ending block `b`: the flags-setting
// instruction's own memory operand, and the loads of the registers it compares.
void reads_deciding(const CodeGraph& g, size_t b, const RegisterState& entry,
                    std::vector<LoopExitRead>& out) {
  auto insns = g.block_instructions(b);
  std::vector<RegisterState> before(insns.size());
  RegisterState state = entry;
  for (size_t i = 0; i < insns.size(); ++i) {
    before[i] = state;
    step(state, insns[i]);
  }
  const Instruction& branch = insns.back();
  size_t f = insns.size() - 1;
  while (f-- > 0) {
    if (insns[f].flow == Flow::Call) return;  // flags do not survive a call
    if (insns[f].writes_flags) break;
  }
  if (f == SIZE_MAX) return;
  const Instruction& setter = insns[f];
  if (const MemOperand* m = setter.accessed_memory(); m && reads(m->access))
    out.push_back(exit_read(setter, *m, before[f], branch.address));
  for (unsigned reg : setter.regs_read) {
    if (reg == X86_REG_RSP) continue;
    for (size_t j = f; j-- > 0;) {
      if (!insns[j].writes_register(reg)) continue;
      const MemOperand* m = insns[j].accessed_memory();
      if (m && m->access == MemAccess::Read)
        out.push_back(exit_read(insns[j], *m, before[j], branch.address));
      break;
    }
  }
}

}  // namespace

std::vector<SpinLoop> find_spin_loops(const X86Decoder& decoder,
                                      std::span<const uint8_t> function_code,
                                      uint64_t function_address,
                                      std::span<const std::pair<uint64_t, uint64_t>> samples) {
  CodeGraph g = build_code_graph(decoder, function_code, function_address);
  const size_t n = g.blocks.size();
  // Natural loops, one per header: the header and every block that reaches a back edge's
  // source without passing the header.
  std::map<size_t, std::vector<uint8_t>> bodies;
  for (size_t u = 0; u < n; ++u) {
    for (size_t h : g.blocks[u].successors) {
      if (!g.dominates(h, u)) continue;
      auto& body = bodies[h];
      body.resize(n, 0);
      body[h] = 1;
      std::vector<size_t> work = {u};
      while (!work.empty()) {
        size_t x = work.back();
        work.pop_back();
        if (body[x]) continue;
        body[x] = 1;
        for (size_t p : g.blocks[x].predecessors) work.push_back(p);
      }
    }
  }

  std::vector<uint64_t> block_samples(n, 0);
  for (auto [address, count] : samples)
    if (auto b = g.block_at(address)) block_samples[*b] += count;

  auto entry_states = known_at_block_entry(g);
  std::vector<SpinLoop> loops;
  for (const auto& [header, body] : bodies) {
    SpinLoop loop;
    loop.head = g.blocks[header].start;
    for (size_t b = 0; b < n; ++b) {
      if (!body[b]) continue;
      loop.samples += block_samples[b];
      loop.end = std::max(loop.end, g.blocks[b].end);
      loop.blocks++;
    }
    if (loop.samples == 0) continue;
    for (size_t b = 0; b < n; ++b) {
      if (!body[b]) continue;
      const Instruction& last = g.block_instructions(b).back();
      if (last.flow != Flow::CondJump) continue;
      // An exit when either way out of the branch leaves the loop (or the function).
      auto inside = [&](uint64_t to) {
        auto t = g.block_at(to);
        return t && g.blocks[*t].start == to && body[*t];
      };
      if (inside(last.branch_target) && inside(last.end())) continue;
      reads_deciding(g, b, entry_states[b], loop.exit_reads);
    }
    std::sort(
        loop.exit_reads.begin(), loop.exit_reads.end(),
        [](const LoopExitRead& a, const LoopExitRead& b) { return a.instruction < b.instruction; });
    loop.exit_reads.erase(std::unique(loop.exit_reads.begin(), loop.exit_reads.end(),
                                      [](const LoopExitRead& a, const LoopExitRead& b) {
                                        return a.instruction == b.instruction;
                                      }),
                          loop.exit_reads.end());
    loops.push_back(std::move(loop));
  }
  std::stable_sort(loops.begin(), loops.end(), [](const SpinLoop& a, const SpinLoop& b) {
    if (a.samples != b.samples) return a.samples > b.samples;
    return a.blocks < b.blocks;
  });
  return loops;
}

}  // namespace cw::instrument
