// Auto's candidates and its choice among them (docs/diagnosis.md, "The symptom"): the main
// and event-loop threads of the recorded command (or the threads of a name), their
// stretches around a marker when there is one, each thread's longest ranked; or the
// stretch of the thread and time the user gave.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "base/parallel.h"
#include "engine/diagnosis/symptom_finder.h"
#include "trace/command_marker.h"

namespace cw::engine::symptom_detail {

namespace {

// How many thread names an error lists.
constexpr size_t kThreadsListed = 5;

std::string seconds(uint64_t ns, uint64_t t0) {
  return fmt::format("{:.3f} s", static_cast<double>(ns - std::min(ns, t0)) / 1e9);
}

// Seconds with as many decimals as needed (up to ns), for echoing `--hang TID@SECONDS`.
std::string short_seconds(uint64_t ns) {
  std::string s = fmt::format("{}.{:09}", ns / 1'000'000'000, ns % 1'000'000'000);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string count_of(size_t n, std::string_view what) {
  return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

// "2 main threads", "1 event-loop thread", "2 main threads and 1 event-loop thread": the
// counts of the kinds there are.
std::string threads_of(size_t mains, size_t loops) {
  if (loops == 0) return count_of(mains, "main thread");
  if (mains == 0) return count_of(loops, "event-loop thread");
  return count_of(mains, "main thread") + " and " + count_of(loops, "event-loop thread");
}

std::string secs_of(uint64_t ns) {
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

}  // namespace

// The user's markers, and the recorded command's process from the recorder's own marker
// (`record -- CMD`): only that process and its descendants are candidates.
void Finder::read_markers() {
  if (marker_ == kNoKind || marker_text_ < 0) return;
  for (uint32_t i : marker_events(trace_, marker_)) {
    const Event& e = trace_.events[i];
    std::string_view text = trace_.strings.get(static_cast<StrId>(trace_.value(e, marker_text_)));
    if (is_command_marker(text)) {  // the recorder's, not the user's
      if (Pid pid = command_marker_pid(text)) command_pid_ = pid;
      continue;
    }
    // The recorder's notes say how it recorded, not where the user saw a hang.
    if (is_recorder_note(text)) continue;
    markers_.push_back({e.ts, std::string(text)});
  }
}

// Whether `pid` is the recorded command's process or one of its descendants.
bool Finder::in_command(Pid pid) const {
  return command_pid_ == 0 || in_process_tree(trace_, pid, command_pid_);
}

// Whether process `pid` is a proper descendant of process `ancestor`.
bool Finder::descends_from(Pid pid, Pid ancestor) const {
  for (size_t hops = 0; pid != 0 && hops <= trace_.processes.size(); ++hops) {
    const ProcessInfo* p = trace_.process(pid);
    if (!p || p->ppid == pid) return false;
    pid = p->ppid;
    if (pid == ancestor) return true;
  }
  return false;
}

// The candidate threads' stretches into `pool`. False with `why` set when there is none.
bool Finder::gather(const std::string& thread_name, Pool& pool, std::string* why) {
  std::vector<const Graph::ThreadSegments*> chosen;
  named_ = !thread_name.empty();
  for (const Graph::ThreadSegments& t : g_.threads) {
    if (t.begin == t.end || t.tid == 0) continue;
    const ThreadInfo* info = trace_.thread(t.tid);
    const Pid pid = info ? info->pid : g_.segments[t.begin].pid;
    const bool loop = has_loop_cut(t);
    const bool main = t.tid == pid && !(info && info->kernel);
    if (named_) {
      if (thread_comm(trace_, t.tid, "?") != thread_name || !in_command(pid)) continue;
    } else if (!(main || loop) || !in_command(pid)) {
      continue;
    }
    ++(loop ? pool.loops : pool.mains);
    chosen.push_back(&t);
  }
  // A thread whose cuts are those of a search of a graph with the same edges has its
  // candidate already (ThreadRank); the others' stretches are found.
  pool.keeps_ranks = markers_.empty();
  pool.threads.resize(chosen.size());
  pool.reused.assign(chosen.size(), false);
  std::vector<size_t> search;
  for (size_t i = 0; i < chosen.size(); ++i) {
    ThreadRank& r = pool.threads[i];
    r.tid = chosen[i]->tid;
    r.segments = chosen[i]->end - chosen[i]->begin;
    if (!pool.keeps_ranks) {
      search.push_back(i);
      continue;
    }
    r.cuts = cuts_of(*chosen[i]);
    if (reuse(*chosen[i], r.cuts, r))
      pool.reused[i] = true;
    else
      search.push_back(i);
  }
  reused_ = chosen.size() - search.size();
  // Each thread's stretches read the graph only: they are found on every CPU, into one
  // slot per thread, in thread order (the same stretches in the same order as one thread
  // would find them). Without markers a thread's candidate is its own: it is ranked as
  // soon as its stretches are found, and they are let go (only the CPUs' current threads'
  // are held at once).
  if (!search.empty()) prepare_shared_lookups();
  const bool rank_early = pool.keeps_ranks;  // no markers
  std::vector<std::vector<Stretch>> per_thread(search.size());
  std::vector<std::optional<HangCandidate>> early(rank_early ? search.size() : 0);
  parallel_for(search.size(), [&](size_t i) {
    per_thread[i] = stretches(*chosen[search[i]]);
    if (rank_early && !per_thread[i].empty()) {
      early[i] = rank_run(per_thread[i]);
      std::vector<Stretch>().swap(per_thread[i]);
    }
  });
  for (auto& s : per_thread)
    if (!s.empty()) pool.runs.push_back(std::move(s));
  for (auto& c : early)
    if (c) pool.ranked.push_back(std::move(*c));
  bool reused_stretch = false;
  for (size_t i = 0; i < chosen.size(); ++i)
    reused_stretch = reused_stretch || (pool.reused[i] && pool.threads[i].has_stretch);
  pool.whose =
      command_pid_
          ? fmt::format(" of process {} and its descendants (the recorded command)", command_pid_)
          : std::string();
  if (pool.mains + pool.loops == 0) {
    *why = thread_name.empty()
               ? "no main thread or event-loop thread" + pool.whose + " in the trace"
               : "no thread named '" + thread_name + "'" + pool.whose + " in the trace";
    return false;
  }
  if (pool.runs.empty() && pool.ranked.empty() && !reused_stretch) {
    *why = fmt::format("no stretch of work in {}{}: every thread was idle in its loop",
                       threads_of(pool.mains, pool.loops), pool.whose);
    return false;
  }
  // With markers, only the stretches holding one, if any does.
  if (!markers_.empty()) {
    std::vector<std::vector<Stretch>> marked;
    for (const std::vector<Stretch>& run : pool.runs) {
      std::vector<Stretch> kept;
      for (const Stretch& s : run)
        if (marker_in(s)) kept.push_back(s);
      if (!kept.empty()) marked.push_back(std::move(kept));
    }
    if (!marked.empty()) pool.runs = std::move(marked);
  }
  return true;
}

const Finder::Marker* Finder::marker_in(const Stretch& s) const {
  for (const Marker& m : markers_)
    if (m.ts >= s.start_ns && m.ts <= s.end_ns) return &m;
  return nullptr;
}

// The longest time without a response: a blocked stretch counts its longest wait (a
// client waiting on a server encloses the server's own wait, and wins over it; the
// time a thread spent finishing up or exiting after its wait does not count), any
// other its length. A score never exceeds the length, so each thread's stretches are
// profiled longest first until no shorter one can win.
HangCandidate Finder::rank_run(std::vector<Stretch>& run) const {
  std::stable_sort(run.begin(), run.end(), [](const Stretch& a, const Stretch& b) {
    const uint64_t da = a.end_ns - a.start_ns, db = b.end_ns - b.start_ns;
    if (da != db) return da > db;
    return a.start_ns < b.start_ns;
  });
  const Stretch* best = nullptr;
  uint64_t best_score = 0;
  SegmentProfile best_profile;  // the best's, and its kind: its hang is made of them
  HangKind best_kind = HangKind::LongRunning;
  for (const Stretch& s : run) {
    if (best && s.end_ns - s.start_ns <= best_score) continue;
    SegmentProfile p = profile_range(trace_, ev_, s.tid, s.start_ns, s.end_ns);
    uint64_t waited = 0;
    const HangKind kind = kind_of(s, p, &waited);
    const uint64_t score = kind == HangKind::LongWait ? waited : s.end_ns - s.start_ns;
    if (!best || score > best_score) {
      best = &s;
      best_score = score;
      best_profile = std::move(p);
      best_kind = kind;
    }
  }
  HangCandidate c;
  c.hang = make_hang(*best, "", std::move(best_profile), best_kind);
  c.score_ns = best_score;
  c.by_design = by_design(*best, c.hang, &c.woken_by);
  return c;
}

namespace {

// A candidate's segments counted from `base` (kNoIndex stays).
void shift_segments(Hang& h, uint32_t base, bool up) {
  for (uint32_t* s : {&h.segment, &h.first_segment, &h.last_segment})
    if (*s != kNoIndex) *s = up ? *s + base : *s - base;
}

// splitmix64's finaliser: one 64-bit word mixed into the hash.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

// The thread's cuts as a ThreadRank keeps them: where each of its segments starts, and
// which start at a loop cut (what its stretches are made of).
uint64_t Finder::cuts_of(const Graph::ThreadSegments& t) const {
  uint64_t h = mix(t.end - t.begin);
  for (uint32_t s = t.begin; s < t.end; ++s)
    h = mix(h ^ ((uint64_t{g_.segments[s].first} << 1) | (is_loop_cut(g_, s) ? 1 : 0)));
  return h;
}

// Fills `rank` (its tid, segments and cuts set) from before_'s rank of the same thread with
// the same cuts, its segments numbered in this graph. False when there is none.
bool Finder::reuse(const Graph::ThreadSegments& t, uint64_t cuts, ThreadRank& rank) const {
  if (!before_) return false;
  auto it = std::lower_bound(before_->begin(), before_->end(), t.tid,
                             [](const ThreadRank& r, Tid tid) { return r.tid < tid; });
  if (it == before_->end() || it->tid != t.tid || it->segments != rank.segments || it->cuts != cuts)
    return false;
  if (it->has_stretch) {
    const Hang& h = it->candidate.hang;
    // (The entry that kept it was checked against the trace, not against this graph.)
    if (h.tid != t.tid || h.first_segment > h.segment || h.segment > h.last_segment ||
        h.last_segment >= rank.segments)
      return false;
    rank.candidate = it->candidate;
    shift_segments(rank.candidate.hang, t.begin, true);
  }
  rank.has_stretch = it->has_stretch;
  return true;
}

// The searched threads' candidates (rank_run), the reused ones, best first; every
// thread's rank kept in after_.
std::vector<HangCandidate> Finder::rank(Pool& pool) const {
  // One candidate per thread with stretches, in thread order: ranked as found, or each
  // run of stretches (what markers left) ranked on its own, on every CPU.
  std::vector<HangCandidate> out = std::move(pool.ranked);
  if (!pool.runs.empty()) {
    std::vector<HangCandidate> of_runs(pool.runs.size());
    parallel_for(of_runs.size(), [&](size_t r) { of_runs[r] = rank_run(pool.runs[r]); });
    out.insert(out.end(), std::make_move_iterator(of_runs.begin()),
               std::make_move_iterator(of_runs.end()));
  }
  pool.runs.clear();
  std::unordered_map<Tid, size_t> found;
  for (size_t k = 0; k < out.size(); ++k) found.emplace(out[k].hang.tid, k);
  for (size_t i = 0; i < pool.threads.size(); ++i) {
    ThreadRank& r = pool.threads[i];
    if (pool.reused[i]) continue;
    auto it = found.find(r.tid);
    r.has_stretch = it != found.end();
    if (r.has_stretch) r.candidate = out[it->second];
  }
  for (size_t i = 0; i < pool.threads.size(); ++i)
    if (pool.reused[i] && pool.threads[i].has_stretch) out.push_back(pool.threads[i].candidate);
  if (after_ && pool.keeps_ranks) {
    after_->clear();
    for (size_t i = 0; i < pool.threads.size(); ++i) {
      ThreadRank r = pool.threads[i];
      if (r.has_stretch) {
        const Graph::ThreadSegments* t = g_.thread_segments(r.tid);
        shift_segments(r.candidate.hang, t->begin, false);
      }
      after_->push_back(std::move(r));
    }
    std::sort(after_->begin(), after_->end(),
              [](const ThreadRank& a, const ThreadRank& b) { return a.tid < b.tid; });
  }
  std::stable_sort(out.begin(), out.end(), [](const HangCandidate& a, const HangCandidate& b) {
    if (a.by_design.empty() != b.by_design.empty()) return a.by_design.empty();
    if (a.score_ns != b.score_ns) return a.score_ns > b.score_ns;
    return a.hang.start_ns != b.hang.start_ns ? a.hang.start_ns < b.hang.start_ns
                                              : a.hang.tid < b.hang.tid;
  });
  return out;
}

std::vector<HangCandidate> Finder::list(const SymptomRequest& request, std::string* why) {
  Pool pool;
  if (!gather(request.thread_name, pool, why)) return {};
  auto ranked = rank(pool);
  for (HangCandidate& c : ranked) {
    c.hang_arg = fmt::format("{}@{}", c.hang.tid,
                             short_seconds(c.hang.start_ns - std::min(c.hang.start_ns, t0_)));
    c.hang.chosen_by = "--hang " + c.hang_arg;
  }
  return ranked;
}

std::optional<Hang> Finder::find_auto(const SymptomRequest& request, std::string* why,
                                      bool* no_hang) {
  const std::string& thread_name = request.thread_name;
  Pool pool;
  if (!gather(thread_name, pool, why)) return std::nullopt;
  const auto ranked = rank(pool);
  const HangCandidate* best_candidate = &ranked.front();
  // By name, the user named the program they ran: a process of that name that another
  // candidate of that name forked (a subshell, a helper re-executing itself) is part of
  // what that one waits for while their stretches overlap; the ancestor is the hang when
  // it went without a response for at least half as long (a shell's command substitution
  // reads what its subshell's pipeline writes, and either may wait a little longer).
  std::string over_descendant;
  if (!thread_name.empty() && best_candidate->by_design.empty()) {
    for (bool moved = true; moved;) {
      moved = false;
      for (const HangCandidate& c : ranked) {
        const Hang& h = best_candidate->hang;
        if (&c == best_candidate || !c.by_design.empty() || c.hang.pid == h.pid ||
            2 * c.score_ns < best_candidate->score_ns || c.hang.start_ns >= h.end_ns ||
            h.start_ns >= c.hang.end_ns || !descends_from(h.pid, c.hang.pid))
          continue;
        if (over_descendant.empty())
          over_descendant =
              fmt::format("; preferred over its descendant {} {} ({:.3f} s)", comm(h.tid), h.tid,
                          static_cast<double>(best_candidate->score_ns) / 1e9);
        best_candidate = &c;
        moved = true;
        break;
      }
    }
  }
  const HangCandidate& top = *best_candidate;
  if (top.score_ns < request.min_hang_ns) {
    if (no_hang) *no_hang = true;
    *why = fmt::format(
        "no hang found: the longest time a candidate thread went without a response was {} "
        "({} {}, {} at {}), under the {} threshold (--min-hang)",
        secs_of(top.score_ns), comm(top.hang.tid), top.hang.tid, hang_kind_name(top.hang.kind),
        seconds(top.hang.start_ns, t0_), secs_of(request.min_hang_ns));
    return std::nullopt;
  }
  // Candidates that wait by design and would have won on time alone.
  std::string passed;
  size_t passed_over = 0;
  for (const HangCandidate& c : ranked) {
    if (c.by_design.empty() || c.score_ns <= top.score_ns) continue;
    if (passed_over++ == 0)
      passed = fmt::format("{} {}: {}", comm(c.hang.tid), c.hang.tid, c.by_design);
  }
  const Stretch best{top.hang.tid, top.hang.start_ns, top.hang.end_ns, top.hang.first_segment,
                     top.hang.last_segment};
  const Marker* marker = marker_in(best);
  std::string how = marker ? fmt::format("marker \"{}\" at {}: longest stretch holding it",
                                         marker->text, seconds(marker->ts, t0_))
                           : std::string("auto: longest stretch");
  std::string chosen =
      !thread_name.empty()
          ? fmt::format("{} of {} named {}{} ({}: {:.3f} s)", how,
                        count_of(pool.mains + pool.loops, "thread"), thread_name, pool.whose,
                        best.tid, static_cast<double>(best.end_ns - best.start_ns) / 1e9)
          : fmt::format("{} of {}{} ({} {}: {:.3f} s)", how, threads_of(pool.mains, pool.loops),
                        pool.whose, comm(best.tid), best.tid,
                        static_cast<double>(best.end_ns - best.start_ns) / 1e9);
  chosen += over_descendant;
  if (passed_over > 0)
    chosen += fmt::format("; ranked above {} that wait{} by design ({}{})",
                          count_of(passed_over, "longer thread"), passed_over == 1 ? "s" : "",
                          passed, passed_over > 1 ? ", …" : "");
  Hang h = top.hang;
  h.chosen_by = std::move(chosen);
  return h;
}

std::optional<Hang> Finder::find_at(const SymptomRequest& r, std::string* why) {
  const Graph::ThreadSegments* t = g_.thread_segments(r.tid);
  if (!t || t->begin == t->end) {
    std::string list;
    size_t listed = 0;
    for (const Graph::ThreadSegments& th : g_.threads) {
      if (th.begin == th.end) continue;
      if (listed == kThreadsListed) {
        list += ", …";
        break;
      }
      list += fmt::format("{}{} {}", listed ? ", " : "", th.tid, comm(th.tid));
      ++listed;
    }
    *why = fmt::format("no thread {} in the trace (threads: {})", r.tid,
                       list.empty() ? std::string("none") : list);
    return std::nullopt;
  }
  const uint64_t begin = g_.segments[t->begin].start_ns, end = thread_end(*t);
  if (r.at_ns < begin || r.at_ns > end) {
    *why = fmt::format("thread {} ({}) was not alive at {}: its events run from {} to {}", r.tid,
                       comm(r.tid), seconds(r.at_ns, t0_), seconds(begin, t0_), seconds(end, t0_));
    return std::nullopt;
  }
  const std::string how =
      fmt::format("--hang {}@{}", r.tid, short_seconds(r.at_ns - std::min(r.at_ns, t0_)));
  prepare_shared_lookups();
  const std::vector<Stretch> found = stretches(*t);
  for (const Stretch& s : found)
    if (s.start_ns <= r.at_ns && r.at_ns < s.end_ns) return make_hang(s, how);
  for (const Stretch& s : found)
    if (s.start_ns <= r.at_ns && r.at_ns <= s.end_ns) return make_hang(s, how);
  // Idle in its loop at that time: the segment holding it.
  uint32_t seg = t->begin;
  for (uint32_t s = t->begin; s < t->end; ++s)
    if (g_.segments[s].start_ns <= r.at_ns) seg = s;
  return make_hang({r.tid, g_.segments[seg].start_ns, segment_end(*t, seg), seg, seg}, how);
}

}  // namespace cw::engine::symptom_detail
