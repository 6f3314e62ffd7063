// Looks up the JIT symbols of a trace (Trace::jit_symbols, copied from the processes'
// perf maps by the recorder): which JIT-compiled function an address of a process held
// when a stack was taken.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trace/trace.h"

namespace cw {

class JitSymbolIndex {
 public:
  // Indexes `trace`'s JIT symbols; the trace must outlive the index and keep them as they are.
  explicit JitSymbolIndex(const Trace& trace);

  bool empty() const { return by_pid_.empty(); }

  // The symbol of process `pid` covering `ip` in a stack taken at `ts`, or null.
  //
  // A JIT may reuse the memory of code it freed, so several symbols can cover one address;
  // a perf map has no times, only its order, and the recorder stamps each line with when it
  // read it (the line was written then or before). The one chosen is the last covering `ip`
  // among those the first read at or after `ts` had seen (code runs after its line is
  // written, so the line is in that read); when there is none (a runtime that writes its map
  // late, say at exit), the first covering `ip` read after that.
  const JitSymbol* find(Pid pid, uint64_t ts, uint64_t ip) const;

 private:
  struct Process {
    std::vector<uint32_t> by_start;  // indexes into the trace's symbols, by start address
    std::vector<uint64_t> max_end;   // the highest end among by_start[0..i]
    std::vector<uint64_t> reads;     // the distinct read times, ascending
  };
  const std::vector<JitSymbol>& symbols_;
  std::unordered_map<Pid, Process> by_pid_;
};

}  // namespace cw
