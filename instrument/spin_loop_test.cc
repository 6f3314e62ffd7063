#include "instrument/spin_loop.h"

#include <doctest/doctest.h>

#include <vector>

#include "instrument/elf_image.h"

namespace cw::instrument {
namespace {

constexpr uint64_t kAt = 0x1000;

// outer: mov eax, [rip+0x1000]; test eax, eax; jne done
// inner: pause; cmp dword ptr [rip+0x2000], 0; je inner; jmp outer
// done:  ret
const std::vector<uint8_t> kNested = {0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, 0x85, 0xc0,
                                      0x75, 0x0d, 0xf3, 0x90, 0x83, 0x3d, 0x00, 0x20,
                                      0x00, 0x00, 0x00, 0x74, 0xf5, 0xeb, 0xe9, 0xc3};
constexpr uint64_t kOuterFlag = 0x1000 + 6 + 0x1000;
constexpr uint64_t kInnerFlag = 0x100c + 7 + 0x2000;

TEST_CASE("nested loops: each with its own exit reads, most-sampled first") {
  X86Decoder decoder;
  std::vector<std::pair<uint64_t, uint64_t>> samples = {{0x100a, 100}, {0x1000, 5}, {0x1017, 7}};
  auto loops = find_spin_loops(decoder, kNested, kAt, samples);
  REQUIRE(loops.size() == 2);

  const SpinLoop& outer = loops[0];
  CHECK(outer.head == 0x1000);
  CHECK(outer.end == 0x1017);
  CHECK(outer.samples == 105);  // `done` is outside both
  REQUIRE(outer.exit_reads.size() == 1);
  CHECK(outer.exit_reads[0].address == kOuterFlag);
  CHECK(outer.exit_reads[0].size == 4);
  CHECK(outer.exit_reads[0].instruction == 0x1000);
  CHECK(outer.exit_reads[0].branch == 0x1008);
  CHECK(outer.exit_reads[0].text == "mov eax, dword ptr [rip + 0x1000]");

  const SpinLoop& inner = loops[1];
  CHECK(inner.head == 0x100a);
  CHECK(inner.end == 0x1015);
  CHECK(inner.samples == 100);
  REQUIRE(inner.exit_reads.size() == 1);
  CHECK(inner.exit_reads[0].address == kInnerFlag);
  CHECK(inner.exit_reads[0].instruction == 0x100c);
}

TEST_CASE("equal samples put the inner loop first; samples outside every loop find none") {
  X86Decoder decoder;
  std::vector<std::pair<uint64_t, uint64_t>> in_inner = {{0x1013, 50}};
  auto loops = find_spin_loops(decoder, kNested, kAt, in_inner);
  REQUIRE(loops.size() == 2);
  CHECK(loops[0].head == 0x100a);
  CHECK(loops[1].head == 0x1000);

  std::vector<std::pair<uint64_t, uint64_t>> outside = {{0x1017, 50}, {0x9000, 3}};
  CHECK(find_spin_loops(decoder, kNested, kAt, outside).empty());
}

// The polling loops of the compiled fixtures, sampled where a yielding thread is seen:
// just after its call to sched_yield.
std::vector<std::pair<uint64_t, uint64_t>> after_calls(const X86Decoder& decoder,
                                                       std::span<const uint8_t> code,
                                                       uint64_t address) {
  std::vector<std::pair<uint64_t, uint64_t>> samples;
  for (const Instruction& insn : decoder.decode_all(code, address))
    if (insn.flow == Flow::Call) samples.emplace_back(insn.end(), 1000);
  REQUIRE(!samples.empty());
  return samples;
}

TEST_CASE("compiled polling loops: a rip-relative flag, in a PIE and a fixed-address build") {
  X86Decoder decoder;
  for (const char* path : {CW_FLAG_PIE, CW_FLAG_NOPIE}) {
    CAPTURE(path);
    std::string error;
    auto image = ElfImage::open(path, &error);
    REQUIRE_MESSAGE(image != nullptr, error);
    auto wait = image->find_symbol("wait_flag");
    auto flag = image->find_symbol("shared_flag");
    REQUIRE(wait.has_value());
    REQUIRE(flag.has_value());
    auto code = image->bytes(wait->vaddr, wait->size);
    auto loops =
        find_spin_loops(decoder, code, wait->vaddr, after_calls(decoder, code, wait->vaddr));
    REQUIRE(loops.size() == 1);
    CHECK(loops[0].samples == 1000);
    REQUIRE(!loops[0].exit_reads.empty());
    for (const LoopExitRead& r : loops[0].exit_reads) {
      CHECK(r.address == flag->vaddr);
      CHECK(r.size == 4);
    }
  }
}

TEST_CASE("a compiled polling loop in PIC code reads the flag through its GOT slot") {
  X86Decoder decoder;
  std::string error;
  auto image = ElfImage::open(CW_FLAG_LIB, &error);
  REQUIRE_MESSAGE(image != nullptr, error);
  auto wait = image->find_symbol("lib_wait");
  REQUIRE(wait.has_value());
  auto slots = image->got_slots("extern_flag");
  REQUIRE(slots.size() == 1);
  auto code = image->bytes(wait->vaddr, wait->size);
  auto loops = find_spin_loops(decoder, code, wait->vaddr, after_calls(decoder, code, wait->vaddr));
  REQUIRE(loops.size() == 1);
  REQUIRE(!loops[0].exit_reads.empty());
  for (const LoopExitRead& r : loops[0].exit_reads) {
    CHECK(r.address == 0);
    CHECK(r.pointer_slot == slots[0]);  // loaded before the loop, kept across sched_yield
    CHECK(r.pointer_offset == 0);
  }
}

}  // namespace
}  // namespace cw::instrument
