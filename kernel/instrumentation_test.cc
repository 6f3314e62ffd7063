// Uprobes and hardware watchpoints against the real kernel, on the real program
// tests/programs/flagpoll.c: its main thread polls `ready` through poll_once() until its
// setter thread stores 1. The test finds the symbols with libelf and the instructions that
// access `ready` with Capstone itself. Needs root, like probes_test.cc.
#include <capstone/capstone.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kernel/probes.h"
#include "kernel/records.h"
#include "kernel/test_records.h"
#include "kernel/watchpoints.h"

using namespace cw::kernel;
using namespace cw::kernel::testing;

namespace {

const std::string kFlagpoll = CW_FLAGPOLL_PATH;

// What the test needs of the flagpoll executable: symbol addresses, the bytes of its code
// and where addresses are in the file.
struct Binary {
  struct Section {
    uint64_t addr = 0, offset = 0;
    std::vector<uint8_t> bytes;  // code sections only
  };
  std::map<std::string, uint64_t> symbols;
  std::vector<Section> code;
  uint64_t first_load_vaddr = 0;  // the PT_LOAD at file offset 0, mapped at the load bias

  uint64_t symbol(const std::string& name) const {
    auto it = symbols.find(name);
    REQUIRE_MESSAGE(it != symbols.end(), "no symbol ", name, " in ", kFlagpoll);
    return it->second;
  }
  uint64_t file_offset(uint64_t vaddr) const {
    for (const auto& s : code)
      if (vaddr >= s.addr && vaddr < s.addr + s.bytes.size()) return vaddr - s.addr + s.offset;
    FAIL("address ", vaddr, " is not in a code section");
    return 0;
  }
  std::vector<uint8_t> bytes_at(uint64_t vaddr, size_t n) const {
    for (const auto& s : code)
      if (vaddr >= s.addr && vaddr + n <= s.addr + s.bytes.size())
        return {s.bytes.begin() + (vaddr - s.addr), s.bytes.begin() + (vaddr - s.addr + n)};
    FAIL("address ", vaddr, " is not in a code section");
    return {};
  }
};

Binary read_binary(const std::string& path) {
  REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE_MESSAGE(fd >= 0, "cannot open ", path);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  REQUIRE(elf);
  Binary binary;
  size_t headers = 0;
  REQUIRE(elf_getphdrnum(elf, &headers) == 0);
  for (size_t i = 0; i < headers; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) && phdr.p_type == PT_LOAD &&
        phdr.p_offset == 0)
      binary.first_load_vaddr = phdr.p_vaddr;
  }
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    REQUIRE(gelf_getshdr(scn, &shdr));
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (shdr.sh_type == SHT_SYMTAB && data) {
      for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
        const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (name && *name && sym.st_value) binary.symbols[name] = sym.st_value;
      }
    }
    if (shdr.sh_type == SHT_PROGBITS && (shdr.sh_flags & SHF_EXECINSTR) && data) {
      auto* bytes = static_cast<const uint8_t*>(data->d_buf);
      binary.code.push_back({shdr.sh_addr, shdr.sh_offset, {bytes, bytes + data->d_size}});
    }
  }
  elf_end(elf);
  close(fd);
  return binary;
}

// An instruction that reads or writes memory at `target` through a RIP-relative operand.
struct Access {
  uint64_t vaddr = 0;
  uint8_t length = 0;
  bool store = false;
};

std::vector<Access> accesses_to(const Binary& binary, uint64_t target) {
  csh handle;
  REQUIRE(cs_open(CS_ARCH_X86, CS_MODE_64, &handle) == CS_ERR_OK);
  cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON);
  std::vector<Access> found;
  for (const auto& section : binary.code) {
    cs_insn* insns = nullptr;
    size_t n =
        cs_disasm(handle, section.bytes.data(), section.bytes.size(), section.addr, 0, &insns);
    for (size_t i = 0; i < n; ++i) {
      const cs_insn& insn = insns[i];
      if (insn.id == X86_INS_LEA) continue;  // computes the address, touches nothing
      const cs_x86& x86 = insn.detail->x86;
      for (uint8_t k = 0; k < x86.op_count; ++k) {
        const cs_x86_op& op = x86.operands[k];
        if (op.type != X86_OP_MEM || op.mem.base != X86_REG_RIP) continue;
        if (insn.address + insn.size + op.mem.disp != target) continue;
        found.push_back(
            {insn.address, static_cast<uint8_t>(insn.size), (op.access & CS_AC_WRITE) != 0});
      }
    }
    cs_free(insns, n);
  }
  cs_close(&handle);
  return found;
}

// flagpoll's instrumentation targets, read once.
struct Targets {
  Binary binary = read_binary(kFlagpoll);
  uint64_t poll_once = binary.symbol("poll_once");
  uint64_t ready = binary.symbol("ready");
  uint64_t ready_slot = binary.symbol("ready_slot");
  Access load, store;

  Targets() {
    for (const Access& access : accesses_to(binary, ready)) {
      Access& slot = access.store ? store : load;
      REQUIRE_MESSAGE(slot.vaddr == 0, "more than one ", access.store ? "store" : "load");
      slot = access;
    }
    REQUIRE(load.vaddr != 0);
    REQUIRE(store.vaddr != 0);
    // flagpoll reads `ready` in poll_once only.
    REQUIRE(load.vaddr >= poll_once);
    REQUIRE(load.vaddr < poll_once + 16);
  }
};

const Targets& targets() {
  static const Targets t;
  return t;
}

// The load bias of flagpoll in process `pid`, or nothing while it is not mapped yet.
std::optional<uint64_t> load_bias(pid_t pid) {
  char real[PATH_MAX];
  REQUIRE(realpath(kFlagpoll.c_str(), real));
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode >> path;
    if (path == real && std::stoull(offset, nullptr, 16) == 0)
      return std::stoull(range, nullptr, 16) - targets().binary.first_load_vaddr;
  }
  return std::nullopt;
}

// What flagpoll -v said.
struct Outcome {
  uint32_t poller = 0, setter = 0;
  long polls = 0;
  uint64_t ready = 0;  // runtime address
};

// cw-prog-flagpoll -v SET_AFTER_MS gate, started and held at its gate (stdin) until
// finish(); killed if the test fails first.
class Flagpoll {
 public:
  explicit Flagpoll(int set_after_ms = 100) {
    int in[2], out[2];
    REQUIRE(pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      std::string delay = std::to_string(set_after_ms);
      execl(kFlagpoll.c_str(), kFlagpoll.c_str(), "-v", delay.c_str(), "gate", nullptr);
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    gate_ = in[1];
    output_ = out[0];
    // Exec'd once /proc names the program and its segments are mapped (the kernel
    // switches /proc/PID/exe before it maps them); it then waits at its gate.
    char real[PATH_MAX], exe[PATH_MAX];
    REQUIRE(realpath(kFlagpoll.c_str(), real));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::string link = "/proc/" + std::to_string(pid_) + "/exe";
    for (;;) {
      ssize_t n = readlink(link.c_str(), exe, sizeof(exe) - 1);
      if (n > 0 && std::string(exe, n) == real) {
        if (std::optional<uint64_t> bias = load_bias(pid_)) {
          bias_ = *bias;
          break;
        }
      }
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "flagpoll did not start");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~Flagpoll() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (gate_ >= 0) close(gate_);
    if (output_ >= 0) close(output_);
  }
  Flagpoll(const Flagpoll&) = delete;
  Flagpoll& operator=(const Flagpoll&) = delete;

  pid_t pid() const { return pid_; }
  // Runtime address of a link-time address in flagpoll.
  uint64_t at(uint64_t vaddr) const { return bias_ + vaddr; }

  Outcome finish() {
    REQUIRE(write(gate_, "g", 1) == 1);
    int status = 0;
    REQUIRE(waitpid(pid_, &status, 0) == pid_);
    pid_ = 0;
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    std::string text;
    char buffer[512];
    for (ssize_t n; (n = read(output_, buffer, sizeof(buffer))) > 0;) text.append(buffer, n);
    Outcome outcome;
    void* ready = nullptr;
    REQUIRE_MESSAGE(
        std::sscanf(text.c_str(),
                    "flagpoll: poller %u polled %ld times; setter %u stored ready at %p",
                    &outcome.poller, &outcome.polls, &outcome.setter, &ready) == 4,
        text);
    outcome.ready = reinterpret_cast<uint64_t>(ready);
    return outcome;
  }

 private:
  pid_t pid_ = 0;
  int gate_ = -1, output_ = -1;
  uint64_t bias_ = 0;
};

ProbeOptions options_recording(std::vector<uint32_t> pids) {
  ProbeOptions options;
  options.pids = std::move(pids);
  options.ring_buffer_bytes = 8u << 20;
  options.stacks = StackMode::None;
  return options;
}

// One value per poll_once call: 0 until the setter's store, then the final 1. A probe reads
// the flag just before (a watch just after) the poller does, so the setter's store may land
// in between once: a 0 the program saw then shows as 1.
void check_polled_values(const std::vector<uint64_t>& values, const Outcome& outcome) {
  REQUIRE(values.size() == static_cast<size_t>(outcome.polls + 1));
  CHECK(values.back() == 1);
  CHECK(std::is_sorted(values.begin(), values.end()));
  CHECK(std::count(values.begin(), values.end(), 1) <= 2);
  CHECK(std::count(values.begin(), values.end(), 0) + std::count(values.begin(), values.end(), 1) ==
        static_cast<ptrdiff_t>(values.size()));
}

FlagSiteProbe site(uint64_t vaddr, uint32_t flag, FlagSiteKind kind, uint64_t target,
                   bool via_got = false, uint8_t length = 0) {
  FlagSiteProbe probe;
  probe.path = kFlagpoll;
  probe.file_offset = targets().binary.file_offset(vaddr);
  probe.flag_index = flag;
  probe.kind = kind;
  probe.via_got = via_got;
  probe.delta = static_cast<int64_t>(target - vaddr);
  probe.size = 4;
  probe.length = length;
  return probe;
}

}  // namespace

TEST_CASE("a function probe gives an entry and an exit for every call of poll_once") {
  const Targets& t = targets();
  Flagpoll program;
  Probes probes(options_recording({static_cast<uint32_t>(program.pid())}));
  probes.attach_function({kFlagpoll, t.binary.file_offset(t.poll_once), 7, true});
  CHECK(probes.attached_instrumentation() == 2);
  Outcome outcome = program.finish();
  auto calls = of_type<cw_rec_call>(drain_all(probes), CW_REC_CALL);

  size_t entries = 0, exits = 0;
  bool entered = false;
  for (const auto& call : calls) {
    CHECK(call.fn_index == 7);
    CHECK(call.h.tid == outcome.poller);
    if (call.is_exit) {
      CHECK(entered);  // exits alternate with entries
      CHECK(call.address == 0);
      ++exits;
    } else {
      CHECK(!entered);
      CHECK(call.address == program.at(t.poll_once));
      ++entries;
    }
    entered = !call.is_exit;
  }
  // poll_once returned 0 `polls` times, then 1.
  CHECK(entries == static_cast<size_t>(outcome.polls + 1));
  CHECK(exits == entries);
}

TEST_CASE("flag-site probes see every read of ready and the setter's store of 1") {
  const Targets& t = targets();
  Flagpoll program;
  Probes probes(options_recording({static_cast<uint32_t>(program.pid())}));
  // Flag 0 RIP-relative; flag 1 the same load with the address taken from ready_slot, as a
  // GOT-indirect site takes it from its GOT entry.
  probes.attach_flag_site(site(t.load.vaddr, 0, FlagSiteKind::Read, t.ready));
  probes.attach_flag_site(site(t.load.vaddr, 1, FlagSiteKind::Read, t.ready_slot, true));
  probes.attach_flag_site(
      site(t.store.vaddr, 0, FlagSiteKind::WriteArm, t.ready, false, t.store.length));
  probes.attach_flag_site(site(t.store.vaddr + t.store.length, 0, FlagSiteKind::WriteAfter, 0));
  CHECK(probes.attached_instrumentation() == 4);
  Outcome outcome = program.finish();
  CHECK(outcome.ready == program.at(t.ready));
  auto flags = of_type<cw_rec_flag>(drain_all(probes), CW_REC_FLAG);

  std::map<uint32_t, std::vector<uint64_t>> reads;  // flag -> values in order
  std::vector<cw_rec_flag> writes;
  for (const auto& flag : flags) {
    CHECK(flag.source == CW_FLAG_PROBE);
    CHECK(flag.size == 4);
    CHECK(flag.addr == outcome.ready);
    if (flag.access == CW_FLAG_READ) {
      CHECK(flag.h.tid == outcome.poller);
      CHECK(flag.ip == program.at(t.load.vaddr));
      reads[flag.flag_index].push_back(flag.value);
    } else {
      REQUIRE(flag.access == CW_FLAG_WRITE);
      writes.push_back(flag);
    }
  }
  check_polled_values(reads[0], outcome);
  check_polled_values(reads[1], outcome);
  REQUIRE(writes.size() == 1);
  CHECK(writes[0].flag_index == 0);
  CHECK(writes[0].value == 1);
  CHECK(writes[0].h.tid == outcome.setter);
  CHECK(writes[0].ip == program.at(t.store.vaddr));
}

// Some machines open a watchpoint and never fire it (kernel/watchpoints.h): the tests of
// hits say so and stop there, as `record` does.
bool watchpoints_fire() {
  WatchSelfTest test = test_watchpoints();
  if (decide_watchpoints(false, test).use_watchpoints) return true;
  MESSAGE("skipped: ", decide_watchpoints(false, test).message);
  return false;
}

TEST_CASE("a write watchpoint catches the store of a thread created after it was set") {
  if (!watchpoints_fire()) return;
  const Targets& t = targets();
  Flagpoll program;
  Probes probes(options_recording({static_cast<uint32_t>(program.pid())}));
  // Only the main thread exists: the setter is created after the gate opens.
  CHECK(probes.attached_instrumentation() == 0);
  probes.attach_watchpoint(
      {static_cast<uint32_t>(program.pid()), 0, program.at(t.ready), 4, true, 3});
  CHECK(probes.attached_instrumentation() == 1);
  Outcome outcome = program.finish();
  auto flags = of_type<cw_rec_flag>(drain_all(probes), CW_REC_FLAG);

  REQUIRE(flags.size() == 1);
  const cw_rec_flag& hit = flags[0];
  CHECK(hit.h.tid == outcome.setter);
  CHECK(hit.h.tid != outcome.poller);
  CHECK(hit.flag_index == 3);
  CHECK(hit.source == CW_FLAG_WATCH);
  CHECK(hit.access == CW_FLAG_WRITE);
  CHECK(hit.addr == outcome.ready);
  CHECK(hit.value == 1);
  // The trap leaves the thread after the store, whose bytes end the recorded ones.
  CHECK(hit.ip == program.at(t.store.vaddr + t.store.length));
  REQUIRE(hit.insn_len == CW_INSN_BEFORE);
  std::vector<uint8_t> tail(hit.insn + CW_INSN_BEFORE - t.store.length, hit.insn + CW_INSN_BEFORE);
  CHECK(tail == t.binary.bytes_at(t.store.vaddr, t.store.length));
}

TEST_CASE("a read/write watchpoint catches the poller's reads with the instruction before") {
  if (!watchpoints_fire()) return;
  const Targets& t = targets();
  Flagpoll program;
  Probes probes(options_recording({static_cast<uint32_t>(program.pid())}));
  probes.attach_watchpoint(
      {static_cast<uint32_t>(program.pid()), 0, program.at(t.ready), 4, false, 5});
  Outcome outcome = program.finish();
  auto flags = of_type<cw_rec_flag>(drain_all(probes), CW_REC_FLAG);

  std::vector<uint64_t> poller_values;
  size_t setter_hits = 0;
  std::vector<uint8_t> load_bytes = t.binary.bytes_at(t.load.vaddr, t.load.length);
  for (const auto& hit : flags) {
    CHECK(hit.flag_index == 5);
    CHECK(hit.access == CW_FLAG_UNKNOWN);
    CHECK(hit.addr == outcome.ready);
    if (hit.h.tid == outcome.poller) {
      CHECK(hit.ip == program.at(t.load.vaddr + t.load.length));
      REQUIRE(hit.insn_len == CW_INSN_BEFORE);
      CHECK(std::vector<uint8_t>(hit.insn + CW_INSN_BEFORE - t.load.length,
                                 hit.insn + CW_INSN_BEFORE) == load_bytes);
      poller_values.push_back(hit.value);
    } else {
      CHECK(hit.h.tid == outcome.setter);
      CHECK(hit.value == 1);
      ++setter_hits;
    }
  }
  check_polled_values(poller_values, outcome);
  CHECK(setter_hits == 1);
}

TEST_CASE("a thread's fifth watchpoint is refused, and bad watches say why") {
  const Targets& t = targets();
  Flagpoll program;
  Probes probes(options_recording({static_cast<uint32_t>(program.pid())}));
  auto pid = static_cast<uint32_t>(program.pid());
  for (uint32_t i = 0; i < 4; ++i)
    probes.attach_watchpoint({pid, pid, program.at(t.ready) + 8 * i, 4, true, i});
  CHECK(probes.attached_instrumentation() == 4);
  CHECK_THROWS_WITH_AS(probes.attach_watchpoint({pid, pid, program.at(t.ready) + 32, 4, true, 4}),
                       doctest::Contains("no free debug register"), ProbeError);
  CHECK(probes.attached_instrumentation() == 4);
  CHECK_THROWS_WITH_AS(probes.attach_watchpoint({pid, pid, program.at(t.ready) + 2, 4, true, 5}),
                       doctest::Contains("aligned"), ProbeError);
  CHECK_THROWS_WITH_AS(probes.attach_watchpoint({pid, pid, program.at(t.ready), 3, true, 5}),
                       doctest::Contains("1, 2, 4 or 8"), ProbeError);
  CHECK_THROWS_WITH_AS(probes.attach_watchpoint({pid, 1, program.at(t.ready) + 40, 4, true, 5}),
                       doctest::Contains("thread 1 is not in the process"), ProbeError);
  // The same address for another flag: a hit could not say which.
  CHECK_THROWS_WITH_AS(probes.attach_watchpoint({pid, pid, program.at(t.ready), 4, false, 9}),
                       doctest::Contains("already watched"), ProbeError);
  program.finish();
}

TEST_CASE("bad uprobe requests are refused with the place and the reason") {
  const Targets& t = targets();
  Flagpoll program;
  Probes probes(options_recording({static_cast<uint32_t>(program.pid())}));
  CHECK_THROWS_WITH_AS(probes.attach_function({"/nonexistent/binary", 0x1000, 1, true}),
                       doctest::Contains("/nonexistent/binary+0x1000"), ProbeError);
  FlagSiteProbe wide = site(t.load.vaddr, 0, FlagSiteKind::Read, t.ready);
  wide.size = 16;
  CHECK_THROWS_WITH_AS(probes.attach_flag_site(wide), doctest::Contains("1, 2, 4 or 8"),
                       ProbeError);
  FlagSiteProbe far = site(t.load.vaddr, 0, FlagSiteKind::Read, t.ready);
  far.delta = int64_t{1} << 40;
  CHECK_THROWS_WITH_AS(probes.attach_flag_site(far), doctest::Contains("2 GiB"), ProbeError);
  FlagSiteProbe unsized = site(t.store.vaddr, 0, FlagSiteKind::WriteArm, t.ready);
  CHECK_THROWS_WITH_AS(probes.attach_flag_site(unsized), doctest::Contains("length"), ProbeError);
  CHECK(probes.attached_instrumentation() == 0);
  program.finish();
}

TEST_CASE("a process that is not recorded makes no records from the probes it hits") {
  const Targets& t = targets();
  Flagpoll recorded, other;
  auto recorded_pid = static_cast<uint32_t>(recorded.pid());
  Probes probes(options_recording({recorded_pid}));
  probes.attach_function({kFlagpoll, t.binary.file_offset(t.poll_once), 0, true});
  probes.attach_flag_site(site(t.load.vaddr, 0, FlagSiteKind::Read, t.ready));
  Outcome other_outcome = other.finish();
  Outcome recorded_outcome = recorded.finish();
  auto records = drain_all(probes);
  auto calls = of_type<cw_rec_call>(records, CW_REC_CALL);
  auto flags = of_type<cw_rec_flag>(records, CW_REC_FLAG);
  // Both programs ran through the probes; only the recorded one's hits are in the buffer.
  CHECK(other_outcome.polls > 0);
  CHECK(calls.size() == 2 * static_cast<size_t>(recorded_outcome.polls + 1));
  CHECK(flags.size() == static_cast<size_t>(recorded_outcome.polls + 1));
  for (const auto& call : calls) CHECK(call.h.pid == recorded_pid);
  for (const auto& flag : flags) CHECK(flag.h.pid == recorded_pid);
}
