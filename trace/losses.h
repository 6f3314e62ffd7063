// What a recording missed, every kind in one place, for `graph`, `debug` and their
// --json (a recorder says what it missed): the kernel ring buffer's
// overflows (Trace::lost, per CPU) and the others (Trace::losses).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace cw {

inline const char* plural(uint64_t n, const char* one, const char* many) {
  return n == 1 ? one : many;
}

struct LossLine {
  std::string key;  // the --json key: "kernel_buffer", "hook_log", ...
  uint64_t count = 0;
  std::string text;  // for people: "5 events in the kernel buffer (cpu 1: 5)"
};

// Every kind this causeway knows, zero or not, kernel buffer first; then kinds from a
// newer recorder ("kind_N"), when the trace has them.
inline std::vector<LossLine> loss_lines(const Trace& trace) {
  std::vector<LossLine> out;
  std::map<uint16_t, uint64_t> by_cpu;
  for (const LostRecord& l : trace.lost) by_cpu[l.cpu] += l.count;
  std::string cpus;
  for (auto [cpu, n] : by_cpu)
    cpus += fmt::format("{}cpu {}: {}", cpus.empty() ? "" : ", ", cpu, n);
  const uint64_t kernel = trace.lost_events();
  out.push_back(
      {"kernel_buffer", kernel,
       fmt::format("{} {} in the kernel buffer{}", kernel, plural(kernel, "event", "events"),
                   cpus.empty() ? "" : " (" + cpus + ")")});
  for (LossKind k : kLossKinds) {
    const uint64_t n = trace.losses_of(k);
    std::string text;
    switch (k) {
      case LossKind::HookLog:
        text = fmt::format("{} {} in the hook log", n, plural(n, "event", "events"));
        break;
      case LossKind::SwitchUnreported:
        text = fmt::format("{} context {} the kernel did not deliver", n,
                           plural(n, "switch", "switches"));
        break;
      case LossKind::Maps: text = fmt::format("{} memory {}", n, plural(n, "map", "maps")); break;
      case LossKind::WatchpointSilent:
        text = fmt::format("{} {} that never fired", n, plural(n, "watchpoint", "watchpoints"));
        break;
    }
    out.push_back({std::string(loss_kind_name(k)), n, std::move(text)});
  }
  std::map<uint32_t, uint64_t> unknown;
  for (const LossRecord& l : trace.losses)
    if (loss_kind_name(l.kind).empty()) unknown[static_cast<uint32_t>(l.kind)] += l.count;
  for (auto [kind, n] : unknown)
    out.push_back({fmt::format("kind_{}", kind), n,
                   fmt::format("{} of a kind of loss this causeway does not know ({})", n, kind)});
  return out;
}

// "recording lost: nothing", or "recording lost: 5 events in the kernel buffer (cpu 1:
// 5), 3 events in the hook log": the kinds with a count, in loss_lines' order; one line.
inline std::string losses_text(const Trace& trace) {
  std::string listed;
  for (const LossLine& l : loss_lines(trace))
    if (l.count > 0) listed += (listed.empty() ? "" : ", ") + l.text;
  return "recording lost: " + (listed.empty() ? std::string("nothing") : listed) + "\n";
}

}  // namespace cw
