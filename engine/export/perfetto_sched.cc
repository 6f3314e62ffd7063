#include "engine/export/perfetto_sched.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "base/terminal_text.h"
#include "trace/names.h"

namespace cw::engine {
namespace {

// The kernel's sched_switch prev_state bits in the layout Perfetto assumes when the trace
// names no kernel version (4.4): the ones a switch_out's state letter stands for.
std::optional<int64_t> prev_state_bits(std::string_view state) {
  if (state.empty()) return std::nullopt;
  switch (state[0]) {
    case 'R': return 0;      // preempted: still runnable
    case 'S': return 0x1;    // interruptible sleep
    case 'D': return 0x2;    // uninterruptible sleep
    case 'T': return 0x4;    // stopped
    case 't': return 0x8;    // traced
    case 'X': return 0x10;   // dead
    case 'Z': return 0x20;   // zombie
    case 'I': return 0x402;  // idle: uninterruptible and not counted as load
    default: return std::nullopt;
  }
}

// The kernel's default priority (nice 0): the trace does not record priorities, and
// compact_sched needs a value in each row.
constexpr int32_t kNoPriority = 120;

struct CpuColumns {
  perfetto::protos::FtraceEventBundle::CompactSched sched;
  std::unordered_map<std::string, uint32_t> interned;
  uint64_t last_switch = 0, last_waking = 0;
  std::optional<Tid> current;  // the thread on the CPU by our events; 0: none recorded
  struct Pending {
    uint64_t ts;
    Tid tid;
    int64_t state;
  };
  std::optional<Pending> leaving;  // a switch_out not yet matched by a switch_in

  uint32_t intern(const std::string& s) {
    auto [it, fresh] = interned.emplace(s, static_cast<uint32_t>(sched.intern_table_size()));
    if (fresh) sched.add_intern_table(s);
    return it->second;
  }
  void add_switch(uint64_t ts, int64_t prev_state, Tid next, const std::string& comm) {
    sched.add_switch_timestamp(ts - last_switch);
    last_switch = ts;
    sched.add_switch_prev_state(prev_state);
    sched.add_switch_next_pid(static_cast<int32_t>(next));
    sched.add_switch_next_prio(kNoPriority);
    sched.add_switch_next_comm_index(intern(comm));
    current = next;
  }
  void add_waking(uint64_t ts, Tid target, int32_t target_cpu, const std::string& comm) {
    sched.add_waking_timestamp(ts - last_waking);
    last_waking = ts;
    sched.add_waking_pid(static_cast<int32_t>(target));
    sched.add_waking_target_cpu(target_cpu);
    sched.add_waking_prio(kNoPriority);
    sched.add_waking_comm_index(intern(comm));
    sched.add_waking_common_flags(0);
  }
  // A switch_out nobody on this CPU switched in after: the CPU ran nothing we recorded.
  void flush_leaving() {
    if (!leaving) return;
    add_switch(leaving->ts, leaving->state, 0, "");
    leaving.reset();
  }
};

}  // namespace

void add_compact_sched(const Trace& trace, uint32_t sequence, perfetto::protos::Trace& out,
                       std::vector<std::string>* notes) {
  const KindId out_kind = trace.schema.find("switch_out");
  const KindId in_kind = trace.schema.find("switch_in");
  const KindId wake_kinds[] = {trace.schema.find("wakeup"), trace.schema.find("wakeup_new")};
  const int state_field = out_kind == kNoKind ? -1 : trace.schema.field_index(out_kind, "state");
  auto target_field = [&](KindId k) { return trace.schema.field_index(k, "target"); };

  // Where each thread next got a CPU: a wake-up's target CPU.
  std::unordered_map<Tid, std::vector<std::pair<uint64_t, uint16_t>>> ins;
  for (const Event& e : trace.events)
    if (e.kind == in_kind) ins[e.tid].emplace_back(e.ts, e.cpu);
  auto next_cpu = [&](Tid tid, uint64_t ts) -> int32_t {
    auto it = ins.find(tid);
    if (it == ins.end()) return -1;
    auto p =
        std::lower_bound(it->second.begin(), it->second.end(), std::make_pair(ts, uint16_t{0}));
    return p == it->second.end() ? -1 : p->second;
  };
  auto comm = [&](Tid tid) { return std::string(thread_comm(trace, tid)); };

  std::map<uint16_t, CpuColumns> cpus;
  uint64_t conflicts = 0, unknown_states = 0;
  std::set<std::string> unknown_letters;
  for (const Event& e : trace.events) {
    const bool is_wake = e.kind == wake_kinds[0] || e.kind == wake_kinds[1];
    if (e.kind != out_kind && e.kind != in_kind && !is_wake) continue;
    CpuColumns& c = cpus[e.cpu];
    if (is_wake) {
      const Tid target = static_cast<Tid>(trace.value(e, target_field(e.kind)));
      c.add_waking(e.ts, target, next_cpu(target, e.ts), comm(target));
    } else if (e.kind == out_kind) {
      c.flush_leaving();
      if (c.current && *c.current != e.tid && *c.current != 0) ++conflicts;
      // The first we see of this CPU: its thread was on it until now. Perfetto learns the
      // CPU's current thread from that first switch and draws nothing for it.
      if (!c.current || *c.current != e.tid) c.add_switch(e.ts, 0, e.tid, comm(e.tid));
      std::string_view state =
          state_field < 0 ? std::string_view() : trace.strings.get(trace.value(e, state_field));
      std::optional<int64_t> bits = prev_state_bits(state);
      if (!bits) {
        ++unknown_states;
        unknown_letters.emplace(state);
      }
      c.leaving = CpuColumns::Pending{e.ts, e.tid, bits.value_or(0x1)};
    } else {  // switch_in
      if (c.leaving && c.leaving->ts == e.ts) {
        c.add_switch(e.ts, c.leaving->state, e.tid, comm(e.tid));
        c.leaving.reset();
        continue;
      }
      c.flush_leaving();
      if (c.current && *c.current != 0) ++conflicts;
      c.add_switch(e.ts, 0, e.tid, comm(e.tid));
    }
  }
  for (auto& [cpu, c] : cpus) {
    c.flush_leaving();
    auto* packet = out.add_packet();
    packet->set_trusted_packet_sequence_id(sequence);
    auto* bundle = packet->mutable_ftrace_events();
    bundle->set_cpu(cpu);
    *bundle->mutable_compact_sched() = std::move(c.sched);
  }
  if (notes && conflicts > 0)
    notes->push_back(fmt::format(
        "{} context switch{} found another recorded thread still on the CPU: the trace's "
        "CPU numbers are missing (a text trace without cpu=) or switches were lost, so "
        "Perfetto's CPU tracks and thread states are wrong there",
        conflicts, conflicts == 1 ? "" : "es"));
  if (notes && unknown_states > 0) {
    std::string letters;
    for (const std::string& l : unknown_letters)
      letters += fmt::format("{}'{}'", letters.empty() ? "" : ", ", terminal_text(l));
    notes->push_back(
        fmt::format("{} switch_out event{} had a task state with no kernel code ({}); written as S "
                    "(sleeping)",
                    unknown_states, unknown_states == 1 ? "" : "s", letters));
  }
}

}  // namespace cw::engine
