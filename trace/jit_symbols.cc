#include "trace/jit_symbols.h"

#include <algorithm>

namespace cw {

namespace {

// Symbols looked at per lookup, at most: a perf map whose ranges all overlap (written by a
// hostile program, or a JIT reusing one address very often) must not make every lookup
// scan it all.
constexpr int kMaxOverlaps = 256;

}  // namespace

JitSymbolIndex::JitSymbolIndex(const Trace& trace) : symbols_(trace.jit_symbols) {
  for (uint32_t i = 0; i < symbols_.size(); ++i) {
    Process& p = by_pid_[symbols_[i].pid];
    p.by_start.push_back(i);
    p.reads.push_back(symbols_[i].ts);
  }
  for (auto& [pid, p] : by_pid_) {
    std::stable_sort(p.by_start.begin(), p.by_start.end(),
                     [&](uint32_t a, uint32_t b) { return symbols_[a].start < symbols_[b].start; });
    p.max_end.reserve(p.by_start.size());
    uint64_t highest = 0;
    for (uint32_t i : p.by_start) {
      const JitSymbol& s = symbols_[i];
      highest = std::max(highest, s.start + s.size < s.start ? UINT64_MAX : s.start + s.size);
      p.max_end.push_back(highest);
    }
    std::sort(p.reads.begin(), p.reads.end());
    p.reads.erase(std::unique(p.reads.begin(), p.reads.end()), p.reads.end());
  }
}

const JitSymbol* JitSymbolIndex::find(Pid pid, uint64_t ts, uint64_t ip) const {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return nullptr;
  const Process& p = it->second;
  // The first read at or after the stack: what it had seen was written before it.
  auto read = std::lower_bound(p.reads.begin(), p.reads.end(), ts);
  const uint64_t seen_by = read == p.reads.end() ? UINT64_MAX : *read;
  // (read time, order read): later is newer.
  auto newer = [&](uint32_t a, uint32_t b) {
    return symbols_[a].ts != symbols_[b].ts ? symbols_[a].ts > symbols_[b].ts : a > b;
  };
  constexpr uint32_t kNone = UINT32_MAX;
  uint32_t seen = kNone, later = kNone;
  auto at = std::upper_bound(p.by_start.begin(), p.by_start.end(), ip,
                             [&](uint64_t v, uint32_t i) { return v < symbols_[i].start; });
  for (int steps = 0; at != p.by_start.begin() && steps < kMaxOverlaps; ++steps) {
    --at;
    if (p.max_end[static_cast<size_t>(at - p.by_start.begin())] <= ip) break;
    const JitSymbol& s = symbols_[*at];
    if (ip - s.start >= s.size) continue;
    if (s.ts <= seen_by) {
      if (seen == kNone || newer(*at, seen)) seen = *at;
    } else if (later == kNone || newer(later, *at)) {
      later = *at;
    }
  }
  const uint32_t chosen = seen != kNone ? seen : later;
  return chosen == kNone ? nullptr : &symbols_[chosen];
}

}  // namespace cw
