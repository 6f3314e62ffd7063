// The CFI unwinder (recorder/dwarf_unwind.h) on a stack this test takes of itself: a chain of
// functions built without frame pointers (recorder/CMakeLists.txt compiles this file with
// -fomit-frame-pointer), whose registers and stack copy are taken as the eBPF side takes a
// thread's, then unwound and named with libdwfl.
#include "recorder/dwarf_unwind.h"

#include <doctest/doctest.h>
#include <elfutils/libdwfl.h>
#include <execinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// Stores the caller's registers in DWARF order (rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip)
// as they are once this function has returned: rsp above the return address, rip the
// return address. Only rax is changed, after it is stored.
extern "C" void cw_test_capture_regs(uint64_t* out);
asm(R"(
  .text
  .globl cw_test_capture_regs
  .type cw_test_capture_regs, @function
cw_test_capture_regs:
  .cfi_startproc
  movq %rax, 0(%rdi)
  movq %rdx, 8(%rdi)
  movq %rcx, 16(%rdi)
  movq %rbx, 24(%rdi)
  movq %rsi, 32(%rdi)
  movq %rdi, 40(%rdi)
  movq %rbp, 48(%rdi)
  leaq 8(%rsp), %rax
  movq %rax, 56(%rdi)
  movq %r8, 64(%rdi)
  movq %r9, 72(%rdi)
  movq %r10, 80(%rdi)
  movq %r11, 88(%rdi)
  movq %r12, 96(%rdi)
  movq %r13, 104(%rdi)
  movq %r14, 112(%rdi)
  movq %r15, 120(%rdi)
  movq (%rsp), %rax
  movq %rax, 128(%rdi)
  ret
  .cfi_endproc
  .size cw_test_capture_regs, .-cw_test_capture_regs
)");

struct Capture {
  uint64_t regs[cw::kUnwindRegs];
  std::vector<uint8_t> stack;
  // The same stack as glibc's backtrace() (libgcc's CFI unwinder) sees it, taken right
  // after: the reference. Its first frame is in chain_leaf (after the backtrace call).
  std::vector<uint64_t> reference;
};

// The end of the mapping that holds `addr` (a stack is copied up to there at most).
uint64_t mapping_end(uint64_t addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uint64_t start = 0, end = 0;
    char dash;
    std::istringstream in(line);
    in >> std::hex >> start >> dash >> end;
    if (addr >= start && addr < end) return end;
  }
  return addr;
}

volatile uint64_t sink;

__attribute__((noinline)) void chain_leaf(Capture& c, size_t bytes) {
  cw_test_capture_regs(c.regs);
  uint64_t sp = c.regs[cw::kUnwindSp];
  size_t n = std::min<uint64_t>(bytes, mapping_end(sp) - sp);
  c.stack.assign(reinterpret_cast<const uint8_t*>(sp), reinterpret_cast<const uint8_t*>(sp) + n);
  void* frames[64];
  int got = backtrace(frames, 64);
  for (int i = 0; i < got; ++i) c.reference.push_back(reinterpret_cast<uint64_t>(frames[i]));
  sink = n;
}
__attribute__((noinline)) void chain_middle(Capture& c, size_t bytes) {
  chain_leaf(c, bytes);
  sink = sink + 1;  // not a tail call: chain_middle stays on the stack
}
__attribute__((noinline)) void chain_outer(Capture& c, size_t bytes) {
  chain_middle(c, bytes);
  sink = sink + 2;
}

// The executable file mappings of this process, as the recorder's map capture gives them.
void add_own_maps(cw::DwarfUnwinder& unwinder) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.find('x') == std::string::npos || path.empty() || path[0] != '/') continue;
    size_t dash = range.find('-');
    unwinder.add_map(getpid(), std::stoull(range.substr(0, dash), nullptr, 16),
                     std::stoull(range.substr(dash + 1), nullptr, 16),
                     std::stoull(offset, nullptr, 16), path);
  }
}

// Function names of `ips` (outer frames looked up at ip - 1, inside their call).
std::vector<std::string> names(const std::vector<uint64_t>& ips) {
  static const Dwfl_Callbacks callbacks = {.find_elf = dwfl_linux_proc_find_elf,
                                           .find_debuginfo = dwfl_standard_find_debuginfo,
                                           .section_address = nullptr,
                                           .debuginfo_path = nullptr};
  Dwfl* dwfl = dwfl_begin(&callbacks);
  dwfl_linux_proc_report(dwfl, getpid());
  dwfl_report_end(dwfl, nullptr, nullptr);
  std::vector<std::string> out;
  for (size_t i = 0; i < ips.size(); ++i) {
    uint64_t at = i == 0 ? ips[i] : ips[i] - 1;
    Dwfl_Module* m = dwfl_addrmodule(dwfl, at);
    const char* name = m ? dwfl_module_addrname(m, at) : nullptr;
    out.push_back(name ? name : "?");
  }
  dwfl_end(dwfl);
  return out;
}

std::string joined(const std::vector<std::string>& frames, const std::vector<uint64_t>& ips) {
  std::string s;
  for (size_t i = 0; i < frames.size(); ++i) {
    char at[24];
    std::snprintf(at, sizeof at, "@%llx", static_cast<unsigned long long>(ips[i]));
    s += (s.empty() ? "" : ";") + frames[i] + at;
  }
  return s;
}

}  // namespace

TEST_CASE("a stack copy of code without frame pointers unwinds through its callers to the start") {
  Capture c;
  // In a thread of its own: its stack is a known mapping, and its start is start_thread.
  std::thread([&] { chain_outer(c, 8192); }).join();
  cw::DwarfUnwinder unwinder;
  add_own_maps(unwinder);
  std::vector<uint64_t> ips =
      unwinder.unwind(getpid(), static_cast<cw::Tid>(gettid()), c.regs, c.stack, 128);
  std::vector<std::string> frames = names(ips);
  INFO("frames: " << joined(frames, ips));
  REQUIRE(frames.size() >= 4);
  CHECK(ips[0] == c.regs[cw::kUnwindIp]);
  CHECK(frames[0] == "_ZN12_GLOBAL__N_110chain_leafERNS_7CaptureEm");
  CHECK(frames[1] == "_ZN12_GLOBAL__N_112chain_middleERNS_7CaptureEm");
  CHECK(frames[2] == "_ZN12_GLOBAL__N_111chain_outerERNS_7CaptureEm");
  // Above chain_leaf, every return address is the one libgcc's unwinder found, up to the
  // thread's start (std::thread's routine, start_thread, clone3).
  REQUIRE(c.reference.size() >= 6);
  std::vector<uint64_t> ours(ips.begin() + 1, ips.end());
  std::vector<uint64_t> theirs(c.reference.begin() + 1, c.reference.end());
  CHECK(ours == theirs);
  CHECK(ips.size() >= 6);
  CHECK(unwinder.stats().stacks == 1);
  CHECK(unwinder.stats().no_file == 0);
}

TEST_CASE("the unwinding stops where the stack copy ends") {
  Capture c;
  std::thread([&] { chain_outer(c, 8192); }).join();
  cw::DwarfUnwinder unwinder;
  add_own_maps(unwinder);
  std::vector<uint64_t> full =
      unwinder.unwind(getpid(), static_cast<cw::Tid>(gettid()), c.regs, c.stack, 128);
  // chain_leaf's frame alone: its return address into chain_middle is past the copy.
  std::vector<uint64_t> cut = unwinder.unwind(getpid(), static_cast<cw::Tid>(gettid()), c.regs,
                                              std::span<const uint8_t>(c.stack).first(8), 128);
  CHECK(full.size() > 4);
  CHECK(cut.size() < full.size());
  CHECK(cut.size() <= 2);
  CHECK(cut[0] == full[0]);
  // And at most max_frames.
  CHECK(unwinder.unwind(getpid(), static_cast<cw::Tid>(gettid()), c.regs, c.stack, 3).size() == 3);
}

TEST_CASE("a stack in no known file is its ip alone") {
  Capture c;
  std::thread([&] { chain_outer(c, 4096); }).join();
  cw::DwarfUnwinder unwinder;  // no maps given, and none read from /proc
  unwinder.set_read_proc(false);
  std::vector<uint64_t> ips =
      unwinder.unwind(getpid(), static_cast<cw::Tid>(gettid()), c.regs, c.stack, 128);
  REQUIRE(ips.size() == 1);
  CHECK(ips[0] == c.regs[cw::kUnwindIp]);
  CHECK(unwinder.stats().no_file == 1);
}

TEST_CASE("a process with no mapping known is read from /proc (a forked child)") {
  Capture c;
  std::thread([&] { chain_outer(c, 8192); }).join();
  cw::DwarfUnwinder unwinder;  // no maps given: this process's are read from /proc
  std::vector<uint64_t> ips =
      unwinder.unwind(getpid(), static_cast<cw::Tid>(gettid()), c.regs, c.stack, 128);
  std::vector<uint64_t> ours(ips.begin() + 1, ips.end());
  std::vector<uint64_t> theirs(c.reference.begin() + 1, c.reference.end());
  CHECK(ours == theirs);
  CHECK(unwinder.stats().no_file == 0);
}

TEST_CASE("a mapping over an older one replaces it") {
  Capture c;
  std::thread([&] { chain_outer(c, 8192); }).join();
  cw::DwarfUnwinder unwinder;
  unwinder.set_read_proc(false);
  add_own_maps(unwinder);
  uint64_t ip = c.regs[cw::kUnwindIp];
  CHECK(unwinder.unwind(1, 1, c.regs, c.stack, 128).size() == 1);  // pid 1: nothing known
  // Something else mapped over this test's code (as after an exec): the ip is in no file
  // the unwinder knows for that process any more.
  unwinder.add_map(getpid(), ip & ~uint64_t{0xfff}, (ip & ~uint64_t{0xfff}) + 0x1000, 0,
                   "/nonexistent/replacement");
  std::vector<uint64_t> ips =
      unwinder.unwind(getpid(), static_cast<cw::Tid>(gettid()), c.regs, c.stack, 128);
  CHECK(ips.size() == 1);
}
