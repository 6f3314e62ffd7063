// Byte vectors assembled with GNU as (intel syntax) and checked with objdump -d.
#include "instrument/x86_decoder.h"

#include <capstone/capstone.h>
#include <doctest/doctest.h>

#include <vector>

namespace cw::instrument {
namespace {

constexpr uint64_t kAt = 0x1000;

Instruction decode_one(const std::vector<uint8_t>& bytes, uint64_t address = kAt) {
  X86Decoder decoder;
  auto insn = decoder.decode(bytes, address);
  REQUIRE_MESSAGE(insn.has_value(), "undecodable bytes");
  CHECK(insn->length == bytes.size());
  return *insn;
}

MemAccess access_of(const std::vector<uint8_t>& bytes) {
  Instruction insn = decode_one(bytes);
  REQUIRE(insn.memory.size() == 1);
  return insn.memory[0].access;
}

TEST_CASE("rip-relative loads and stores give the absolute address they touch") {
  Instruction load = decode_one({0x8b, 0x05, 0x1a, 0x2f, 0x00, 0x00});  // mov eax, [rip+0x2f1a]
  CHECK(load.text == "mov eax, dword ptr [rip + 0x2f1a]");
  REQUIRE(load.memory.size() == 1);
  CHECK(load.memory[0].access == MemAccess::Read);
  CHECK(load.memory[0].rip_relative);
  CHECK(load.memory[0].size == 4);
  CHECK(load.memory[0].target == kAt + 6 + 0x2f1a);
  CHECK(load.rip_relative_any);
  CHECK(load.writes_register(X86_REG_RAX));

  // mov dword ptr [rip+0x2f1a], 1
  Instruction store = decode_one({0xc7, 0x05, 0x1a, 0x2f, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00});
  CHECK(store.text == "mov dword ptr [rip + 0x2f1a], 1");
  CHECK(store.memory[0].access == MemAccess::Write);
  CHECK(store.memory[0].target == kAt + 10 + 0x2f1a);
  CHECK(store.flow == Flow::Next);

  CHECK(access_of({0x89, 0x05, 0x1a, 0x2f, 0x00, 0x00}) == MemAccess::Write);  // mov [rip+x], eax
}

TEST_CASE("compares and tests read; read-modify-write arithmetic reads and writes") {
  Instruction cmp = decode_one({0x83, 0x3d, 0x00, 0x01, 0x00, 0x00, 0x00});  // cmp [rip+0x100], 0
  CHECK(cmp.memory[0].access == MemAccess::Read);
  CHECK(cmp.writes_flags);
  CHECK(access_of({0x85, 0x05, 0x00, 0x01, 0x00, 0x00}) == MemAccess::Read);  // test [rip+x], eax
  // test byte ptr [rdi], 1: Capstone 4 says read+write.
  CHECK(access_of({0xf6, 0x07, 0x01}) == MemAccess::Read);
  CHECK(access_of({0x01, 0x05, 0x00, 0x01, 0x00, 0x00}) == MemAccess::ReadWrite);  // add m, eax
  CHECK(access_of({0x03, 0x07}) == MemAccess::Read);                               // add eax, [rdi]
  CHECK(access_of({0xff, 0x05, 0x00, 0x01, 0x00, 0x00}) == MemAccess::ReadWrite);  // inc m
  Instruction add = decode_one({0x48, 0x01, 0x44, 0xcb, 0x10});  // add [rbx+rcx*8+0x10], rax
  CHECK(add.memory[0].base == X86_REG_RBX);
  CHECK(add.memory[0].index == X86_REG_RCX);
  CHECK(add.memory[0].scale == 8);
  CHECK(add.memory[0].disp == 0x10);
  CHECK(add.memory[0].size == 8);
  CHECK_FALSE(add.memory[0].rip_relative);
}

TEST_CASE("atomics and exchanges read and write") {
  CHECK(access_of({0xf0, 0x0f, 0xb1, 0x0f}) == MemAccess::ReadWrite);  // lock cmpxchg [rdi], ecx
  CHECK(access_of({0xf0, 0x0f, 0xc1, 0x05, 0x00, 0x01, 0x00, 0x00}) ==
        MemAccess::ReadWrite);                                         // lock xadd [rip+x], eax
  CHECK(access_of({0x87, 0x07}) == MemAccess::ReadWrite);              // xchg [rdi], eax
  CHECK(access_of({0xf0, 0x0f, 0xc7, 0x0f}) == MemAccess::ReadWrite);  // lock cmpxchg8b [rdi]
  Instruction cmpxchg = decode_one({0xf0, 0x0f, 0xb1, 0x0f});
  CHECK(cmpxchg.writes_register(X86_REG_RAX));  // the accumulator Capstone leaves out
}

TEST_CASE("vector moves: stores write and loads read, whatever Capstone 4 says") {
  CHECK(access_of({0x0f, 0x11, 0x07}) == MemAccess::Write);        // movups [rdi], xmm0
  CHECK(access_of({0x0f, 0x10, 0x07}) == MemAccess::Read);         // movups xmm0, [rdi]
  CHECK(access_of({0x0f, 0x29, 0x0f}) == MemAccess::Write);        // movaps [rdi], xmm1
  CHECK(access_of({0x0f, 0x28, 0x0f}) == MemAccess::Read);         // movaps xmm1, [rdi]
  CHECK(access_of({0x66, 0x0f, 0x7f, 0x17}) == MemAccess::Write);  // movdqa [rdi], xmm2
  CHECK(access_of({0x66, 0x0f, 0x6f, 0x17}) == MemAccess::Read);   // movdqa xmm2, [rdi]
  CHECK(access_of({0xf3, 0x0f, 0x7f, 0x1f}) == MemAccess::Write);  // movdqu [rdi], xmm3
  CHECK(access_of({0xf3, 0x0f, 0x6f, 0x1f}) == MemAccess::Read);   // movdqu xmm3, [rdi]
  CHECK(access_of({0x66, 0x0f, 0xd6, 0x07}) == MemAccess::Write);  // movq [rdi], xmm0
  CHECK(access_of({0xf3, 0x0f, 0x7e, 0x07}) == MemAccess::Read);   // movq xmm0, [rdi]
  CHECK(access_of({0x0f, 0xc3, 0x07}) == MemAccess::Write);        // movnti [rdi], eax
  CHECK(access_of({0x48, 0x0f, 0xc3, 0x07}) == MemAccess::Write);  // movnti [rdi], rax
  CHECK(access_of({0xf3, 0x0f, 0x11, 0x07}) == MemAccess::Write);  // movss [rdi], xmm0
  CHECK(access_of({0xf3, 0x0f, 0x10, 0x07}) == MemAccess::Read);   // movss xmm0, [rdi]
  CHECK(access_of({0xc5, 0xfe, 0x7f, 0x07}) == MemAccess::Write);  // vmovdqu [rdi], ymm0
  CHECK(access_of({0x66, 0x0f, 0xe7, 0x07}) == MemAccess::Write);  // movntdq [rdi], xmm0
  CHECK(access_of({0x66, 0x0f, 0x3a, 0x16, 0x07, 0x01}) == MemAccess::Write);  // pextrd m, xmm0, 1
  CHECK(decode_one({0x0f, 0x11, 0x07}).memory[0].size == 16);
}

TEST_CASE("setcc and pop write; cmov and push read") {
  CHECK(access_of({0x0f, 0x94, 0x07}) == MemAccess::Write);  // sete [rdi]
  Instruction cmov = decode_one({0x0f, 0x44, 0x07});         // cmove eax, [rdi]
  CHECK(cmov.memory[0].access == MemAccess::Read);
  CHECK(cmov.reads_flags);
  Instruction push = decode_one({0xff, 0x35, 0x00, 0x01, 0x00, 0x00});  // push [rip+0x100]
  CHECK(push.memory[0].access == MemAccess::Read);
  CHECK(push.memory[0].size == 8);
  CHECK(access_of({0x8f, 0x07}) == MemAccess::Write);  // pop [rdi]
}

TEST_CASE("an instruction the table does not know reads and writes") {
  // aesenc xmm0, [rdi]: only reads memory, but nothing in our table says so.
  Instruction aesenc = decode_one({0x66, 0x0f, 0x38, 0xdc, 0x07});
  CHECK(aesenc.text == "aesenc xmm0, xmmword ptr [rdi]");
  CHECK(aesenc.memory[0].access == MemAccess::ReadWrite);
  CHECK(table_access(X86_INS_INVALID, 0) == MemAccess::ReadWrite);
}

TEST_CASE("lea computes an address: its operand accesses nothing but uses rip") {
  Instruction lea = decode_one({0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00});  // lea rax, [rip+x]
  REQUIRE(lea.memory.size() == 1);
  CHECK(lea.memory[0].access == MemAccess::None);
  CHECK(lea.memory[0].target == kAt + 7 + 0x100);
  CHECK(lea.rip_relative_any);
  CHECK(lea.accessed_memory() == nullptr);
}

TEST_CASE("flow kinds and branch targets") {
  Instruction jmp8 = decode_one({0xeb, 0x0e});
  CHECK(jmp8.flow == Flow::Jump);
  CHECK(jmp8.branch_target == kAt + 2 + 0x0e);
  Instruction jmp32 = decode_one({0xe9, 0xfb, 0x0f, 0x00, 0x00});
  CHECK(jmp32.flow == Flow::Jump);
  CHECK(jmp32.branch_target == 0x2000);
  Instruction je = decode_one({0x74, 0x0e});
  CHECK(je.flow == Flow::CondJump);
  CHECK(je.branch_target == kAt + 0x10);
  CHECK(je.reads_flags);
  Instruction jne32 = decode_one({0x0f, 0x85, 0xfa, 0x0f, 0x00, 0x00});
  CHECK(jne32.flow == Flow::CondJump);
  CHECK(jne32.branch_target == 0x2000);
  Instruction back = decode_one({0x75, 0xfe});  // jne to itself: a negative displacement
  CHECK(back.branch_target == kAt);
  Instruction call = decode_one({0xe8, 0xfb, 0x0f, 0x00, 0x00});
  CHECK(call.flow == Flow::Call);
  CHECK(call.branch_target == 0x2000);
  Instruction call_rip = decode_one({0xff, 0x15, 0x00, 0x01, 0x00, 0x00});  // call [rip+0x100]
  CHECK(call_rip.flow == Flow::Call);
  CHECK(call_rip.branch_target == 0);
  CHECK(call_rip.memory[0].access == MemAccess::Read);
  CHECK(call_rip.memory[0].target == kAt + 6 + 0x100);
  CHECK(decode_one({0xc3}).flow == Flow::Return);
  CHECK(decode_one({0xcc}).flow == Flow::Other);        // int3
  CHECK(decode_one({0x0f, 0x0b}).flow == Flow::Other);  // ud2
  CHECK(decode_one({0xf4}).flow == Flow::Other);        // hlt
  CHECK(decode_one({0x0f, 0x05}).flow == Flow::Next);   // syscall
}

TEST_CASE("decode_all stops at bytes that are no instruction") {
  X86Decoder decoder;
  // mov eax, [rdi]; ret; then 0x06 (push es, invalid in 64-bit mode); then a nop.
  std::vector<uint8_t> code = {0x8b, 0x07, 0xc3, 0x06, 0x90};
  auto all = decoder.decode_all(code, kAt);
  REQUIRE(all.size() == 2);
  CHECK(all[1].address == kAt + 2);
  CHECK(all[1].flow == Flow::Return);
  CHECK_FALSE(decoder.decode(std::span(code).subspan(3), kAt + 3).has_value());
  CHECK_FALSE(decoder.decode(std::span(code).first(1), kAt).has_value());  // cut short
}

TEST_CASE("full_register names the 64-bit register of every part") {
  CHECK(full_register(X86_REG_AL) == X86_REG_RAX);
  CHECK(full_register(X86_REG_EAX) == X86_REG_RAX);
  CHECK(full_register(X86_REG_R8D) == X86_REG_R8);
  CHECK(full_register(X86_REG_SIL) == X86_REG_RSI);
  CHECK(full_register(X86_REG_RIP) == X86_REG_RIP);
  CHECK(std::string(register_name(X86_REG_RBX)) == "rbx");
}

TEST_CASE("decode_ending_at finds the store that trapped at `end`") {
  X86Decoder decoder;
  // mov rdi, rax; mov dword ptr [rip+0x2e00], 1 — ending at 0x1200, so it writes 0x4000.
  std::vector<uint8_t> before = {0x48, 0x89, 0xc7, 0xc7, 0x05, 0x00, 0x2e,
                                 0x00, 0x00, 0x01, 0x00, 0x00, 0x00};
  auto hit = decode_ending_at(decoder, before, 0x1200, 0x4000);
  REQUIRE(hit.has_value());
  CHECK(hit->address == 0x11f6);
  CHECK(hit->length == 10);
  CHECK(hit->memory[0].access == MemAccess::Write);
  CHECK(hit->memory[0].target == 0x4000);

  // Watching another address: the rip-relative store cannot reach it, so the answer is
  // some shorter decoding through registers, never the store.
  auto other = decode_ending_at(decoder, before, 0x1200, 0x8000);
  if (other) {
    CHECK(other->address != 0x11f6);
    CHECK_FALSE(other->accessed_memory()->rip_relative);
  }

  // mov dword ptr [rdi], 1 after two nops: the longest decoding with memory wins.
  std::vector<uint8_t> through_register = {0x90, 0x90, 0xc7, 0x07, 0x01, 0x00, 0x00, 0x00};
  auto longest = decode_ending_at(decoder, through_register, 0x2000, 0x4000);
  REQUIRE(longest.has_value());
  CHECK(longest->address == 0x2000 - 6);
  CHECK(longest->text == "mov dword ptr [rdi], 1");
  CHECK(longest->memory[0].access == MemAccess::Write);

  std::vector<uint8_t> no_memory = {0x48, 0x89, 0xc7};  // mov rdi, rax
  CHECK_FALSE(decode_ending_at(decoder, no_memory, 0x3000, 0x4000).has_value());
}

}  // namespace
}  // namespace cw::instrument
