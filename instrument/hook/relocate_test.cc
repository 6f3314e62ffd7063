// Prologue relocation and the branch scan on byte vectors: exact output bytes for each
// instruction form, and exact refusals.
#include "instrument/hook/relocate.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "instrument/hook/branch_scan.h"

using namespace cw::hook;

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint64_t kAddress = 0x400000;
constexpr uint64_t kNear = 0x401000;       // trampoline 4 KiB after the function
constexpr uint64_t kFar = 0x7f0000000000;  // beyond rel32 reach

struct Result {
  bool ok;
  std::string reason;
  RelocatedPrologue prologue;
};

Result relocate(const Bytes& code, uint64_t trampoline, size_t size_hint = 0) {
  Result result{};
  char reason[256] = {};
  result.ok = relocate_prologue(code.data(), code.size(), kAddress, size_hint, trampoline,
                                &result.prologue, reason, sizeof reason);
  result.reason = reason;
  return result;
}

Bytes code_of(const RelocatedPrologue& p) {
  return Bytes(p.code, p.code + p.size);
}

void append_rel32(Bytes& bytes, int64_t value) {
  const auto v = static_cast<uint32_t>(static_cast<int32_t>(value));
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void append_u64(Bytes& bytes, uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// jmp rel32 from `from` (the jmp's address) to `to`.
Bytes jmp_rel32(uint64_t from, uint64_t to) {
  Bytes b{0xe9};
  append_rel32(b, static_cast<int64_t>(to - (from + 5)));
  return b;
}

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes all;
  for (const Bytes& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

}  // namespace

TEST_CASE("a prologue with nothing relative is copied as is, then a jump back") {
  // push rbp; mov rbp, rsp; push rbx | endbr64; push rbp
  const Bytes frame{0x55, 0x48, 0x89, 0xe5, 0x53, 0x89, 0xfb, 0xc3};
  const Bytes endbr{0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5};
  for (const auto& [code, instructions] : {std::pair{frame, 3}, std::pair{endbr, 2}}) {
    Result r = relocate(code, kNear);
    REQUIRE_MESSAGE(r.ok, r.reason);
    CHECK(r.prologue.patched == 5);
    CHECK(code_of(r.prologue) ==
          concat({Bytes(code.begin(), code.begin() + 5), jmp_rel32(kNear + 5, kAddress + 5)}));
    CHECK(r.prologue.instructions == static_cast<size_t>(instructions));
  }
}

TEST_CASE("a rip-relative load gets its displacement re-aimed from the trampoline") {
  // mov eax, [rip + 0x10]; ret
  const Bytes code{0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, 0xc3};
  Result r = relocate(code, kNear);
  REQUIRE_MESSAGE(r.ok, r.reason);
  CHECK(r.prologue.patched == 6);
  Bytes expected{0x8b, 0x05};
  append_rel32(expected, static_cast<int64_t>((kAddress + 6 + 0x10) - (kNear + 6)));
  CHECK(code_of(r.prologue) == concat({expected, jmp_rel32(kNear + 6, kAddress + 6)}));
}

TEST_CASE("lea rip-relative with a REX prefix") {
  // lea rax, [rip - 0x20]; mov eax, [rax+4]
  const Bytes code{0x48, 0x8d, 0x05, 0xe0, 0xff, 0xff, 0xff, 0x8b, 0x40, 0x04};
  Result r = relocate(code, kNear);
  REQUIRE_MESSAGE(r.ok, r.reason);
  Bytes expected{0x48, 0x8d, 0x05};
  append_rel32(expected, static_cast<int64_t>((kAddress + 7 - 0x20) - (kNear + 7)));
  CHECK(code_of(r.prologue) == concat({expected, jmp_rel32(kNear + 7, kAddress + 7)}));
}

TEST_CASE("a rip-relative operand followed by an immediate keeps the immediate") {
  // cmp dword [rip + 0x100], 7 (83 3d disp32 imm8)
  const Bytes code{0x83, 0x3d, 0x00, 0x01, 0x00, 0x00, 0x07};
  Result r = relocate(code, kNear);
  REQUIRE_MESSAGE(r.ok, r.reason);
  Bytes expected{0x83, 0x3d};
  append_rel32(expected, static_cast<int64_t>((kAddress + 7 + 0x100) - (kNear + 7)));
  expected.push_back(0x07);
  CHECK(code_of(r.prologue) == concat({expected, jmp_rel32(kNear + 7, kAddress + 7)}));
}

TEST_CASE("jcc rel8 becomes jcc rel32 and the offsets map instruction by instruction") {
  // test edi,edi; js +5 (to +9); lea eax,[rdi+1]; ret; ...
  const Bytes code{0x85, 0xff, 0x78, 0x05, 0x8d, 0x47, 0x01, 0xc3, 0x90, 0xb8};
  Result r = relocate(code, kNear);
  REQUIRE_MESSAGE(r.ok, r.reason);
  CHECK(r.prologue.patched == 7);
  Bytes js{0x0f, 0x88};
  append_rel32(js, static_cast<int64_t>((kAddress + 9) - (kNear + 2 + 6)));
  CHECK(code_of(r.prologue) ==
        concat({{0x85, 0xff}, js, {0x8d, 0x47, 0x01}, jmp_rel32(kNear + 11, kAddress + 7)}));
  REQUIRE(r.prologue.instructions == 3);
  CHECK(r.prologue.original_offset[0] == 0);
  CHECK(r.prologue.original_offset[1] == 2);
  CHECK(r.prologue.original_offset[2] == 4);
  CHECK(r.prologue.relocated_offset[0] == 0);
  CHECK(r.prologue.relocated_offset[1] == 2);
  CHECK(r.prologue.relocated_offset[2] == 8);
}

TEST_CASE("jmp rel8 and call rel32 are re-aimed with rel32") {
  // jmp +5 (to +7); mov eax, 99 — the size is known, so the jmp need not be the end
  Result jmp = relocate({0xeb, 0x05, 0xb8, 0x63, 0, 0, 0, 0xc3}, kNear, 8);
  REQUIRE_MESSAGE(jmp.ok, jmp.reason);
  CHECK(code_of(jmp.prologue) == concat({jmp_rel32(kNear, kAddress + 7),
                                         {0xb8, 0x63, 0, 0, 0},
                                         jmp_rel32(kNear + 10, kAddress + 7)}));
  // call +0x100 (to +0x105)
  Result call = relocate({0xe8, 0x00, 0x01, 0x00, 0x00, 0xc3}, kNear);
  REQUIRE_MESSAGE(call.ok, call.reason);
  Bytes expected{0xe8};
  append_rel32(expected, static_cast<int64_t>((kAddress + 0x105) - (kNear + 5)));
  CHECK(code_of(call.prologue) == concat({expected, jmp_rel32(kNear + 5, kAddress + 5)}));
}

TEST_CASE("out of rel32 reach, branches become absolute and rip-relative is refused") {
  // call rel32: call [rip+2]; jmp +8; .quad target
  Result call = relocate({0xe8, 0x00, 0x01, 0x00, 0x00, 0xc3}, kFar);
  REQUIRE_MESSAGE(call.ok, call.reason);
  Bytes expected{0xff, 0x15, 2, 0, 0, 0, 0xeb, 8};
  append_u64(expected, kAddress + 0x105);
  Bytes back{0xff, 0x25, 0, 0, 0, 0};
  append_u64(back, kAddress + 5);
  CHECK(code_of(call.prologue) == concat({expected, back}));

  // jcc: the inverse condition skips a 14-byte absolute jmp
  Result js = relocate({0x85, 0xff, 0x78, 0x05, 0x8d, 0x47, 0x01, 0xc3}, kFar);
  REQUIRE_MESSAGE(js.ok, js.reason);
  Bytes far_js{0x85, 0xff, 0x79, 14, 0xff, 0x25, 0, 0, 0, 0};
  append_u64(far_js, kAddress + 9);
  far_js.insert(far_js.end(), {0x8d, 0x47, 0x01, 0xff, 0x25, 0, 0, 0, 0});
  append_u64(far_js, kAddress + 7);
  CHECK(code_of(js.prologue) == far_js);

  Result load = relocate({0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, 0xc3}, kFar);
  CHECK_FALSE(load.ok);
  CHECK(load.reason ==
        "'mov eax, dword ptr [rip + 0x10]' at 0x400000 (+0) addresses 0x400016, out of reach "
        "(±2 GB) of the trampoline at 0x7f0000000000");
}

TEST_CASE("refusals say what and where") {
  CHECK(relocate({0x31, 0xc0, 0xc3}, kNear, 3).reason ==
        "the function at 0x400000 is 3 bytes long, shorter than the 5-byte jump");
  CHECK(relocate({0x31, 0xc0, 0xc3, 0xcc, 0xcc, 0xcc}, kNear).reason ==
        "the function at 0x400000 returns at +2, within the 5 bytes the jump needs");
  CHECK(relocate({0xeb, 0x10, 0xcc, 0xcc, 0xcc, 0xcc}, kNear).reason ==
        "the function at 0x400000 may end with the jump at +0, within the 5 bytes the jump "
        "needs (its size is unknown)");
  CHECK(relocate({0xcc, 0x90, 0x90, 0x90, 0x90, 0x90}, kNear).reason ==
        "int3 at 0x400000 (+0) cannot be relocated: a breakpoint or probe is there");
  CHECK(relocate({0xe3, 0x06, 0xb8, 1, 0, 0, 0, 0xc3}, kNear).reason ==
        "'jrcxz 0x400008' at 0x400000 (+0) cannot be relocated: it has no 32-bit displacement "
        "form");
  CHECK(relocate({0x89, 0xf9, 0xe2, 0x04, 0x90, 0x90, 0x90, 0x90}, kNear).reason ==
        "'loop 0x400008' at 0x400002 (+2) cannot be relocated: it has no 32-bit displacement "
        "form");
  CHECK(relocate({0xff, 0xd6, 0x01, 0xf8, 0xc3}, kNear, 5).reason ==
        "'call rsi' at 0x400000 (+0) returns to +2, inside the bytes the jump replaces");
  // jne -4 at +2 (to +0)... and to +1, inside the patch
  CHECK(relocate({0x90, 0x75, 0xfe, 0x90, 0x90, 0x90}, kNear).reason ==
        "the branch at 0x400001 (+1) jumps to +1, inside the 5 bytes the jump replaces");
  CHECK(relocate({0x0f, 0x0b}, kNear).reason == "only 2 bytes are readable at 0x400000");
  CHECK(relocate({0x06, 0x90, 0x90, 0x90, 0x90}, kNear).reason ==
        "cannot decode the instruction at 0x400000 (+0)");
}

TEST_CASE("the branch scan finds a loop back into the patched bytes") {
  // xor eax,eax; add eax,edi (+2); dec esi; jnz -6 (to +2); ret
  const Bytes loop{0x31, 0xc0, 0x01, 0xf8, 0xff, 0xce, 0x75, 0xfa, 0xc3};
  char reason[256] = {};
  CHECK(find_branch_into_patch(loop.data(), loop.size(), kAddress, 0, 6, reason, sizeof reason));
  CHECK(std::string(reason) ==
        "'jne 0x400002' at 0x400006 (+6) jumps back to +2, inside the 6 bytes the jump "
        "replaces");
  // A branch to the function's first byte is fine: that byte still starts an instruction.
  const Bytes to_start{0x31, 0xc0, 0x01, 0xf8, 0xff, 0xce, 0x75, 0xf8, 0xc3};
  CHECK_FALSE(find_branch_into_patch(to_start.data(), to_start.size(), kAddress, 0, 6, reason,
                                     sizeof reason));
}

TEST_CASE("without a size, the scan ends at a ret past every forward branch") {
  // xor eax,eax; test edi,edi; je +1 (to +7); ret; ret (+7); then the next function:
  // jmp to +2 (+8)
  const Bytes two_functions{0x31, 0xc0, 0x85, 0xff, 0x74, 0x01, 0xc3, 0xc3, 0xeb, 0xf8};
  char reason[256] = {};
  // The ret at +6 comes before the je's target, so the scan goes on to the one at +7, and
  // stops there: the jmp after it is not this function's.
  CHECK_FALSE(find_branch_into_patch(two_functions.data(), two_functions.size(), kAddress, 0, 6,
                                     reason, sizeof reason));
  // With the size known to cover it, the jmp is this function's.
  CHECK(find_branch_into_patch(two_functions.data(), two_functions.size(), kAddress, 10, 6, reason,
                               sizeof reason));
  CHECK(std::string(reason) ==
        "'jmp 0x400002' at 0x400008 (+8) jumps back to +2, inside the 6 bytes the jump replaces");
}
