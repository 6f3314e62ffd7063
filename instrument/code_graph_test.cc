#include "instrument/code_graph.h"

#include <capstone/capstone.h>
#include <doctest/doctest.h>

#include <vector>

namespace cw::instrument {
namespace {

// push rbx; mov rbx, [rip+0x100]; lea rcx, [rip+0x200]
// loop: mov eax, [rbx]; test eax, eax; jne out; call +0x1000; jmp loop
// out:  mov edx, [rcx]; pop rbx; ret
const std::vector<uint8_t> kPoll = {
    0x53, 0x48, 0x8b, 0x1d, 0x00, 0x01, 0x00, 0x00, 0x48, 0x8d, 0x0d, 0x00, 0x02, 0x00, 0x00, 0x8b,
    0x03, 0x85, 0xc0, 0x75, 0x07, 0xe8, 0xfb, 0x0f, 0x00, 0x00, 0xeb, 0xf3, 0x8b, 0x11, 0x5b, 0xc3};
constexpr uint64_t kAt = 0x1000;

TEST_CASE("blocks split at branch targets and after jumps; calls fall through") {
  X86Decoder decoder;
  CodeGraph g = build_code_graph(decoder, kPoll, kAt);
  REQUIRE(g.blocks.size() == 4);
  CHECK(g.blocks[0].start == 0x1000);
  CHECK(g.blocks[1].start == 0x100f);  // the loop head, target of the jmp back
  CHECK(g.blocks[2].start == 0x1015);  // after jne: the call and the jmp
  CHECK(g.blocks[3].start == 0x101c);  // out
  CHECK(g.blocks[3].end == 0x1020);
  CHECK(g.blocks[0].successors == std::vector<size_t>{1});
  CHECK(g.blocks[1].successors == std::vector<size_t>{3, 2});
  CHECK(g.blocks[2].successors == std::vector<size_t>{1});  // the call's target is outside
  CHECK(g.blocks[3].successors.empty());
  CHECK(g.block_at(0x1017) == 2u);
  CHECK_FALSE(g.block_at(0x2000).has_value());
  CHECK(g.dominates(1, 2));
  CHECK_FALSE(g.dominates(2, 1));
  CHECK(g.dominates(0, 3));
}

TEST_CASE("known registers: a hoisted pointer load survives the call, lea's register does not") {
  X86Decoder decoder;
  CodeGraph g = build_code_graph(decoder, kPoll, kAt);
  auto entry = known_at_block_entry(g);
  const KnownValue* rbx = known(entry[1], X86_REG_RBX);
  REQUIRE(rbx != nullptr);
  CHECK(rbx->kind == KnownValue::Kind::LoadedFrom);
  CHECK(rbx->value == 0x1000 + 8 + 0x100);
  CHECK(known(entry[1], X86_REG_RCX) == nullptr);  // the call may change rcx
  CHECK(known(entry[3], X86_REG_RBX) != nullptr);

  RegisterState state;
  for (const Instruction& insn : g.block_instructions(0)) step(state, insn);
  const KnownValue* rcx = known(state, X86_REG_RCX);
  REQUIRE(rcx != nullptr);
  CHECK(rcx->kind == KnownValue::Kind::Address);
  CHECK(rcx->value == 0x100f + 0x200);
}

TEST_CASE("undecodable bytes are skipped and start a new block") {
  X86Decoder decoder;
  std::vector<uint8_t> code = {0x90, 0x06, 0x90, 0xc3};  // nop; (invalid); nop; ret
  CodeGraph g = build_code_graph(decoder, code, kAt);
  REQUIRE(g.instructions.size() == 3);
  REQUIRE(g.blocks.size() == 2);
  CHECK(g.blocks[1].start == kAt + 2);
  CHECK(g.blocks[0].successors.empty());  // the skipped byte is no edge
}

}  // namespace
}  // namespace cw::instrument
