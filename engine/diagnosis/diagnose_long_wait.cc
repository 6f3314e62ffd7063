// A LongWait (the Argus paper, §2 and Algorithm 1): a baseline, a similar segment whose
// wait ended quickly, and its causal path (or, when another thread ended the wait, the
// hang's own), compared thread by thread with what those threads did during the hang.
#include <fmt/format.h>

#include <algorithm>

#include "engine/diagnosis/diagnoser.h"

namespace cw::engine::diagnose_detail {

// LongWait: baseline, its causal path, and a thread-by-thread comparison.
void Diagnoser::long_wait(uint32_t seg, const SegmentProfile& prof, uint32_t depth, Window window) {
  size_t causes_before = d_.root_causes.size();
  // Evidence before comparison: a wait that another thread ended has its own causal
  // path. A baseline (a quick run of the same wait) is for a wake-up that never came —
  // the wait timed out or was never woken — or when asked for.
  const uint32_t waker = wake_edge(trace_, events_, g_, seg, prof);
  uint32_t baseline = kNoIndex;
  if (waker == kNoIndex || opt_.baseline)
    baseline = choose_baseline(seg, find_similar(trace_, events_, g_, seg, prof));
  std::vector<PathStep> path;
  if (baseline != kNoIndex) {
    path = slice(baseline);

    if (depth == 0) {
      d_.baseline = baseline;
      d_.baseline_path = path;
    }
  } else {
    // The hang's own wake-up path (if it came at all) is the guide.
    slice_window_ = window.end > window.start ? window.end - window.start : 0;
    path = slice(seg);
    slice_window_ = 0;
    if (depth == 0)
      hang_slice_ = path;
    else
      deeper_paths_.push_back(path);  // what this wait's waker path was, whoever is blamed
    if (depth == 0 && waker == kNoIndex)
      d_.notes.push_back(
          fmt::format("no baseline: no other segment of {} did the same and waited briefly; "
                      "compared the threads on the hang's own causal path instead",
                      who(seg)));
    if (waker != kNoIndex && blame_heaviest(path, seg, depth, window)) return;
  }
  // Threads on the path that acted after the wait began (those before it only started
  // the request), nearest to the waiting segment first. A wait in slices began with its
  // first slice (the window starts there), not with the one a wake-up ended: a stage that
  // handed on its result just before the last slice began acted within the wait.
  const uint64_t wait_began =
      baseline != kNoIndex ? profile_segment(trace_, events_, g_, baseline).longest_block_start
                           : std::min(prof.longest_block_start, window.start);
  struct PathThread {
    Tid tid;
    uint32_t wait_call;  // the call it was woken in on the path (kNoIndex if none)
    Tid upstream;        // the thread that woke it on the path, 0 if none
  };
  std::vector<PathThread> threads;
  // Below the hang: whether the thread that woke the culprit at the path's end is the
  // hang's own thread (the culprit waited for it directly).
  bool hang_thread_on_path = false;
  if (depth > 0 && !path.empty()) {
    size_t j = path.size() - 1;
    const Tid own = g_.segments[path[j].segment].tid;
    while (j > 0 && g_.segments[path[j - 1].segment].tid == own) --j;
    // Only when the hang's thread ended the culprit's wait: an edge that started the
    // culprit (a fork) before it waited says nothing about a circle.
    hang_thread_on_path = j > 0 && g_.segments[path[j - 1].segment].tid == d_.hang.tid &&
                          path[j - 1].edge != kNoIndex &&
                          trace_.events[g_.edges[path[j - 1].edge].to_event].ts >= wait_began;
  }
  for (size_t k = path.size(); k-- > 0;) {
    // When it acted on the path: the event of its edge onward (a client that sent the
    // request and then waited for the answer acted when it sent), else its segment's end.
    const uint64_t acted = path[k].edge != kNoIndex
                               ? trace_.events[g_.edges[path[k].edge].from_event].ts
                               : g_.segments[path[k].segment].end_ns;
    if (acted <= wait_began) continue;
    Tid t = g_.segments[path[k].segment].tid;
    if (t == g_.segments[seg].tid || visited_threads_.count(t)) continue;
    if (std::any_of(threads.begin(), threads.end(),
                    [&](const PathThread& p) { return p.tid == t; }))
      continue;
    // Who woke it on the path: the thread of the step before its run of steps (none
    // when the path starts with it), and the call it was woken in there.
    size_t j = k;
    while (j > 0 && g_.segments[path[j - 1].segment].tid == t) --j;
    Tid upstream = j > 0 ? g_.segments[path[j - 1].segment].tid : 0;
    uint32_t woken_in = j > 0 ? call_in_flight(t, g_.edges[path[j - 1].edge].to_event) : kNoIndex;
    threads.push_back({t, woken_in, upstream});
  }
  bool passed = false;
  Tid circle_via = 0;  // a thread that waited for the hang's own thread
  for (const PathThread& t : threads) {
    if (stopped_) return;
    if (visited_threads_.count(t.tid)) continue;  // a recursion reached it already
    if (passes_through(t.tid, t.wait_call, t.upstream, g_.segments[seg].tid, window)) {
      passed = true;
      visited_threads_.insert(t.tid);  // judged: it waited for its upstream
      if (depth > 0 && t.upstream == d_.hang.tid) circle_via = t.tid;
      continue;
    }
    uint32_t culprit = segment_in(t.tid, window);
    if (culprit == kNoIndex) continue;
    examine_thread(culprit, window, depth);
  }
  if ((circle_via != 0 || hang_thread_on_path) && d_.root_causes.size() == causes_before) {
    // The culprit waited (maybe through `circle_via`) for the hang's own thread, which
    // was waiting for it: a circular wait, which only the hang's wait ending could break.
    const std::string via =
        circle_via != 0 ? fmt::format("{}, which waited for ", thread_name(circle_via)) : "";
    d_.notes.push_back(fmt::format(
        "circular wait: {} waited for {}{}, the hang's own thread, blocked in turn on {}: the "
        "circle lasted until the hang's wait ended ({})",
        who(seg), via, thread_name(d_.hang.tid), who(seg), hang_end_reason()));
    return;
  }
  if (d_.root_causes.size() == causes_before && !stopped_ && !passed) {
    // Nobody on the path was hung: the wake-up the baseline got never came. The thread
    // that delivered it in the baseline is where to look. (Below the hang itself, `seg`
    // is already a root cause: the culprit that recursion started from.)
    if (baseline != kNoIndex && path.size() >= 2 && path[path.size() - 2].edge != kNoIndex) {
      const Edge& e = g_.edges[path[path.size() - 2].edge];
      Tid sender_tid = g_.segments[e.from].tid;
      uint32_t sender = segment_in(sender_tid, window);
      // A thread that had exited before the hang began (a child that finished) was
      // never going to send it: it is not to blame.
      const SegmentProfile life =
          profile_range(trace_, events_, sender_tid, window.start, window.end);
      const bool gone = life.exited_ns != 0 && life.exited_ns <= window.start;
      if (sender != kNoIndex && sender_tid != g_.segments[seg].tid && !gone &&
          !visited_threads_.count(sender_tid)) {
        SegmentProfile sp = profile_segment(trace_, events_, g_, sender);
        RootCause r = root(sender, classify(sp), sp, depth + 1);
        r.what = fmt::format(
            "did not send the {} that woke {} in the baseline at {:.6f} s; meanwhile it {}",
            g_.kind_name(e), who(seg), secs(trace_.events[e.to_event].ts),
            behaviour(classify(sp), sp));
        add_root(r);
        return;
      }
    }
    if (depth == 0) add_root(root(seg, HangKind::LongWait, prof, depth));
  }
}

// The step of the causal path `path` (origin → … → seg) that took the time: from what
// caused it (the cause event of the edge into it, or its start, whichever is later) to
// the event that led on, within the window. A timer wait counts from the timer's arming,
// a thread woken by a message from when it was sent: what the thread waited for is the
// time of the step before. When one step took most of the window, it is the root cause
// (the path's origin only started the work); the path shown runs from it, or from the
// other thread's request that started it, to the hang.
bool Diagnoser::blame_heaviest(const std::vector<PathStep>& path, uint32_t seg, uint32_t depth,
                               Window window) {
  const uint64_t len = window.end > window.start ? window.end - window.start : 0;
  size_t best = path.size();
  uint64_t best_took = 0, best_in = 0, best_out = 0;
  for (size_t k = 0; k + 1 < path.size(); ++k) {
    const Segment& sg = g_.segments[path[k].segment];
    if (sg.tid == g_.segments[seg].tid || path[k].edge == kNoIndex) continue;
    uint64_t in = std::max(sg.start_ns, window.start);
    if (k > 0 && path[k - 1].edge != kNoIndex)
      in = std::max(in, trace_.events[g_.edges[path[k - 1].edge].from_event].ts);
    uint64_t out = std::min(trace_.events[g_.edges[path[k].edge].from_event].ts, window.end);
    uint64_t took = out > in ? out - in : 0;
    if (took > best_took) {
      best = k;
      best_took = took;
      best_in = in;
      best_out = out;
    }
  }
  if (best == path.size() || best_took < kAbnormalShare * static_cast<double>(len)) return false;
  const uint32_t culprit = path[best].segment;
  const Tid tid = g_.segments[culprit].tid;
  const ThreadInfo* info = trace_.thread(tid);
  if (visited_threads_.count(tid) || (info && info->kernel)) return false;
  SegmentProfile p = profile_range(trace_, events_, tid, best_in, best_out);
  // What started its work: the step before it, from another thread (another client's
  // request to a server busy with it). The path shown begins there, at the requester: a
  // server's work for one client is what the next client waited behind (the Argus paper,
  // §4.2, batching), and who asked for it is half of the answer.
  // The culprit's thread may have come to that step through segments of its own (a
  // server that read the request, then slept or waited on a lock for it): the request
  // is the other thread's edge into the first of them.
  size_t run = best;
  while (run > 0 && path[run - 1].edge != kNoIndex && g_.segments[path[run - 1].segment].tid == tid)
    --run;
  std::string started;
  size_t first = best;
  if (run > 0 && path[run - 1].edge != kNoIndex) {
    const Edge& e = g_.edges[path[run - 1].edge];
    started = fmt::format("; its work began with a {} from {} at {:.6f} s", g_.kind_name(e),
                          who(e.from), secs(trace_.events[e.from_event].ts));
    // The hang's own request is no news to whoever watched it hang.
    if (g_.segments[e.from].tid != g_.segments[seg].tid) first = run - 1;
  }
  std::vector<PathStep> shown(path.begin() + static_cast<std::ptrdiff_t>(first), path.end());
  if (first + 1 == run) prepend_requesters(shown, seg, culprit);
  if (first < run) requested_paths_.push_back(shown);
  if (depth == 0)
    d_.path = std::move(shown);
  else
    deeper_paths_.push_back(std::move(shown));
  waited_downstream(path, best);
  blame(culprit, classify(p), p, depth, started);
  return true;
}

// The step that asked for the culprit's work may only have passed on another thread's
// request: an event loop that read a client's request and queued it for a pool thread, a
// bus's worker thread that received a method call over the bus. Behind each such relay
// is the message it received, which started the step: the path shown begins where the
// messages began (the Argus paper, §4.2: the request that the batched work served).
void Diagnoser::prepend_requesters(std::vector<PathStep>& shown, uint32_t hang_seg,
                                   uint32_t culprit) {
  constexpr size_t kMaxRelays = 4, kMaxOwnSegments = 8;
  // Each message is earlier than the one it led to, so the walk cannot go round; a thread
  // may be on both sides (a bus daemon relays the call and the reply). It stops at the
  // hang's own thread and the culprit's: a client whose step began with the answer to its
  // previous request to the culprit is where this request began.
  std::vector<Tid> seen = {g_.segments[hang_seg].tid, g_.segments[culprit].tid};
  const KindId send = trace_.schema.find("send"), recv = trace_.schema.find("recv");
  // The message into segment `v` from another thread that arrived first, before `acted`:
  // the bytes of a send read by a recv, or an edge whose rule says it carries a request (a
  // wake-up that delivered a stream's bytes, when no transfer was recorded).
  const std::vector<bool>& requests = g_.rule_names.edge_requests;
  auto carries_request = [&](const Edge& e) {
    if (trace_.events[e.from_event].kind == send && trace_.events[e.to_event].kind == recv)
      return true;
    return e.rule.kind == RuleKind::Edge && e.rule.index < requests.size() &&
           requests[e.rule.index];
  };
  auto request_into = [&](uint32_t v, uint64_t acted) {
    uint32_t request = kNoIndex;
    uint64_t earliest = UINT64_MAX;
    for (uint32_t ei : incoming_by_source(g_, v, beam_.costs)) {
      const Edge& e = g_.edges[ei];
      const Event& to = trace_.events[e.to_event];
      if (e.strength != Strength::Strong || !carries_request(e)) continue;
      if (g_.segments[e.from].tid == g_.segments[v].tid || to.ts > acted || to.ts >= earliest)
        continue;
      request = ei;
      earliest = to.ts;
    }
    return request;
  };
  for (size_t hops = 0; hops < kMaxRelays && !shown.empty(); ++hops) {
    // What the step did on the path, and the request it was serving: the first message
    // from another thread into it or, back through the thread's own segments (it may
    // have waited on a lock or a pool's queue meanwhile), into the segment its turn of
    // the loop began with. A turn that began with no message relayed none.
    uint32_t v = shown.front().segment;
    const uint64_t acted = shown.front().edge != kNoIndex
                               ? trace_.events[g_.edges[shown.front().edge].from_event].ts
                               : g_.segments[v].end_ns;
    uint32_t request = request_into(v, acted);
    std::vector<PathStep> own_steps;  // the thread's own segments walked back, latest first
    for (size_t own = 0; request == kNoIndex && own < kMaxOwnSegments; ++own) {
      // A turn of the loop that began after the thread waited idle in it serves what
      // woke it, not the turn before; one that began at once (the loop found its
      // descriptors ready, a read of the rest of a message) goes on with it.
      if ((is_loop_cut(g_, v) && idle_at_start(v)) || v == 0 ||
          g_.segments[v - 1].tid != g_.segments[v].tid)
        break;
      uint32_t neighbour = kNoIndex;
      for (uint32_t ei : incoming_by_source(g_, v, beam_.costs))
        if (g_.edges[ei].from == v - 1) neighbour = ei;
      if (neighbour == kNoIndex) break;
      own_steps.push_back({v - 1, neighbour});
      request = request_into(--v, acted);
    }
    if (request == kNoIndex) return;
    const uint32_t from = g_.edges[request].from;
    const Tid sender = g_.segments[from].tid;
    if (std::find(seen.begin(), seen.end(), sender) != seen.end()) return;
    const ThreadInfo* info = trace_.thread(sender);
    if (info && info->kernel) return;
    seen.push_back(sender);
    for (const PathStep& step : own_steps) shown.insert(shown.begin(), step);
    shown.insert(shown.begin(), PathStep{from, request});
  }
}

// Whether segment `v`'s thread blocked before the first call that returned in it: for a
// segment a loop cut began, whether it waited idle in its loop for what came next.
bool Diagnoser::idle_at_start(uint32_t v) const {
  const Segment& s = g_.segments[v];
  const KindId exit = trace_.schema.find("syscall_exit");
  const EventList calls = events_.syscalls_of(s.tid);
  auto it = std::partition_point(calls.begin(), calls.end(),
                                 [&](uint32_t i) { return trace_.events[i].ts < s.start_ns; });
  uint64_t returned = s.end_ns;
  for (; it != calls.end() && trace_.events[*it].ts <= s.end_ns; ++it)
    if (trace_.events[*it].kind == exit) {
      returned = trace_.events[*it].ts;
      break;
    }
  return profile_range(trace_, events_, s.tid, s.start_ns, returned).blocked_ns > 0;
}

// The threads of `path` after step `culprit` (up to the hang) were each woken by the step
// before them: they waited, through one another, for the culprit's work. Diagnosing the
// culprit must not blame them for it (a proxy that sent the request and then waited for
// the upstream's answer is not what kept the upstream busy): they are judged.
void Diagnoser::waited_downstream(const std::vector<PathStep>& path, size_t culprit) {
  const Tid tid = g_.segments[path[culprit].segment].tid;
  for (size_t k = culprit + 1; k < path.size(); ++k)
    if (g_.segments[path[k].segment].tid != tid)
      visited_threads_.insert(g_.segments[path[k].segment].tid);
}

uint32_t Diagnoser::choose_baseline(uint32_t seg, const std::vector<SimilarSegment>& similar) {
  if (similar.empty()) return kNoIndex;
  // Candidates woken by the same peer are the same story: keep the most relevant of
  // each; ask only when the stories differ.
  std::vector<const SimilarSegment*> groups;
  std::vector<std::string> group_keys;
  for (const SimilarSegment& c : similar) {
    std::string key = waker_name(c.segment);
    if (std::find(group_keys.begin(), group_keys.end(), key) != group_keys.end()) continue;
    group_keys.push_back(key);
    groups.push_back(&c);
  }
  if (groups.size() == 1) return groups[0]->segment;
  Question q;
  q.kind = QuestionKind::Baseline;
  q.subject = seg;
  q.text = fmt::format("Which run is the normal one to compare {}'s wait with?", who(seg));
  q.help =
      "These segments did the same system calls and messages as the hang's, but their "
      "wait ended quickly (or with another result). They were woken by different peers, so "
      "their causal paths differ. Options: the latest before the hang first.";
  for (size_t k = 0; k < groups.size() && k < 6; ++k) {
    Option o;
    o.segment = groups[k]->segment;
    o.cost = static_cast<double>(k);
    o.label = fmt::format("{} (waited {}, woken by {})", segment_line(o.segment),
                          ms(groups[k]->wait_ns), group_keys[k]);
    if (evidence_) o.evidence = segment_evidence(o.segment);
    q.options.push_back(std::move(o));
  }
  Option none;
  none.stop = true;
  none.cost = static_cast<double>(q.options.size());
  none.label = "none of these: no baseline";
  q.options.push_back(none);
  const Option& pick = ask(std::move(q));
  return pick.stop ? kNoIndex : pick.segment;
}

std::string Diagnoser::waker_name(uint32_t s) const {
  std::vector<uint32_t> in = incoming_by_source(g_, s, beam_.costs);
  for (uint32_t ei : in)
    if (g_.segments[g_.edges[ei].from].tid != g_.segments[s].tid)
      return thread_name(g_.segments[g_.edges[ei].from].tid) + " (" + g_.kind_name(g_.edges[ei]) +
             ")";
  return "its own thread";
}

// The system call `tid` was woken in at `event`: the last one it entered before (a recv
// is recorded as its read returns, after the syscall_exit), kNoIndex if none.
uint32_t Diagnoser::call_in_flight(Tid tid, uint32_t event) const {
  const EventList calls = events_.syscalls_of(tid);
  auto it = std::upper_bound(calls.begin(), calls.end(), event);
  while (it != calls.begin()) {
    uint32_t e = *--it;
    if (trace_.events[e].kind == syscall_enter_) return e;
  }
  return kNoIndex;
}

// A thread on the baseline's path that, during the hang, blocked in the very wait it
// was woken from in the baseline, while the thread that woke it there was hung too (or
// is the hang's own thread): it waits for its upstream, as it should; the culprit is
// further up. (An I/O thread idle in `read` is not the cause of a reply that never
// came.)
bool Diagnoser::passes_through(Tid tid, uint32_t baseline_wait, Tid upstream, Tid hang_tid,
                               Window window) const {
  SegmentProfile p, up;
  HangKind kind, up_kind;
  if (upstream == 0 || !hung_in(tid, window, &p, &kind) || kind != HangKind::LongWait) return false;
  if (!same_wait(p.longest_block_call, baseline_wait)) return false;
  return upstream == hang_tid || visited_threads_.count(upstream) ||
         hung_in(upstream, window, &up, &up_kind);
}

}  // namespace cw::engine::diagnose_detail
