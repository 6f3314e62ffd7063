#include "instrument/code_graph.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <cstdint>
#include <deque>

namespace cw::instrument {
namespace {

constexpr size_t kNone = SIZE_MAX;

bool ends_block(Flow flow) {
  return flow == Flow::Jump || flow == Flow::CondJump || flow == Flow::Return ||
         flow == Flow::Other;
}

// Registers a called function may change (SysV x86-64 ABI).
constexpr unsigned kCallerSaved[] = {X86_REG_RAX, X86_REG_RCX, X86_REG_RDX,
                                     X86_REG_RSI, X86_REG_RDI, X86_REG_R8,
                                     X86_REG_R9,  X86_REG_R10, X86_REG_R11};

void forget(RegisterState& state, unsigned reg) {
  std::erase_if(state, [reg](const auto& entry) { return entry.first == reg; });
}

void compute_dominators(CodeGraph& g) {
  const size_t n = g.blocks.size();
  g.idom.assign(n, kNone);
  if (n == 0) return;
  // Reverse postorder from the entry.
  std::vector<size_t> order, rpo_index(n, kNone);
  std::vector<uint8_t> seen(n, 0);
  std::vector<std::pair<size_t, size_t>> stack = {{0, 0}};
  seen[0] = 1;
  while (!stack.empty()) {
    auto& [block, next] = stack.back();
    if (next < g.blocks[block].successors.size()) {
      size_t s = g.blocks[block].successors[next++];
      if (!seen[s]) {
        seen[s] = 1;
        stack.push_back({s, 0});
      }
    } else {
      order.push_back(block);
      stack.pop_back();
    }
  }
  std::reverse(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i) rpo_index[order[i]] = i;
  // Cooper, Harvey and Kennedy's iteration.
  g.idom[0] = 0;
  auto intersect = [&](size_t a, size_t b) {
    while (a != b) {
      while (rpo_index[a] > rpo_index[b]) a = g.idom[a];
      while (rpo_index[b] > rpo_index[a]) b = g.idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b : order) {
      if (b == 0) continue;
      size_t new_idom = kNone;
      for (size_t p : g.blocks[b].predecessors) {
        if (g.idom[p] == kNone) continue;
        new_idom = new_idom == kNone ? p : intersect(p, new_idom);
      }
      if (new_idom != g.idom[b]) {
        g.idom[b] = new_idom;
        changed = true;
      }
    }
  }
}

}  // namespace

std::optional<size_t> CodeGraph::block_at(uint64_t address) const {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), address,
                             [](uint64_t a, const BasicBlock& b) { return a < b.start; });
  if (it == blocks.begin()) return std::nullopt;
  --it;
  if (address >= it->end) return std::nullopt;
  return static_cast<size_t>(it - blocks.begin());
}

bool CodeGraph::dominates(size_t a, size_t b) const {
  if (idom[b] == kNone) return false;
  for (size_t x = b;; x = idom[x]) {
    if (x == a) return true;
    if (x == 0) return false;
  }
}

CodeGraph build_code_graph(const X86Decoder& decoder, std::span<const uint8_t> code,
                           uint64_t address, std::span<const uint64_t> extra_leaders) {
  CodeGraph g;
  std::vector<uint64_t> leaders = {address};
  for (uint64_t a : extra_leaders) leaders.push_back(a);
  const uint64_t end = address + code.size();
  for (size_t offset = 0; offset < code.size();) {
    auto insn = decoder.decode(code.subspan(offset), address + offset);
    if (!insn) {  // data or padding Capstone cannot read: skip a byte, start afresh after it
      ++offset;
      leaders.push_back(address + offset);
      continue;
    }
    if (insn->branch_target >= address && insn->branch_target < end && insn->flow != Flow::Call)
      leaders.push_back(insn->branch_target);
    if (ends_block(insn->flow)) leaders.push_back(insn->end());
    offset += insn->length;
    g.instructions.push_back(std::move(*insn));
  }
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());

  // Blocks: runs of instructions cut at leaders and at gaps left by skipped bytes.
  for (size_t i = 0; i < g.instructions.size(); ++i) {
    const Instruction& insn = g.instructions[i];
    const bool leader = std::binary_search(leaders.begin(), leaders.end(), insn.address);
    const bool gap = i > 0 && g.instructions[i - 1].end() != insn.address;
    const bool after_end = i > 0 && ends_block(g.instructions[i - 1].flow);
    if (g.blocks.empty() || leader || gap || after_end) {
      BasicBlock b;
      b.start = insn.address;
      b.first = i;
      g.blocks.push_back(b);
    }
    g.blocks.back().count++;
    g.blocks.back().end = insn.end();
  }

  auto block_starting = [&](uint64_t a) -> std::optional<size_t> {
    auto b = g.block_at(a);
    if (!b || g.blocks[*b].start != a) return std::nullopt;  // mid-instruction: not code
    return b;
  };
  for (size_t i = 0; i < g.blocks.size(); ++i) {
    BasicBlock& b = g.blocks[i];
    const Instruction& last = g.instructions[b.first + b.count - 1];
    auto link = [&](std::optional<size_t> to) {
      if (!to) return;
      if (std::find(b.successors.begin(), b.successors.end(), *to) == b.successors.end())
        b.successors.push_back(*to);
    };
    if (last.flow == Flow::Jump || last.flow == Flow::CondJump) {
      if (last.branch_target != 0) link(block_starting(last.branch_target));
    }
    if (last.flow == Flow::Next || last.flow == Flow::Call || last.flow == Flow::CondJump)
      link(block_starting(last.end()));
  }
  for (size_t i = 0; i < g.blocks.size(); ++i)
    for (size_t s : g.blocks[i].successors) g.blocks[s].predecessors.push_back(i);
  compute_dominators(g);
  return g;
}

const KnownValue* known(const RegisterState& state, unsigned full_register) {
  for (const auto& [reg, value] : state)
    if (reg == full_register) return &value;
  return nullptr;
}

void step(RegisterState& state, const Instruction& insn) {
  for (unsigned reg : insn.regs_written) forget(state, reg);
  if (insn.flow == Flow::Call)
    for (unsigned reg : kCallerSaved) forget(state, reg);
  if (insn.regs_written.size() != 1 || insn.memory.size() != 1) return;
  const MemOperand& m = insn.memory[0];
  const unsigned dest = insn.regs_written[0];
  if (!m.rip_relative || m.segment != 0 || full_register(dest) != dest || dest == X86_REG_RSP)
    return;
  if (insn.id == X86_INS_LEA) {
    state.push_back({dest, {KnownValue::Kind::Address, m.target}});
  } else if (insn.id == X86_INS_MOV && m.access == MemAccess::Read && m.size == 8) {
    state.push_back({dest, {KnownValue::Kind::LoadedFrom, m.target}});
  }
}

std::vector<RegisterState> known_at_block_entry(const CodeGraph& g) {
  const size_t n = g.blocks.size();
  std::vector<RegisterState> in(n);
  std::vector<uint8_t> reached(n, 0);
  if (n == 0) return in;
  reached[0] = 1;
  std::deque<size_t> work = {0};
  std::vector<uint8_t> queued(n, 0);
  queued[0] = 1;
  while (!work.empty()) {
    const size_t b = work.front();
    work.pop_front();
    queued[b] = 0;
    RegisterState out = in[b];
    for (const Instruction& insn : g.block_instructions(b)) step(out, insn);
    for (size_t s : g.blocks[b].successors) {
      RegisterState merged;
      if (!reached[s]) {
        merged = out;
        reached[s] = 1;
      } else {
        // Keep what both paths agree on.
        for (const auto& entry : in[s]) {
          const KnownValue* v = known(out, entry.first);
          if (v && *v == entry.second) merged.push_back(entry);
        }
        if (merged.size() == in[s].size()) continue;  // nothing changed
      }
      in[s] = std::move(merged);
      if (!queued[s]) {
        queued[s] = 1;
        work.push_back(s);
      }
    }
  }
  return in;
}

}  // namespace cw::instrument
