// Unwinds a user stack from a copy of its top and the registers, with the call frame
// information (.eh_frame, .debug_frame) of the files the process maps: what `causeway
// record --call-graph dwarf` records instead of a frame-pointer walk, as
// `perf record --call-graph dwarf` does. elfutils' libdwfl does the unwinding; this class
// tells it which files are mapped where (from the recorder's memory-map capture), where the
// unwinding starts (the registers) and what the stack held (the copy).
//
// It runs in the recorder while the mapped files are still on disk: per process, the
// files are opened and their CFI read once, then each stack costs the CFI lookups of its
// frames (docs/latency.md, "Where the time goes").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/trace.h"

namespace cw {

// x86-64 registers in DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip.
constexpr size_t kUnwindRegs = 17;
constexpr size_t kUnwindSp = 7;
constexpr size_t kUnwindIp = 16;

struct UnwindStats {
  uint64_t stacks = 0;   // unwound
  uint64_t frames = 0;   // frames found in them
  uint64_t no_file = 0;  // stacks whose first address is in no mapped file known here
  uint64_t ns = 0;       // spent in unwind(): opening files, reading CFI, walking
};

class DwarfUnwinder {
 public:
  DwarfUnwinder();
  ~DwarfUnwinder();
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // An executable mapping of process `pid`: [start, end) maps `path` from file offset
  // `pgoff`. A mapping over an older one (an exec, a library unmapped and another mapped
  // there) replaces it. Paths that are not files ([vdso], anonymous code) are ignored: a
  // stack stops there.
  void add_map(Pid pid, uint64_t start, uint64_t end, uint64_t pgoff, const std::string& path);
  // The process exited: its files are closed.
  void forget(Pid pid);
  // When a stack's ip is in no mapping known for its process, read the process's maps
  // from /proc (at most once a second per process): a forked child runs in its parent's
  // mappings, which no mmap record reports. On by default; tests turn it off.
  void set_read_proc(bool on) { read_proc_ = on; }

  // The return addresses of thread `tid`'s stack, innermost first (the first is regs' ip),
  // at most `max_frames`. `stack` holds the memory from regs[kUnwindSp] up. The walk stops
  // where the CFI or the copy ends; a stack in no known file is the ip alone.
  std::vector<uint64_t> unwind(Pid pid, Tid tid, const uint64_t (&regs)[kUnwindRegs],
                               std::span<const uint8_t> stack, size_t max_frames);

  const UnwindStats& stats() const { return stats_; }

 private:
  struct Process;
  Process& process(Pid pid);
  void read_proc_maps(Pid pid);
  void close_least_used();
  std::unordered_map<Pid, std::unique_ptr<Process>> processes_;
  uint64_t clock_ = 0;  // unwind() calls, for least-recently-used
  bool read_proc_ = true;
  UnwindStats stats_;
};

}  // namespace cw
