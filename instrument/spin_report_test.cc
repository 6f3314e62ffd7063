// From real samples of the fixtures spinning on their flags to named flags (needs root or
// CAP_PERFMON for the sampling).
#include "instrument/spin_report.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include "instrument/spinning_child.h"

namespace cw::instrument {
namespace {

SpinReport sample_and_analyse(pid_t pid) {
  SampleRun run = sample_at_least(pid, 10);
  std::string error;
  auto maps = read_proc_maps(pid, &error);
  REQUIRE_MESSAGE(maps.has_value(), error);
  ProcessImages images(pid, std::move(*maps));
  X86Decoder decoder;
  return analyse_spin(run.samples, images, decoder);
}

const LoopReport* loop_in(const SpinReport& report, const std::string& function) {
  for (const LoopReport& l : report.loops)
    if (l.function == function) return &l;
  return nullptr;
}

TEST_CASE("a polling loop in a PIE names its rip-relative flag") {
  SpinningChild child(CW_FLAG_PIE, "0");
  SpinReport report = sample_and_analyse(child.pid);
  REQUIRE(!report.loops.empty());
  CHECK(report.loops[0].function == "wait_flag");  // the most-sampled loop
  const LoopReport* loop = loop_in(report, "wait_flag");
  REQUIRE(loop != nullptr);
  CHECK(loop->binary == "cw-instr-flag-pie");
  CHECK(loop->samples * 10 >= report.samples * 9);  // nearly every sample returns into it
  REQUIRE(!loop->reads.empty());
  for (const ExitReadReport& r : loop->reads) {
    CAPTURE(r.text);
    CHECK(r.resolved);
    CHECK(r.symbol == "shared_flag");
    CHECK(r.binary == "cw-instr-flag-pie");
    CHECK(r.symbol_offset == 0);
    CHECK(r.size == 4);
  }
}

TEST_CASE("a polling loop in a shared library names the program's flag through the GOT") {
  SpinningChild child(CW_FLAG_LIBUSER);
  SpinReport report = sample_and_analyse(child.pid);
  const LoopReport* loop = loop_in(report, "lib_wait");
  REQUIRE(loop != nullptr);
  CHECK(loop->binary == "libcw-instr-flag-lib.so");
  REQUIRE(!loop->reads.empty());
  for (const ExitReadReport& r : loop->reads) {
    CAPTURE(r.text);
    CHECK(r.resolved);
    CHECK(r.symbol == "extern_flag");
    CHECK(r.binary == "cw-instr-flag-libuser");  // where the pointer in the GOT leads
  }
}

TEST_CASE("return addresses are told from other words pointing into code") {
  SpinningChild child(CW_FLAG_PIE, "0");
  std::string error;
  auto maps = read_proc_maps(child.pid, &error);
  REQUIRE_MESSAGE(maps.has_value(), error);
  ProcessImages images(child.pid, std::move(*maps));
  X86Decoder decoder;
  const ProcMap* code_map = nullptr;
  for (const ProcMap& m : images.maps())
    if (m.executable && file_name(m.path) == "cw-instr-flag-pie") code_map = &m;
  REQUIRE(code_map != nullptr);
  auto loc = images.locate(code_map->start);
  REQUIRE(loc.has_value());
  auto main_symbol = loc->image->find_symbol("main");
  REQUIRE(main_symbol.has_value());
  // After each of main's calls is a return address; a call's own address is not one
  // unless another call ends there.
  auto code = loc->image->bytes(main_symbol->vaddr, main_symbol->size);
  int calls = 0;
  Flow previous = Flow::Next;
  for (const Instruction& insn : decoder.decode_all(code, main_symbol->vaddr + loc->bias)) {
    if (insn.flow == Flow::Call) {
      ++calls;
      CHECK(images.returns_after_call(decoder, insn.end()));
      if (previous != Flow::Call) CHECK_FALSE(images.returns_after_call(decoder, insn.address));
    }
    previous = insn.flow;
  }
  CHECK(calls >= 3);
  CHECK_FALSE(images.returns_after_call(decoder, 0x10));  // unmapped
}

}  // namespace
}  // namespace cw::instrument
