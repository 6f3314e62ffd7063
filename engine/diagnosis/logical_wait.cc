#include "engine/diagnosis/logical_wait.h"

#include <algorithm>
#include <cstdint>

#include "engine/diagnosis/beam_search.h"

namespace cw::engine {

bool same_wait(const Trace& trace, uint32_t a, uint32_t b) {
  if (a == kNoIndex || b == kNoIndex) return false;
  const Event& ea = trace.events[a];
  const Event& eb = trace.events[b];
  if (ea.kind != eb.kind) return false;
  const int resource = trace.schema.field_index(ea.kind, "resource");
  const int fd = trace.schema.field_index(ea.kind, "fd");
  const int count = trace.schema.field_index(ea.kind, "count");
  auto names_object = [&](const Event& e) {
    return (resource >= 0 && trace.value(e, resource) != 0) ||
           (fd >= 0 && trace.int_value(e, fd) >= 0);
  };
  const bool has_object = names_object(ea);
  // A call on a set of descriptors (a poll: `count` of them) waits on that set; a loop that
  // polls again after a timeout polls the same number of them. Without descriptors (count
  // 0) it is a sleep. The recorder names the set's one descriptor when it could read the
  // set, and none when it could not (the set's page not there): a poll retried on the same
  // number of descriptors, one named and the other not, is the same wait too.
  const bool on_set_call = count >= 0 && trace.value(ea, count) != 0;
  if (on_set_call && (!has_object || !names_object(eb))) {
    const int name = trace.schema.field_index(ea.kind, "name");
    return trace.value(ea, count) == trace.value(eb, count) &&
           (name < 0 || trace.value(ea, name) == trace.value(eb, name));
  }
  if (!has_object) return false;
  for (const char* field : {"name", "fd", "resource"}) {
    int f = trace.schema.field_index(ea.kind, field);
    if (f >= 0 && trace.value(ea, f) != trace.value(eb, f)) return false;
  }
  return true;
}

bool sleeps_for_time(const Trace& trace, uint32_t call) {
  if (call == kNoIndex) return false;
  const Event& e = trace.events[call];
  const int resource = trace.schema.field_index(e.kind, "resource");
  const int fd = trace.schema.field_index(e.kind, "fd");
  const int count = trace.schema.field_index(e.kind, "count");
  const int timeout = trace.schema.field_index(e.kind, "timeout_ns");
  if (resource >= 0 && trace.value(e, resource) != 0) return false;
  if (fd >= 0 && trace.int_value(e, fd) >= 0) return false;
  if (count >= 0 && trace.value(e, count) != 0) return false;
  return timeout >= 0 && trace.int_value(e, timeout) >= 0;
}

uint32_t next_call(const Trace& trace, const ThreadEvents& events, Tid tid, uint32_t call_exit) {
  const EventList calls = events.syscalls_of(tid);
  auto it = std::upper_bound(calls.begin(), calls.end(), call_exit);
  while (it != calls.end() && trace.events[*it].kind == trace.events[call_exit].kind)
    ++it;  // exits only: the next entry is the next call
  return it == calls.end() ? UINT32_MAX : *it;
}

uint32_t wake_edge(const Trace& trace, const ThreadEvents& events, const Graph& graph,
                   uint32_t segment, const SegmentProfile& p) {
  const uint64_t block_start = p.longest_block_start;
  // A wait the call slept again in (woken by what it was not waiting for) was ended by what
  // ended its last sleep: a wake-up that ended an earlier one let it look, and find nothing
  // (a reader woken as another reader of its stream drained it: a daemon's question read by
  // its helper wakes the daemon waiting for the answer). Once it timed out, nothing did.
  const uint64_t last_sleep = last_sleep_start(p);
  // A sleep waits for time, not for bytes: what the thread read after it returned had been
  // waiting for the sleeper, not waking it. (A poll's readiness shows only in the read after
  // it: that message did end the poll.)
  const uint32_t block_exit =
      sleeps_for_time(trace, p.longest_block_call) ? p.longest_block_exit : kNoIndex;
  const Tid tid = graph.segments[segment].tid;
  // A wait that returned was ended by something that happened after it began: a message
  // sent before it (queued on another descriptor, read after the wake-up) or a child that
  // had exited before (reaped later) did not end it. Of a wait still open when the
  // recording stopped, the edges say who it waits for (a lock's holder took it earlier).
  const bool returned = p.longest_block_call != kNoIndex && p.longest_block_exit != kNoIndex;
  // What landed within the call (up to the thread's next system call: a read's bytes are
  // recorded as it returns) is direct evidence of what ended it, and comes before what
  // landed in later calls (the read after a poll that found its descriptor ready).
  const uint32_t call_end =
      returned ? next_call(trace, events, tid, p.longest_block_exit) : UINT32_MAX;
  // A wake-up that ended a later, shorter block of the call did not end its longest one: a
  // reader woken by a write runs, blocks a moment on the pipe's lock while its writer
  // closes it, and is woken by the close; the write ended the wait (its bytes say so). It
  // ranks after every other edge, not out: with the thread's switches lost under load, the
  // wake-up that ended the wait may be paired with a later switch_in.
  const uint64_t block_end = block_start + p.longest_block_ns;
  auto ended_later_block = [&](const Edge& e) {
    if (!returned || e.to_event >= call_end) return false;
    const Event& to = trace.events[e.to_event];
    // The kind is looked up only for such an edge: this runs for every wait searched.
    return to.ts > block_end && to.kind == trace.schema.find("switch_in");
  };
  const EdgeCosts costs;
  auto earlier = [&](uint32_t a, uint32_t b, bool by_tier) {  // whether a ranks before b
    const Edge& ea = graph.edges[a];
    const Edge& eb = graph.edges[b];
    if (ended_later_block(ea) != ended_later_block(eb)) return !ended_later_block(ea);
    if (by_tier && (ea.to_event < call_end) != (eb.to_event < call_end))
      return ea.to_event < call_end;
    const double ca = edge_cost(ea, costs), cb = edge_cost(eb, costs);
    if (ca != cb) return ca < cb;
    // Of equally strong edges, the first to arrive ended the wait: what came after it
    // returned (a later child's signal to a parent that went on working) did not.
    return trace.events[ea.to_event].ts < trace.events[eb.to_event].ts;
  };
  std::vector<uint32_t> candidates;
  bool own_timer_in_call = false;  // a strong edge from the thread itself landed in the call
  for (auto [it, end] = in_edges(segment, graph.csr); it != end; ++it) {
    const uint32_t ei = graph.csr[*it];
    const Edge& e = graph.edges[ei];
    if (e.from == segment) continue;
    if (e.rule.kind == RuleKind::Split || e.rule.kind == RuleKind::Batch) continue;
    if (graph.segments[e.from].tid == tid) {  // its own timer: a timeout, or its firing
      if (returned && e.strength == Strength::Strong && e.to_event < call_end &&
          trace.events[e.to_event].ts >= block_start)
        own_timer_in_call = true;
      continue;
    }
    if (trace.events[e.to_event].ts < last_sleep) continue;
    if (block_exit != kNoIndex && e.to_event > block_exit) continue;
    if (returned && trace.events[e.from_event].ts < block_start) continue;
    candidates.push_back(ei);
  }
  uint32_t best = kNoIndex;
  for (uint32_t ei : candidates)
    if (best == kNoIndex || earlier(ei, best, true)) best = ei;
  if (best == kNoIndex) return best;
  // Its own timer's firing, recorded as the call returned (a timerfd read), ended it: what
  // other threads sent after it began and it read in later calls (a pipe it drained next)
  // came to it after the wait, not into it.
  if (own_timer_in_call && graph.edges[best].to_event >= call_end) return kNoIndex;
  // The source that ended it, by its cheapest edge: a writer's wake-up and the bytes it
  // wrote are one story, told best by the message.
  const uint32_t source = graph.edges[best].from;
  for (uint32_t ei : candidates)
    if (graph.edges[ei].from == source && earlier(ei, best, false)) best = ei;
  return best;
}

namespace {

// Whether segment `s` reached another thread by a causal (not weak) edge: the thread acted
// on its timeout (it sent, posted, woke someone), so the wait after it is a new one.
bool acted(const Graph& graph, uint32_t s) {
  for (auto [it, end] = out_edges(s, graph.csr); it != end; ++it) {
    const Edge& e = graph.edges[graph.csr[*it]];
    if (e.strength != Strength::Weak && graph.segments[e.to].tid != graph.segments[s].tid)
      return true;
  }
  return false;
}

// The causal (not weak) edge from another thread into segment `s` that arrived first, sent
// after the wait began (`from`), if it arrived before `s` reached another thread itself;
// kNoIndex otherwise. A message queued before the wait began did not end it; a segment
// that asked something first and then got its answer was not taking what the wait was
// woken for. A message sent after the wait's last slice returned counts: the slice timed
// out as the answer came (curl's 1 s poll, lighttpd's answer microseconds later), and the
// thread, which has not waited again since (the caller's loop stops at the next slice that
// blocks), took it on its next look.
uint32_t taken_before_acting(const Trace& trace, const Graph& graph, uint32_t s, uint64_t from) {
  const Tid tid = graph.segments[s].tid;
  uint64_t acted_at = UINT64_MAX;
  for (auto [it, end] = out_edges(s, graph.csr); it != end; ++it) {
    const Edge& e = graph.edges[graph.csr[*it]];
    if (e.strength != Strength::Weak && graph.segments[e.to].tid != tid)
      acted_at = std::min(acted_at, trace.events[e.from_event].ts);
  }
  uint32_t first = kNoIndex;
  for (auto [it, end] = in_edges(s, graph.csr); it != end; ++it) {
    const uint32_t ei = graph.csr[*it];
    const Edge& e = graph.edges[ei];
    if (e.strength == Strength::Weak || graph.segments[e.from].tid == tid) continue;
    if (e.rule.kind == RuleKind::Split || e.rule.kind == RuleKind::Batch) continue;
    const uint64_t sent = trace.events[e.from_event].ts;
    const uint64_t ts = trace.events[e.to_event].ts;
    if (ts > acted_at || sent < from) continue;
    if (first == kNoIndex || ts < trace.events[graph.edges[first].to_event].ts) first = ei;
  }
  return first;
}

}  // namespace

LogicalWait logical_wait(const Trace& trace, const ThreadEvents& events, const Graph& graph,
                         uint32_t segment) {
  LogicalWait w;
  w.first = w.last = segment;
  const Segment& seg = graph.segments[segment];
  const Graph::ThreadSegments* t = graph.thread_segments(seg.tid);
  SegmentProfile p = profile_segment(trace, events, graph, segment);
  w.start_ns = p.longest_block_start;
  w.end_ns = p.longest_block_start + p.longest_block_ns;
  const uint32_t call = p.longest_block_call;
  auto woken = [&](uint32_t s, const SegmentProfile& sp) {
    uint32_t e = wake_edge(trace, events, graph, s, sp);
    if (e == kNoIndex) return false;
    w.woken = s;
    w.wake_edge = e;
    return true;
  };
  const bool ended_here = woken(segment, p);
  if (!t || !same_wait(trace, call, call)) return w;
  // Earlier slices that timed out belong to it too, whichever slice a wake-up ended (the
  // longest slice may be the last: a poll loop's slices last its timeout, the last one as
  // long until the data came).
  for (uint32_t s = segment; s > t->begin;) {
    if (acted(graph, s - 1)) break;
    SegmentProfile sp = profile_segment(trace, events, graph, --s);
    if (sp.longest_block_ns == 0) continue;
    if (!same_wait(trace, sp.longest_block_call, call) ||
        wake_edge(trace, events, graph, s, sp) != kNoIndex)
      break;
    w.first = s;
    w.start_ns = sp.longest_block_start;
  }
  if (ended_here) return w;
  // Later slices, up to the first that a wake-up ended.
  for (uint32_t s = segment + 1; s < t->end; ++s) {
    if (acted(graph, s - 1)) break;
    SegmentProfile sp = profile_segment(trace, events, graph, s);
    // A segment that took what the wait woke for before it blocked again, if it did: when
    // the wake-up went unrecorded (a wake-up from another CPU's interrupt), or when the
    // wait timed out as the answer came (the wait returned, a second poll found the
    // descriptor ready at once and cut, or the thread read the bytes that had come while it
    // waited for a CPU). That message is the wake-up, whatever the segment did next (it
    // answered, then blocked writing to a terminal).
    if (const uint32_t e = taken_before_acting(trace, graph, s, w.start_ns); e != kNoIndex) {
      const uint64_t taken = trace.events[graph.edges[e].to_event].ts;
      if (sp.longest_block_ns == 0 ||
          profile_range(trace, events, seg.tid, graph.segments[s].start_ns, taken).blocked_ns ==
              0) {
        w.woken = s;
        w.wake_edge = e;
        break;
      }
    }
    if (sp.longest_block_ns == 0) continue;
    if (!same_wait(trace, sp.longest_block_call, call)) break;
    w.last = s;
    w.end_ns = sp.longest_block_start + sp.longest_block_ns;
    if (woken(s, sp)) break;
  }
  return w;
}

LogicalWait retried_wait(const Trace& trace, const ThreadEvents& events, const Graph& graph,
                         uint32_t segment, const SegmentProfile& p) {
  if (segment == kNoIndex || p.flag_events > 0 || p.longest_block_call == kNoIndex ||
      !same_wait(trace, p.longest_block_call, p.longest_block_call))
    return {};
  LogicalWait lw = logical_wait(trace, events, graph, segment);
  if (lw.wake_edge == kNoIndex) return {};
  const uint64_t length = lw.end_ns - std::min(lw.end_ns, lw.start_ns);
  if (2 * length < p.end_ns - std::min(p.end_ns, p.start_ns)) return {};
  return lw;
}

}  // namespace cw::engine
