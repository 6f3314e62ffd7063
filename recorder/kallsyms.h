// The kernel's function symbols from /proc/kallsyms, to name kernel stack frames
// (CW_REC_KSTACK) while recording: kernel addresses are in no process's maps, and the
// names are stored in the trace so it reads the same on another machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cw {

class KernelSymbols {
 public:
  // Reads `path` (a /proc/kallsyms-shaped file). Only text symbols (t, T, w, W) are kept.
  explicit KernelSymbols(const std::string& path = "/proc/kallsyms");
  // The function holding `addr`, "" when unknown (below the first symbol, or the
  // addresses were hidden).
  std::string_view name(uint64_t addr) const;
  // Whether `addr` is in the recorder's own probe: a BPF program (kallsyms module [bpf])
  // or the kernel's code that calls it from a tracepoint (bpf_trace_run*, __bpf_trace_*,
  // __traceiter_*). A stack taken by the probe starts with these; they are not where the
  // thread waits.
  bool is_probe(uint64_t addr) const;
  // No symbol had an address: kptr_restrict (or no CAP_SYSLOG) hides them, so kernel
  // frames can only keep their addresses.
  bool restricted() const { return restricted_; }
  bool readable() const { return readable_; }
  size_t size() const { return symbols_.size(); }

 private:
  struct Symbol {
    uint64_t addr;
    uint32_t name_at, name_size;
    bool probe;
  };
  const Symbol* find(uint64_t addr) const;
  std::vector<Symbol> symbols_;  // by address
  std::string names_;
  bool restricted_ = false;
  bool readable_ = false;
};

}  // namespace cw
