#include "recorder/dwarf_unwind.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "trace/elf_file.h"

namespace cw {

namespace {

// Where a file's code lands: the load bias of the PT_LOAD segment that holds file offset
// `pgoff` (the one mapped at `start`). ET_EXEC files are never moved (bias 0); libdwfl
// ignores the bias for them anyway. Returns false when the file is not ELF or has no such
// segment.
bool load_bias(const std::string& path, uint64_t start, uint64_t pgoff, uint64_t& bias) {
  ElfFile file(path);
  if (!file.elf()) return false;
  size_t count = 0;
  if (elf_getphdrnum(file.elf(), &count) != 0) return false;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(file.elf(), static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    if (pgoff < (ph.p_offset & ~uint64_t{0xfff}) || pgoff >= ph.p_offset + ph.p_filesz) continue;
    // File offset pgoff is at address p_vaddr + (pgoff - p_offset) in the file's own terms.
    bias = start - (ph.p_vaddr - ph.p_offset + pgoff);
    return true;
  }
  return false;
}

// Processes whose files stay open at once; the least recently used beyond are closed (their
// mappings kept, reopened when needed), so a long recording of many short-lived processes
// does not run out of file descriptors.
constexpr size_t kMaxOpen = 48;

// A process with no mapping known for an address is read from /proc at most this often
// (a forked child has its parent's mappings, of which perf reports no mmap).
constexpr uint64_t kProcRereadNs = 1'000'000'000;

uint64_t steady_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

}  // namespace

struct DwarfUnwinder::Process {
  struct Map {
    uint64_t start, end, pgoff;
    std::string path;
    bool reported = false;
  };
  Pid pid = 0;
  uint64_t last_used = 0;
  uint64_t proc_read_ns = 0;  // when /proc/PID/maps was last read (0: never)
  std::vector<Map> maps;
  Dwfl* dwfl = nullptr;
  bool attached = false;
  bool rebuild = false;                              // a mapping was replaced
  std::set<std::pair<std::string, uint64_t>> files;  // (path, bias) reported to dwfl

  // The stack being unwound, for the callbacks.
  Tid tid = 0;
  const uint64_t* regs = nullptr;
  std::span<const uint8_t> stack;

  ~Process() { close(); }
  void close() {
    if (dwfl) dwfl_end(dwfl);
    dwfl = nullptr;
    attached = false;
    files.clear();
    for (Map& m : maps) m.reported = false;
  }

  static pid_t next_thread(Dwfl*, void* arg, void** thread_arg) {
    auto* self = static_cast<Process*>(arg);
    if (*thread_arg) return 0;  // one thread: the one whose stack this is
    *thread_arg = self;
    return static_cast<pid_t>(self->tid);
  }
  static bool get_thread(Dwfl*, pid_t tid, void* arg, void** thread_arg) {
    auto* self = static_cast<Process*>(arg);
    *thread_arg = self;
    return static_cast<Tid>(tid) == self->tid;
  }
  // Only the copied stack is served: what the CFI asks for is saved registers and return
  // addresses there. A read beyond the copy ends the walk.
  static bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
    auto* self = static_cast<Process*>(arg);
    uint64_t sp = self->regs[kUnwindSp];
    if (addr < sp || addr - sp > self->stack.size() ||
        self->stack.size() - (addr - sp) < sizeof(Dwarf_Word))
      return false;
    std::memcpy(result, self->stack.data() + (addr - sp), sizeof(Dwarf_Word));
    return true;
  }
  static bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) {
    auto* self = static_cast<Process*>(thread_arg);
    Dwarf_Word words[kUnwindRegs];
    for (size_t i = 0; i < kUnwindRegs; ++i) words[i] = self->regs[i];
    return dwfl_thread_state_registers(thread, 0, kUnwindRegs, words);
  }
  static constexpr Dwfl_Thread_Callbacks kThreadCallbacks = {
      .next_thread = next_thread,
      .get_thread = get_thread,
      .memory_read = memory_read,
      .set_initial_registers = set_initial_registers,
      .detach = nullptr,
      .thread_detach = nullptr,
  };

  // Reports the mappings not yet reported; false when there is no usable module.
  bool prepare() {
    if (rebuild) {
      close();
      rebuild = false;
    }
    if (!dwfl) dwfl = dwfl_begin(&kCallbacks);
    if (!dwfl) return false;
    bool fresh = std::any_of(maps.begin(), maps.end(), [](const Map& m) { return !m.reported; });
    if (fresh) {
      dwfl_report_begin_add(dwfl);
      for (Map& m : maps) {
        if (m.reported) continue;
        m.reported = true;
        uint64_t bias = 0;
        if (!load_bias(m.path, m.start, m.pgoff, bias)) continue;
        // A file mapped twice at the same place (two executable segments) is one module.
        if (!files.insert({m.path, bias}).second) continue;
        dwfl_report_elf(dwfl, m.path.c_str(), m.path.c_str(), -1, bias, true);
      }
      dwfl_report_end(dwfl, nullptr, nullptr);
    }
    if (!attached && !files.empty())
      attached = dwfl_attach_state(dwfl, nullptr, static_cast<pid_t>(pid), &kThreadCallbacks, this);
    return attached;
  }
};

void DwarfUnwinder::close_least_used() {
  size_t open = 0;
  for (auto& [pid, p] : processes_) open += p->dwfl != nullptr;
  while (open > kMaxOpen) {
    Process* oldest = nullptr;
    for (auto& [pid, p] : processes_)
      if (p->dwfl && (!oldest || p->last_used < oldest->last_used)) oldest = p.get();
    oldest->close();
    --open;
  }
}

DwarfUnwinder::DwarfUnwinder() = default;
DwarfUnwinder::~DwarfUnwinder() = default;

DwarfUnwinder::Process& DwarfUnwinder::process(Pid pid) {
  auto& slot = processes_[pid];
  if (!slot) {
    slot = std::make_unique<Process>();
    slot->pid = pid;
  }
  return *slot;
}

void DwarfUnwinder::add_map(Pid pid, uint64_t start, uint64_t end, uint64_t pgoff,
                            const std::string& path) {
  if (path.empty() || path[0] != '/' || start >= end) return;
  Process& p = process(pid);
  for (auto& m : p.maps)
    if (m.start == start && m.end == end && m.pgoff == pgoff && m.path == path) return;
  auto overlaps = [&](const Process::Map& m) { return m.start < end && start < m.end; };
  if (std::any_of(p.maps.begin(), p.maps.end(), overlaps)) {
    // libdwfl cannot take a module back: start again from the mappings now in place.
    std::erase_if(p.maps, overlaps);
    p.rebuild = true;
  }
  p.maps.push_back({start, end, pgoff, path});
}

void DwarfUnwinder::read_proc_maps(Pid pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode;
    std::getline(fields >> std::ws, path);
    size_t dash = range.find('-');
    if (perms.size() < 3 || perms[2] != 'x' || dash == std::string::npos) continue;
    add_map(pid, std::stoull(range.substr(0, dash), nullptr, 16),
            std::stoull(range.substr(dash + 1), nullptr, 16), std::stoull(offset, nullptr, 16),
            path);
  }
}

void DwarfUnwinder::forget(Pid pid) {
  processes_.erase(pid);
}

std::vector<uint64_t> DwarfUnwinder::unwind(Pid pid, Tid tid, const uint64_t (&regs)[kUnwindRegs],
                                            std::span<const uint8_t> stack, size_t max_frames) {
  std::vector<uint64_t> ips;
  ++stats_.stacks;
  struct Timer {
    uint64_t& total;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~Timer() {
      total += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - start)
                                         .count());
    }
  } timer{stats_.ns};
  Process& p = process(pid);
  if (max_frames == 0) return ips;
  p.last_used = ++clock_;
  close_least_used();
  bool ready = p.prepare() && dwfl_addrmodule(p.dwfl, regs[kUnwindIp]);
  if (!ready && read_proc_ &&
      (p.proc_read_ns == 0 || steady_ns() - p.proc_read_ns > kProcRereadNs)) {
    p.proc_read_ns = steady_ns();
    read_proc_maps(pid);
    ready = p.prepare() && dwfl_addrmodule(p.dwfl, regs[kUnwindIp]);
  }
  if (!ready) {
    ++stats_.no_file;
    ips.push_back(regs[kUnwindIp]);
    ++stats_.frames;
    return ips;
  }
  p.tid = tid;
  p.regs = regs;
  p.stack = stack;
  struct Walk {
    std::vector<uint64_t>* ips;
    size_t max;
  } walk{&ips, max_frames};
  auto on_frame = [](Dwfl_Frame* frame, void* arg) -> int {
    auto* w = static_cast<Walk*>(arg);
    Dwarf_Addr pc = 0;
    if (!dwfl_frame_pc(frame, &pc, nullptr)) return DWARF_CB_ABORT;
    // Return addresses as a frame-pointer walk gives them: symbolisation looks up ip - 1
    // for outer frames itself (trace/symbolize.cc).
    w->ips->push_back(pc);
    return w->ips->size() >= w->max ? DWARF_CB_ABORT : DWARF_CB_OK;
  };
  // It ends with an error when the CFI or the copy runs out: the frames found stand.
  dwfl_getthread_frames(p.dwfl, static_cast<pid_t>(tid), on_frame, &walk);
  p.regs = nullptr;
  p.stack = {};
  if (ips.empty()) ips.push_back(regs[kUnwindIp]);
  stats_.frames += ips.size();
  return ips;
}

}  // namespace cw
