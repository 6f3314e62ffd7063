// What ended a wait: the edge from another thread that the report names, or the thread's
// own timer (a timeout it set, a timer it armed), which no other thread is behind.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "engine/diagnosis/diagnoser.h"

namespace cw::engine::diagnose_detail {

// The edge that ended `s`'s longest wait (profiled as `p`), when the graph knows: a timer, a
// message, a flag … The cheapest incoming edge, other than a cut's, that landed in the wait's last
// sleep; kNoIndex when none did. A wait its own timer ended was ended by that, not by what others
// sent it afterwards.
uint32_t Diagnoser::wait_ended_by(uint32_t s, const SegmentProfile& p) const {
  const bool own_timer = wake_edge(trace_, events_, g_, s, p) == kNoIndex && own_timer_ended(s, p);
  for (uint32_t ei : incoming_by_source(g_, s, beam_.costs)) {
    const Edge& e = g_.edges[ei];
    if (e.rule.kind == RuleKind::Split || e.rule.kind == RuleKind::Batch) continue;
    if (own_timer && g_.segments[e.from].tid != g_.segments[s].tid) continue;
    if (trace_.events[e.to_event].ts < last_sleep_start(p)) continue;
    if (sleeps_for_time(trace_, p.longest_block_call) && p.longest_block_exit != kNoIndex &&
        e.to_event > p.longest_block_exit)
      continue;  // bytes read after a sleep did not end it
    return ei;
  }
  return kNoIndex;
}

// What an edge into a wait says about it. A call still open when the recording ended
// was not ended by anything: its edge says who it is still waiting for (a lock's holder,
// the other end of a pipe, as the packs' rules found them at the end).
std::string Diagnoser::wait_edge_text(const Edge& e, const SegmentProfile& p) const {
  const bool open = p.longest_block_call != kNoIndex && p.longest_block_exit == kNoIndex;
  return fmt::format("; {} a {} edge ({}) from {} at {:.6f} s",
                     open ? "still waiting when the recording ended, for" : "ended by",
                     g_.kind_name(e), strength_name(e.strength), who(e.from),
                     secs(trace_.events[e.from_event].ts));
}

// How the hang's longest block ended, in words.
std::string Diagnoser::hang_end_reason() const {
  const SegmentProfile& p = d_.hang.profile;
  if (p.longest_block_exit == kNoIndex) return "it had not ended when the trace stopped";
  std::string ret = field_text(p.longest_block_exit, "ret");
  if (ret == std::to_string(kUnknownReturn))
    return fmt::format("it ended after {} (its return value was not recorded)",
                       ms(p.longest_block_ns));
  if (ret == std::to_string(-ETIMEDOUT))
    return fmt::format("it timed out after {}", ms(p.longest_block_ns));
  return fmt::format("it returned {} after {}", ret.empty() ? "?" : ret, ms(p.longest_block_ns));
}

// Whether `seg`'s longest block was ended by a timer its own thread armed: the wake-up
// that ended it (the last wake-up of its thread recorded before it ran again) names the
// timer's owner in its `cause`, or a strong edge from the thread itself (a pack's link
// from the timer's arming to its firing) lands in the wait or in the call that returned
// from it. The second is needed because a timer that expires on an idle CPU wakes its
// thread from the idle task's interrupt, of which the recorder may see no wake-up.
bool Diagnoser::own_timer_ended(uint32_t seg, const SegmentProfile& sp) const {
  if (sp.longest_block_ns == 0) return false;
  const Tid tid = g_.segments[seg].tid;
  const bool returned = sp.longest_block_exit != kNoIndex;
  const uint32_t call_end =
      returned ? next_call(trace_, events_, tid, sp.longest_block_exit) : UINT32_MAX;
  const uint64_t block_end = sp.longest_block_start + sp.longest_block_ns;
  auto own_edge_in = [&](uint32_t s) {
    for (auto [it, end] = in_edges(s, g_.csr); it != end; ++it) {
      const Edge& e = g_.edges[g_.csr[*it]];
      if (e.strength != Strength::Strong || g_.segments[e.from].tid != tid) continue;
      if (e.rule.kind == RuleKind::Split || e.rule.kind == RuleKind::Batch) continue;
      if (trace_.events[e.to_event].ts < last_sleep_start(sp)) continue;
      if (returned ? e.to_event < call_end : trace_.events[e.to_event].ts <= block_end) return true;
    }
    return false;
  };
  if (own_edge_in(seg)) return true;
  if (returned) {
    const uint32_t after = g_.segment_of(trace_, sp.longest_block_exit);
    if (after != seg && after != kNoIndex && own_edge_in(after)) return true;
  }
  // On a loaded machine the thread may wait long for a CPU after its wake-up, while other
  // threads' events pile up in between: a bound, but a wide one (one search per culprit).
  constexpr uint32_t kEventsSearched = 1u << 16;
  const KindId wakeup = trace_.schema.find("wakeup");
  if (wakeup == kNoKind) return false;
  const int target = trace_.schema.field_index(wakeup, "target");
  const int cause = trace_.schema.field_index(wakeup, "cause");
  if (target < 0 || cause < 0) return false;
  const uint64_t ran = sp.longest_block_start + sp.longest_block_ns;
  const EventList switches = events_.switches_of(tid);
  auto it = std::lower_bound(switches.begin(), switches.end(), ran,
                             [&](uint32_t e, uint64_t t) { return trace_.events[e].ts < t; });
  if (it == switches.end()) return false;
  // A timer's signal (alarm, setitimer) sent to the thread or to its process, raised by
  // its own timer: the kernel delivered it to this thread, whose wait (a pause) it ended,
  // and the recorder may see no wake-up for it.
  const KindId signal_send = trace_.schema.find("signal_send");
  const int signal_target =
      signal_send == kNoKind ? -1 : trace_.schema.field_index(signal_send, "target");
  const int signal_cause =
      signal_send == kNoKind ? -1 : trace_.schema.field_index(signal_send, "cause");
  const ThreadInfo* self = trace_.thread(tid);
  for (uint32_t e = *it, n = 0; e-- > 0 && n < kEventsSearched; ++n) {
    const Event& ev = trace_.events[e];
    if (ev.ts < sp.longest_block_start) break;
    if (ev.kind == signal_send && signal_target >= 0 && signal_cause >= 0 &&
        trace_.int_value(ev, signal_cause) == static_cast<int64_t>(tid)) {
      const int64_t to = trace_.int_value(ev, signal_target);
      if (to == static_cast<int64_t>(tid) || (self && to == static_cast<int64_t>(self->pid)))
        return true;
    }
    if (ev.kind != wakeup || trace_.int_value(ev, target) != static_cast<int64_t>(tid)) continue;
    return trace_.int_value(ev, cause) == static_cast<int64_t>(tid);
  }
  return false;
}

}  // namespace cw::engine::diagnose_detail
