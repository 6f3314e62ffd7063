// One vertex of the diagnosis by how it behaved (the Argus paper, §2): a LongRunning one is
// sliced back to what started its work; a RepeatedYield one is explained by the write or
// release that ended its loop; a LongWait one is compared (diagnose_long_wait.cc).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "engine/diagnosis/cpu_contention.h"
#include "engine/diagnosis/diagnoser.h"
#include "engine/diagnosis/polling_end.h"
#include "trace/command_marker.h"

namespace cw::engine::diagnose_detail {

void Diagnoser::diagnose_vertex(uint32_t seg, HangKind kind, const SegmentProfile& prof,
                                uint32_t depth, Window window, uint32_t first, uint32_t last) {
  switch (kind) {
    case HangKind::LongRunning: {
      // Slice back to the event that started the work.
      add_root(root(seg, kind, prof, depth));
      std::vector<PathStep> path = slice(seg);
      if (depth == 0)
        d_.path = std::move(path);
      else
        deeper_paths_.push_back(std::move(path));
      blame_cpu_takers(seg, prof, depth, window);
      return;
    }
    case HangKind::RepeatedYield: {
      // A flag write that ended the loop explains it: the writer is the culprit. The
      // read that saw it is in the stretch or just after it.
      uint32_t flag_edge = kNoIndex;
      if (has_flag_edge_into(first, last + 1, &flag_edge)) {
        add_root(root(seg, kind, prof, depth));
        const size_t before = d_.root_causes.size();
        examine_thread(g_.edges[flag_edge].from, window, depth);
        // The path runs through the write that ended the loop, whatever else the loop's
        // last turn went on to collect (a child's end reaped after the loop).
        if (depth == 0) d_.path = path_through(before, flag_edge);
        return;
      }
      if (follow_polling_end(seg, kind, prof, depth, window, first, last)) return;
      if (prof.flag_events > 0 && !g_.rule_names.of(RuleKind::Flag).empty()) {
        // Flag reads but no write set it: the missing write is what to find.
        if (depth == 0)
          d_.notes.push_back(
              fmt::format("{} read a data flag in its loop, but no write set it while it looped: "
                          "looking for the thread that normally does",
                          who(seg)));
        break;
      }
      add_root(root(seg, kind, prof, depth));
      if (depth == 0) {
        d_.yield_without_flag = true;
        d_.yield_loop.syscalls = prof.by_name;
        collect_call_sites(first, last);
        d_.path = {{seg, kNoIndex}};
        d_.notes.push_back(fmt::format(
            "{} polled in a loop and no data-flag event explains when it stopped: declare "
            "the variable it waits for as a `flag` in a pack and record again",
            who(seg)));
      }
      return;
    }
    case HangKind::LongWait: break;
  }
  long_wait(seg, prof, depth, window);
}

// A flag edge into segments [first, last] of one thread.
bool Diagnoser::has_flag_edge_into(uint32_t first, uint32_t last, uint32_t* edge) const {
  const Tid tid = g_.segments[first].tid;
  for (uint32_t s = first; s <= last && s < g_.segments.size() && g_.segments[s].tid == tid; ++s)
    for (auto [it, end] = in_edges(s, g_.csr); it != end; ++it) {
      const Edge& e = g_.edges[g_.csr[*it]];
      if (e.rule.kind == RuleKind::Flag) {
        *edge = g_.csr[*it];
        return true;
      }
    }
  return false;
}

// A polling loop that an `ends_polling` edge ended (a lock's release joined to the try
// that got the lock): the edge's source is what the loop waited for, as a flag's writer
// is for a loop that reads the flag. Its thread is examined over the loop's window; when
// it was neither blocked nor busy there, the segment that ended the loop is blamed.
bool Diagnoser::follow_polling_end(uint32_t seg, HangKind kind, const SegmentProfile& prof,
                                   uint32_t depth, Window window, uint32_t first, uint32_t last) {
  const uint32_t ei = polling_end_edge(g_, first, last + 1);
  if (ei == kNoIndex) return false;
  const Edge& e = g_.edges[ei];
  add_root(root(seg, kind, prof, depth));
  const size_t before = d_.root_causes.size();
  const bool seen = visited_threads_.count(g_.segments[e.from].tid) > 0;
  examine_thread(e.from, window, depth);
  if (d_.root_causes.size() == before && !seen && !stopped_) {
    SegmentProfile sp = profile_segment(trace_, events_, g_, e.from);
    blame(e.from, classify(sp), sp, depth);
  }
  if (depth == 0) {
    d_.path = path_through(before, ei);
    d_.notes.push_back(fmt::format("{}'s loop ended with a {} edge from {} at {:.6f} s", who(seg),
                                   g_.kind_name(e), who(e.from),
                                   secs(trace_.events[e.from_event].ts)));
  }
  return true;
}

// The distinct stacks of a yield loop's calls in segments [first, last] (eight at most),
// where the report shows it called from.
void Diagnoser::collect_call_sites(uint32_t first, uint32_t last) {
  std::set<StackId> seen;
  for (uint32_t s = first; s <= last && s < g_.segments.size(); ++s) {
    const Segment& seg = g_.segments[s];
    const auto& list = events_.of(seg.tid);
    auto lo = std::lower_bound(list.begin(), list.end(), seg.first);
    auto hi = std::upper_bound(lo, list.end(), seg.last);
    for (auto it = lo; it != hi && seen.size() < 8; ++it)
      if (StackId st = trace_.events[*it].stack; st && seen.insert(st).second)
        d_.yield_loop.call_sites.push_back(st);
  }
}

// A thread busy over the window that mostly waited for a CPU (preempted, runnable) was
// slowed by the threads that ran on its CPU meanwhile: no wake-up joins them, so the
// scheduler's switches on that CPU name them. Each that took a fifth or more of that
// time is a root cause one level below, and the path leads from them (finish_path) —
// when it belongs to the recorded command. The rest of the machine's load (another
// user's build) slowed it too, but the program's own work is what the recording is
// about: that load is named in a note.
void Diagnoser::blame_cpu_takers(uint32_t seg, const SegmentProfile& p, uint32_t depth,
                                 Window window) {
  if (!starved_of_cpu(p)) return;
  const Tid tid = g_.segments[seg].tid;
  const CpuContention c = cpu_contention(trace_, events_, tid, window.start, window.end);
  if (c.taken_ns == 0) return;
  const Pid command = command_pid(trace_);
  std::vector<std::string> named, outside;
  for (const CpuTaker& t : c.takers) {
    if (5 * t.ran_ns < c.taken_ns || named.size() + outside.size() == 3) break;
    const uint32_t s = g_.segment_of(trace_, t.longest_run);
    if (s == kNoIndex) continue;
    if (command != 0 && !in_process_tree(trace_, g_.segments[s].pid, command)) {
      outside.push_back(fmt::format("{} ({})", who(s), ms(t.ran_ns)));
      continue;
    }
    RootCause r;
    r.segment = s;
    r.kind = HangKind::LongRunning;
    r.what = fmt::format("ran {} on the CPU {} was waiting for ({} % of its {} runnable)",
                         ms(t.ran_ns), who(seg), 100 * t.ran_ns / c.runnable_ns, ms(c.runnable_ns));
    r.stack = stack_of_segment(s, profile_segment(trace_, events_, g_, s));
    r.depth = depth + 1;
    r.start_ns = window.start;
    r.end_ns = window.end;
    visited_threads_.insert(t.tid);
    named.push_back(who(s));
    add_root(std::move(r));
  }
  const std::string starved = fmt::format(
      "{} was runnable but not running for {} of {} (it ran {}): CPU contention", who(seg),
      ms(p.runnable_ns), ms(p.end_ns - std::min(p.end_ns, p.start_ns)), ms(p.on_cpu_ns));
  if (!named.empty())
    d_.notes.push_back(
        fmt::format("{}; the CPU it waited for ran {}", starved, fmt::join(named, ", ")));
  if (!outside.empty())
    d_.notes.push_back(fmt::format(
        "{}{}; outside the recorded command, its CPU ran {}: the machine's load slowed it",
        named.empty() ? starved : who(seg), named.empty() ? "" : " also",
        fmt::join(outside, ", ")));
}

}  // namespace cw::engine::diagnose_detail
