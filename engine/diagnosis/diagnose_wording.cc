// The diagnosis in sentences: who a segment is, what it did, what a call, a stack and an
// edge were, for root causes, notes and the options of questions.
#include <fmt/format.h>

#include <algorithm>

#include "base/terminal_text.h"
#include "engine/diagnosis/diagnoser.h"
#include "trace/names.h"

namespace cw::engine::diagnose_detail {

// For sentences (what, questions): a name's control bytes shown as \xNN.
std::string Diagnoser::thread_name(Tid tid) const {
  return terminal_text(thread_comm(trace_, tid, "?"));
}

std::string Diagnoser::process_name(Pid pid) const {
  return terminal_text(process_comm(trace_, pid, "?"));
}

std::string Diagnoser::who(uint32_t s) const {
  const Segment& seg = g_.segments[s];
  std::string t = thread_name(seg.tid), p = process_name(seg.pid);
  if (t == p) return fmt::format("{} {}", t, seg.tid);
  return fmt::format("{} {} ({} {})", t, seg.tid, p, seg.pid);
}

// A field of an event, by name, as text; "" when the kind has no such field.
std::string Diagnoser::field_text(uint32_t event, std::string_view name) const {
  const Event& e = trace_.events[event];
  int f = trace_.schema.field_index(e.kind, name);
  if (f < 0) return {};
  if (trace_.schema.kind(e.kind).fields[f].type == FieldType::Str)
    return std::string(trace_.strings.get(static_cast<StrId>(trace_.value(e, f))));
  return std::to_string(trace_.int_value(e, f));
}

std::string Diagnoser::call_text(uint32_t call) const {
  if (call == kNoIndex) return "outside a recorded system call";
  std::string name = field_text(call, "name");
  std::string fd = field_text(call, "fd");
  if (!fd.empty() && fd != "-1") return fmt::format("in {} (fd {})", name, fd);
  return fmt::format("in {}", name);
}

std::string Diagnoser::syscall_summary(const SegmentProfile& p, size_t n) const {
  std::string out;
  for (size_t k = 0; k < p.by_name.size() && k < n; ++k)
    out += fmt::format("{}{} ×{}", out.empty() ? "" : ", ", trace_.strings.get(p.by_name[k].name),
                       p.by_name[k].count);
  if (p.by_name.size() > n) out += ", …";
  return out.empty() ? "no system call" : out;
}

std::string Diagnoser::behaviour(HangKind kind, const SegmentProfile& p) const {
  switch (kind) {
    case HangKind::LongWait:
      if (waits_in_turns(p))
        return fmt::format("blocked {} in {} waits ({}{}), the longest {} {}", ms(p.blocked_ns),
                           p.blocks, syscall_summary(p),
                           2 * p.uninterruptible_ns >= p.blocked_ns
                               ? "; uninterruptible: a device or the kernel"
                               : "",
                           ms(p.longest_block_ns), call_text(p.longest_block_call));
      return fmt::format("blocked {} {}", ms(p.longest_block_ns), call_text(p.longest_block_call));
    case HangKind::LongRunning:
      return fmt::format("ran {} on a CPU ({} runnable) with {}", ms(p.on_cpu_ns),
                         ms(p.runnable_ns), syscall_summary(p));
    case HangKind::RepeatedYield:
      return fmt::format("looped for {}: {}", ms(p.end_ns - p.start_ns), syscall_summary(p));
  }
  return {};
}

std::string Diagnoser::segment_line(uint32_t s) const {
  const Segment& seg = g_.segments[s];
  return fmt::format("{} at {:.6f} s for {}", who(s), secs(seg.start_ns),
                     ms(seg.end_ns - seg.start_ns));
}

std::string Diagnoser::segment_evidence(uint32_t s) const {
  SegmentProfile p = profile_segment(trace_, events_, g_, s);
  std::string out =
      fmt::format("{}: on CPU {}, runnable {}, blocked {}; {}", segment_line(s), ms(p.on_cpu_ns),
                  ms(p.runnable_ns), ms(p.blocked_ns), syscall_summary(p, 6));
  if (p.longest_block_ns > 0)
    out += fmt::format("; longest block {} {}", ms(p.longest_block_ns),
                       call_text(p.longest_block_call));
  if (StackId st = stack_of_segment(s, p)) out += "; stack: " + stack_text(st);
  return out;
}

std::string Diagnoser::stack_text(StackId id) const {
  // The innermost user frames: a one-line summary has no room for the kernel's (the
  // probe and the scheduler come first there); the full report lists them.
  std::string out;
  size_t shown = 0;
  for (const Frame& f : frames_of(trace_.stacks[id])) {
    if (f.kernel) continue;
    out += (shown ? " ← " : "") + frame_name(trace_.strings, f);
    if (++shown == 4) break;
  }
  return out;
}

// The most telling stack of a segment: its longest block's, else its last one.
StackId Diagnoser::stack_of_segment(uint32_t s, const SegmentProfile& p) const {
  if (p.longest_block_call != kNoIndex && trace_.events[p.longest_block_call].stack)
    return trace_.events[p.longest_block_call].stack;
  const Segment& seg = g_.segments[s];
  const auto& list = events_.of(seg.tid);
  auto lo = std::lower_bound(list.begin(), list.end(), seg.first);
  auto hi = std::upper_bound(lo, list.end(), seg.last);
  for (auto it = hi; it != lo; --it)
    if (StackId st = trace_.events[*(it - 1)].stack) return st;
  return 0;
}

std::string Diagnoser::edge_label(uint32_t ei) const {
  const Edge& e = g_.edges[ei];
  return fmt::format("{} → {}: {} ({}) at {:.6f} s", who(e.from), who(e.to), g_.kind_name(e),
                     strength_name(e.strength), secs(trace_.events[e.to_event].ts));
}

}  // namespace cw::engine::diagnose_detail
