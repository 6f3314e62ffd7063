#include "engine/diagnosis/cpu_contention.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace cw::engine {

bool starved_of_cpu(const SegmentProfile& p) {
  return p.runnable_ns > 0 && p.runnable_ns >= 3 * p.on_cpu_ns;
}

CpuContention cpu_contention(const Trace& trace, const ThreadEvents& events, Tid tid,
                             uint64_t start_ns, uint64_t end_ns) {
  CpuContention c;
  const KindId switch_out = trace.schema.find("switch_out");
  const KindId switch_in = trace.schema.find("switch_in");
  if (switch_out == kNoKind || switch_in == kNoKind || end_ns <= start_ns) return c;
  const int state = trace.schema.field_index(switch_out, "state");
  if (state < 0) return c;
  auto preempted = [&](const Event& e) {
    std::string_view s = trace.strings.get(static_cast<StrId>(trace.value(e, state)));
    return !s.empty() && s[0] == 'R';
  };
  std::unordered_map<Tid, CpuTaker> by_tid;
  // Charges [from, to) on `cpu` to whoever switched in there last, scanning the events
  // in between (all of them: the trace has no per-CPU index, and the waits are disjoint).
  auto charge = [&](uint32_t out_event, uint64_t from, uint64_t to, uint16_t cpu) {
    Tid running = 0;
    uint32_t began = kNoIndex;
    uint64_t since = from;
    // The thread that took the CPU may be recorded as switched in just before the switch
    // out, at the same time.
    for (uint32_t i = out_event; i-- > 0 && trace.events[i].ts == trace.events[out_event].ts;)
      if (trace.events[i].cpu == cpu && trace.events[i].kind == switch_in &&
          trace.events[i].tid != tid) {
        running = trace.events[i].tid;
        began = i;
        break;
      }
    auto close = [&](uint64_t now) {
      if (running != 0 && running != tid && now > since) {
        CpuTaker& t = by_tid[running];
        t.tid = running;
        t.ran_ns += now - since;
        c.taken_ns += now - since;
        if (now - since > t.longest_run_ns) {
          t.longest_run_ns = now - since;
          t.longest_run = began;
        }
      }
      since = now;
    };
    for (uint32_t i = out_event + 1; i < trace.events.size(); ++i) {
      const Event& e = trace.events[i];
      if (e.ts >= to) break;
      if (e.cpu != cpu) continue;
      if (e.kind == switch_in) {
        close(std::max(e.ts, from));
        running = e.tid;
        began = i;
      } else if (e.kind == switch_out && e.tid == running) {
        close(std::max(e.ts, from));
        running = 0;
      }
    }
    close(to);
  };
  const EventList switches = events.switches_of(tid);
  for (size_t k = 0; k < switches.size(); ++k) {
    const Event& out = trace.events[switches[k]];
    if (out.kind != switch_out || out.ts >= end_ns || !preempted(out)) continue;
    // It waits until its next switch_in (or the range's end).
    uint64_t until = end_ns;
    if (k + 1 < switches.size() && trace.events[switches[k + 1]].kind == switch_in)
      until = std::min(until, trace.events[switches[k + 1]].ts);
    const uint64_t from = std::max(out.ts, start_ns);
    if (until <= from) continue;
    c.runnable_ns += until - from;
    charge(switches[k], from, until, out.cpu);
  }
  for (auto& [t, taker] : by_tid) c.takers.push_back(taker);
  std::sort(c.takers.begin(), c.takers.end(), [](const CpuTaker& a, const CpuTaker& b) {
    return a.ran_ns != b.ran_ns ? a.ran_ns > b.ran_ns : a.tid < b.tid;
  });
  return c;
}

}  // namespace cw::engine
