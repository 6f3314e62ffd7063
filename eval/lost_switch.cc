#include "eval/lost_switch.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace cw::eval {

namespace {

struct Kinds {
  KindId switch_out, switch_in, wakeup, wakeup_new, signal_send;
  int state;
  std::vector<bool> on_cpu;    // written by the thread running on the event's CPU
  std::vector<bool> recorded;  // ... and only by recorded threads
  explicit Kinds(const Schema& schema)
      : switch_out(schema.find("switch_out")),
        switch_in(schema.find("switch_in")),
        wakeup(schema.find("wakeup")),
        wakeup_new(schema.find("wakeup_new")),
        signal_send(schema.find("signal_send")),
        state(switch_out == kNoKind ? -1 : schema.field_index(switch_out, "state")) {
    // The decoder's list (record_decoder.cc, decode()): not a syscall entry (sent late),
    // nor what the recorder writes for another thread (thread_start, lock_*, marker).
    const std::string_view any[] = {"wakeup", "wakeup_new", "signal_send"};
    const std::string_view own[] = {
        "fork",       "exec",      "exit",          "syscall_exit", "send",
        "recv",       "ready",     "timer_arm",     "timer_fire",   "timer_cancel",
        "irq_enter",  "irq_exit",  "softirq_enter", "softirq_exit", "signal_deliver",
        "call_enter", "call_exit", "flag_write",    "flag_read",    "sample"};
    on_cpu.assign(schema.size(), false);
    recorded.assign(schema.size(), false);
    for (std::string_view n : any)
      if (KindId k = schema.find(n); k != kNoKind) on_cpu[k] = true;
    for (std::string_view n : own)
      if (KindId k = schema.find(n); k != kNoKind) on_cpu[k] = recorded[k] = true;
  }
  bool is_switch(KindId k) const { return k != kNoKind && (k == switch_out || k == switch_in); }
  // A wake-up or signal an interrupt raised on an idle CPU is its timer owner's (its
  // `cause`), not the running thread's: the decoder takes no evidence from it.
  bool owners(const Trace& trace, const Event& e) const {
    if (e.kind != wakeup && e.kind != wakeup_new && e.kind != signal_send) return false;
    const int cause = trace.schema.field_index(e.kind, "cause");
    return cause >= 0 && trace.value(e, cause) == e.tid;
  }
};

}  // namespace

std::vector<SwitchRecord> switch_records(const Trace& trace, const std::vector<Tid>& threads) {
  const Kinds k(trace.schema);
  const std::unordered_set<Tid> wanted(threads.begin(), threads.end());
  std::vector<SwitchRecord> out;
  for (uint32_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    if (!k.is_switch(e.kind)) continue;
    // The two events of one switch are adjacent: switch_out, then switch_in.
    if (!out.empty()) {
      const Event& last = trace.events[out.back().back()];
      if (last.ts == e.ts && last.cpu == e.cpu && last.kind == k.switch_out &&
          e.kind == k.switch_in && out.back().size() == 1) {
        out.back().push_back(i);
        continue;
      }
    }
    out.push_back({i});
  }
  if (wanted.empty()) return out;
  std::erase_if(out, [&](const SwitchRecord& r) {
    return std::none_of(r.begin(), r.end(),
                        [&](uint32_t i) { return wanted.count(trace.events[i].tid) != 0; });
  });
  return out;
}

Trace lose_switch(const Trace& trace, const SwitchRecord& lost) {
  const Kinds k(trace.schema);
  Trace out = trace;
  if (lost.empty() || k.state < 0) return out;
  const Event& first = trace.events[lost.front()];
  const uint64_t ts = first.ts;
  const uint16_t cpu = first.cpu;
  Tid prev = 0, next = 0;
  for (uint32_t i : lost) {
    if (trace.events[i].kind == k.switch_out) prev = trace.events[i].tid;
    if (trace.events[i].kind == k.switch_in) next = trace.events[i].tid;
  }
  std::unordered_set<Tid> recorded;
  for (const Event& e : trace.events)
    if (e.kind < k.recorded.size() && k.recorded[e.kind]) recorded.insert(e.tid);

  // Where the decoder notices the loss, and what it writes there.
  uint32_t at = static_cast<uint32_t>(trace.events.size());
  bool stale_out = false, put_in = false;
  for (uint32_t i = lost.back() + 1; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    if (e.cpu != cpu || e.ts < ts) continue;
    if (k.is_switch(e.kind)) {
      // The CPU's next switch record: its prev is not `prev` (a prev of pid 0 has no event).
      stale_out = prev != 0 && !(e.tid == prev && e.kind == k.switch_out);
      at = i;
      break;
    }
    if (e.kind >= k.on_cpu.size() || !k.on_cpu[e.kind] || k.owners(trace, e)) continue;
    stale_out = prev != 0 && e.tid != prev;
    put_in = next != 0 && e.tid == next && recorded.count(next) != 0;
    at = i;
    break;
  }
  std::vector<Event> inserted;
  const uint64_t when = at < trace.events.size() ? trace.events[at].ts : ts;
  if (stale_out) {
    out.add_event(when, prev, k.switch_out, cpu);
    out.value_ref(out.events.back(), k.state) = out.strings.intern("?");
    inserted.push_back(out.events.back());
    out.events.pop_back();
  }
  if (put_in) {
    out.add_event(when, next, k.switch_in, cpu);
    inserted.push_back(out.events.back());
    out.events.pop_back();
  }
  out.losses.push_back({LossKind::SwitchUnreported, 1, when});
  std::vector<Event> events;
  events.reserve(trace.events.size() + inserted.size());
  for (uint32_t i = 0; i < out.events.size(); ++i) {
    if (i == at) events.insert(events.end(), inserted.begin(), inserted.end());
    if (std::find(lost.begin(), lost.end(), i) != lost.end()) continue;
    events.push_back(out.events[i]);
  }
  if (at >= out.events.size()) events.insert(events.end(), inserted.begin(), inserted.end());
  out.events = std::move(events);
  return out;
}

}  // namespace cw::eval
