#include "engine/diagnosis/symptom.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <utility>

#include "base/parallel.h"
#include "base/terminal_text.h"
#include "engine/diagnosis/logical_wait.h"
#include "trace/command_marker.h"
#include "trace/names.h"

namespace cw::engine {
namespace {

// A run of 8 or more short segments that start with the same system call and that no
// other thread caused is one stretch: a yield or sleep loop.
constexpr size_t kMinMergedRun = 8;
// A segment with this many system calls, at least half of them one call, is a yield loop
// on its own (classify() then says RepeatedYield).
constexpr uint32_t kYieldCalls = 16;
// How many of a thread's last events are searched for its exit, at most.
constexpr size_t kExitWithin = 1u << 16;
// A thread that spent less than this on a CPU outside its one wait did no work.
constexpr uint64_t kIdleCpuNs = 5'000'000;
// How many thread names an error lists.
constexpr size_t kThreadsListed = 5;

struct Stretch {
  Tid tid = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t first = kNoIndex, last = kNoIndex;  // segments
};

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

class Finder {
 public:
  Finder(const Trace& trace, const Graph& graph, const ThreadEvents& events)
      : trace_(trace),
        g_(graph),
        ev_(events),
        enter_(trace.schema.find("syscall_enter")),
        exit_(trace.schema.find("syscall_exit")),
        marker_(trace.schema.find("marker")),
        thread_exit_(trace.schema.find("exit")),
        call_enter_(trace.schema.find("call_enter")),
        call_exit_(trace.schema.find("call_exit")),
        send_(trace.schema.find("send")),
        recv_(trace.schema.find("recv")),
        enter_name_(enter_ == kNoKind ? -1 : trace.schema.field_index(enter_, "name")),
        enter_fd_(enter_ == kNoKind ? -1 : trace.schema.field_index(enter_, "fd")),
        enter_resource_(enter_ == kNoKind ? -1 : trace.schema.field_index(enter_, "resource")),
        exit_ret_(exit_ == kNoKind ? -1 : trace.schema.field_index(exit_, "ret")),
        marker_text_(marker_ == kNoKind ? -1 : trace.schema.field_index(marker_, "text")),
        t0_(trace_start_ns(trace)),
        trace_end_(trace.events.empty() ? 0 : trace.events.back().ts) {
    read_markers();
  }

  std::vector<HangCandidate> candidates(const SymptomRequest& request, std::string* why) {
    return list(request, why);
  }

  std::optional<Hang> find(const SymptomRequest& request, std::string* why, bool* no_hang) {
    std::string error;
    auto hang = request.mode == SymptomRequest::Mode::Auto ? find_auto(request, &error, no_hang)
                                                           : find_at(request, &error);
    if (!hang && why) *why = std::move(error);
    return hang;
  }

 private:
  struct Marker {
    uint64_t ts;
    std::string text;
  };

  // ---- markers and candidates -------------------------------------------------------

  void read_markers() {
    if (marker_ == kNoKind || marker_text_ < 0) return;
    for (const Event& e : trace_.events) {
      if (e.kind != marker_) continue;
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
  bool in_command(Pid pid) const {
    return command_pid_ == 0 || in_process_tree(trace_, pid, command_pid_);
  }

  // Whether process `pid` is a proper descendant of process `ancestor`.
  bool descends_from(Pid pid, Pid ancestor) const {
    for (size_t hops = 0; pid != 0 && hops <= trace_.processes.size(); ++hops) {
      const ProcessInfo* p = trace_.process(pid);
      if (!p || p->ppid == pid) return false;
      pid = p->ppid;
      if (pid == ancestor) return true;
    }
    return false;
  }

  bool has_loop_cut(const Graph::ThreadSegments& t) const {
    for (uint32_t s = t.begin; s < t.end; ++s)
      if (is_loop_cut(g_, s)) return true;
    return false;
  }

  // For messages: a name's control bytes shown as \xNN (matching uses the raw comm).
  std::string comm(Tid tid) const { return terminal_text(thread_comm(trace_, tid, "?")); }

  // ---- stretches ----------------------------------------------------------------------

  // When the thread's life ends for diagnosis: its exit, or the end of the recording (a
  // thread still blocked or busy then is the hang still going on).
  // The exit event follows the thread's last system call and function call; after it come
  // only the kernel's own work on its behalf: on a loaded machine, dozens of preemptions
  // while its memory is torn down, an interrupt, the parent's SIGCHLD. So the search goes
  // back over those, and stops at the first thing the program itself did.
  uint64_t thread_end(const Graph::ThreadSegments& t) const {
    const auto& list = ev_.of(t.tid);
    uint64_t end = std::max(trace_end_, g_.segments[t.end - 1].end_ns);
    if (thread_exit_ != kNoKind) {
      const size_t stop = list.size() - std::min(list.size(), kExitWithin);
      for (size_t i = list.size(); i > stop; --i) {
        const KindId k = trace_.events[list[i - 1]].kind;
        if (k == thread_exit_) {
          end = trace_.events[list.back()].ts;
          break;
        }
        if (program_activity(k)) break;
      }
    }
    return end;
  }

  // Whether an event of kind `k` is something the program did (a system or function call,
  // a message), which a thread that has exited can no longer do.
  bool program_activity(KindId k) const {
    return k != kNoKind && (k == enter_ || k == exit_ || k == call_enter_ || k == call_exit_ ||
                            k == send_ || k == recv_);
  }

  uint64_t segment_end(const Graph::ThreadSegments& t, uint32_t s) const {
    return s + 1 == t.end ? thread_end(t) : g_.segments[s].end_ns;
  }

  bool opens_call(uint32_t s) const {
    return enter_ != kNoKind && trace_.events[g_.segments[s].first].kind == enter_;
  }

  // The syscall_exit that closes the syscall_enter opening segment `s`, or kNoIndex.
  uint32_t wait_return(uint32_t s) const {
    const Segment& seg = g_.segments[s];
    if (!opens_call(s)) return kNoIndex;
    const auto& calls = ev_.syscalls_of(seg.tid);
    auto it = std::upper_bound(calls.begin(), calls.end(), seg.first);
    if (it == calls.end() || trace_.events[*it].kind != exit_) return kNoIndex;
    return *it;
  }

  // Which process of a pair reached the other first by a causal (not weak) edge: the one
  // that opened the conversation is the client of the other. Keyed by the pair, lower pid
  // first; computed once, on first use.
  Pid initiator(Pid a, Pid b) const {
    if (first_contact_.empty() && !g_.edges.empty()) {
      first_contact_[0] = {0, 0};  // computed, even when no pair is found
      for (const Edge& e : g_.edges) {
        const Pid from = g_.segments[e.from].pid, to = g_.segments[e.to].pid;
        if (e.strength == Strength::Weak || from == to) continue;
        const uint64_t ts = trace_.events[e.from_event].ts;
        auto [it, fresh] = first_contact_.try_emplace(pair_key(from, to), ts, from);
        if (!fresh && ts < it->second.first) it->second = {ts, from};
      }
    }
    auto it = first_contact_.find(pair_key(a, b));
    return it == first_contact_.end() ? 0 : it->second.second;
  }
  static uint64_t pair_key(Pid a, Pid b) {
    return (uint64_t{std::min(a, b)} << 32) | std::max(a, b);
  }

  // A process the thread asked something of, and when its request reached it: the latest
  // arrival of the thread's causal edges into that process (a request sent in several
  // writes is whole when its last one is read).
  struct Asked {
    Pid pid = 0;
    uint64_t arrived_ns = 0;
  };

  // The processes the thread asked something of in segments [first, last], added to
  // `asked`: a causal (not weak) edge out to a process its own process had opened the
  // conversation with. A server's answers to its clients are no requests: the clients
  // spoke first.
  void asked_in(uint32_t first, uint32_t last, std::vector<Asked>& asked) const {
    for (uint32_t s = first; s <= last; ++s) {
      const Pid own = g_.segments[s].pid;
      for (auto [it, end] = out_edges(s, g_.csr); it != end; ++it) {
        const Edge& e = g_.edges[g_.csr[*it]];
        const Pid to = g_.segments[e.to].pid;
        if (e.strength == Strength::Weak || to == own || initiator(own, to) != own) continue;
        const uint64_t arrived = trace_.events[e.to_event].ts;
        auto a =
            std::find_if(asked.begin(), asked.end(), [&](const Asked& x) { return x.pid == to; });
        if (a == asked.end())
          asked.push_back({to, arrived});
        else
          a->arrived_ns = std::max(a->arrived_ns, arrived);
      }
    }
  }

  // How a wait in segments [first, last] ended, seen from the processes the thread is
  // waiting to hear from: by an answer from one of `asked` (taken out of it), by a causal
  // edge from another process (new work), or by no causal edge at all (a timeout). An
  // answer leaves its process after the request reached it: what the process sent before
  // it read the request (a notice of its own, the reply to an earlier call) answers
  // nothing, and the wait goes on (dbus-daemon's NameAcquired signal reached dbus-send
  // inside its wait for the reply to its method call, which came 1.2 s later).
  enum class WaitEnd : uint8_t { Answer, OtherWork, NoCause };
  WaitEnd wait_end(uint32_t first, uint32_t last, std::vector<Asked>& asked) const {
    WaitEnd end_kind = WaitEnd::NoCause;
    for (uint32_t s = first; s <= last; ++s)
      for (auto [it, end] = in_edges(s, g_.csr); it != end; ++it) {
        const Edge& e = g_.edges[g_.csr[*it]];
        const Pid from = g_.segments[e.from].pid;
        if (e.strength == Strength::Weak || from == g_.segments[s].pid) continue;
        auto a =
            std::find_if(asked.begin(), asked.end(), [&](const Asked& x) { return x.pid == from; });
        if (a == asked.end()) {
          end_kind = WaitEnd::OtherWork;
        } else if (trace_.events[e.from_event].ts >= a->arrived_ns) {
          asked.erase(a);
          return WaitEnd::Answer;
        }
      }
    return end_kind;
  }

  // A loop thread: from the return of each loop wait to the next loop cut, and the
  // thread's start before its first loop cut. A loop wait for the answer to a request the
  // thread made in the turn before it (a client polling its socket for the reply, a build
  // tool polling the pipes of the jobs it started) is no idle wait: it stays in the
  // stretch of that turn.
  void loop_stretches(const Graph::ThreadSegments& t, std::vector<Stretch>& out) const {
    std::vector<uint32_t> loops;
    for (uint32_t s = t.begin; s < t.end; ++s)
      if (is_loop_cut(g_, s)) loops.push_back(s);
    const uint64_t end_of_thread = thread_end(t);
    auto end_at = [&](size_t i) {
      return i + 1 < loops.size() ? g_.segments[loops[i + 1]].start_ns : end_of_thread;
    };
    auto last_at = [&](size_t i) { return i + 1 < loops.size() ? loops[i + 1] - 1 : t.end - 1; };
    const size_t before = out.size();
    std::vector<Asked> waiting_for;  // processes asked something that have not answered yet
    // A thread the user named whose loop wait timed out and was made again on the same
    // descriptors, until what it waited for came (one wait, in as many slices as its
    // timeouts make): not turns of a loop, but a program waiting for the thing it needs
    // (its input, its job's end). Such a wait is no idle turn. `retried[i]`: loop wait i
    // timed out and wait i + 1 is the same wait. A thread that never waits again for what
    // a wait of its loop was woken by (its inputs, one after the other, each once) is no
    // event loop either: each of its waits is for a thing it needs.
    std::vector<bool> retried(loops.size(), false);
    const bool waits_once = named_ && waits_in_sequence(loops);
    bool after_wait = false;  // the last stretch ended with a retried wait's answer
    for (size_t i = 0; named_ && i + 1 < loops.size(); ++i) {
      const uint32_t r = wait_return(loops[i]);
      retried[i] =
          opens_call(loops[i]) && opens_call(loops[i + 1]) &&
          same_wait(trace_, g_.segments[loops[i]].first, g_.segments[loops[i + 1]].first) &&
          r != kNoIndex && exit_ret_ >= 0 && trace_.int_value(trace_.events[r], exit_ret_) == 0;
    }
    if (loops.front() > t.begin)
      out.push_back({t.tid, g_.segments[t.begin].start_ns, g_.segments[loops.front()].start_ns,
                     t.begin, loops.front() - 1});
    for (size_t i = 0; i < loops.size(); ++i) {
      const uint64_t end = end_at(i);
      uint64_t start = g_.segments[loops[i]].start_ns;
      uint32_t first = loops[i];
      if (opens_call(loops[i])) {
        const uint32_t r = wait_return(loops[i]);
        const uint32_t turn = i == 0 ? t.begin : loops[i - 1];  // since the last loop wait
        const uint32_t woken =
            r == kNoIndex ? loops[i] : std::min(g_.segment_of(trace_, r), last_at(i));
        if (loops[i] > turn) asked_in(turn, loops[i] - 1, waiting_for);
        // Slices of one wait for an answer that time out (a poll with a timeout) are that
        // wait too, until the answer comes.
        const bool had_asked = !waiting_for.empty();
        const WaitEnd how = wait_end(loops[i], woken, waiting_for);
        const bool retry = i > 0 && retried[i - 1];  // the slice after one that timed out
        const bool one_wait = waits_once || retried[i] || retry;
        if (((had_asked && how != WaitEnd::OtherWork) || one_wait) && r != kNoIndex) {
          // A retried wait goes on the stretch of its first slice, which goes on the turn
          // that led to it, but not on the wait before (another input's, already answered).
          const bool joins = !one_wait || retry || !after_wait;
          if (joins && out.size() > before && out.back().last + 1 == loops[i]) {
            out.back().end_ns = end;
            out.back().last = last_at(i);
          } else {
            out.push_back({t.tid, start, end, first, last_at(i)});
          }
          after_wait = one_wait;
          continue;
        }
        // Idle: the wait had not returned when the recording stopped, or the loop moved on.
        after_wait = false;
        if (r == kNoIndex || trace_.events[r].ts > end) continue;
        // The user named this thread: a wait of its loop that another thread's event ended
        // (a follower of a file, woken by the write it waited for) is what the user may
        // have seen hang, as well as the turn after it; the longest of them is the hang.
        if (named_ && woken_by_other(loops[i], woken))
          out.push_back({t.tid, start, trace_.events[r].ts, first, woken});
        start = trace_.events[r].ts;
        first = std::min(g_.segment_of(trace_, r), last_at(i));
      }
      after_wait = false;
      out.push_back({t.tid, start, end, first, last_at(i)});
    }
  }

  // Whether a strong edge from another thread lands in segments [first, last] (a wait's
  // slices, up to the one it returned in).
  bool woken_by_other(uint32_t first, uint32_t last) const {
    for (uint32_t s = first; s <= last; ++s)
      if (strong_in_[s]) return true;
    return false;
  }

  // Whether each of `loops` (a thread's loop cuts) opens a wait, and no wait that returned
  // with something (not a timeout) is waited again later: the thread waits for its inputs
  // in turn, not in an event loop. (Bounded: a thread with many loop waits is a loop.)
  bool waits_in_sequence(const std::vector<uint32_t>& loops) const {
    constexpr size_t kMaxSequence = 64;
    if (loops.empty() || loops.size() > kMaxSequence || exit_ret_ < 0) return false;
    for (size_t i = 0; i < loops.size(); ++i) {
      if (!opens_call(loops[i])) return false;
      const uint32_t r = wait_return(loops[i]);
      if (r == kNoIndex || i + 1 == loops.size()) continue;
      if (trace_.int_value(trace_.events[r], exit_ret_) == 0) continue;  // timed out
      for (size_t j = i + 1; j < loops.size(); ++j)
        if (same_wait(trace_, g_.segments[loops[i]].first, g_.segments[loops[j]].first))
          return false;
    }
    return true;
  }

  // A thread without loop cuts: every segment, except that a run of segments repeating
  // one system call that no other thread caused is one stretch.
  void segment_stretches(const Graph::ThreadSegments& t, std::vector<Stretch>& out) const {
    constexpr StrId kNone = StringTable::kMissing;
    const uint32_t n = t.end - t.begin;
    std::vector<StrId> key(n, kNone);
    std::vector<bool> yielding(n, false);
    const auto& calls = ev_.syscalls_of(t.tid);  // enters and exits, in order
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t s = t.begin + i;
      // Only a segment with enough calls can be a yield loop by itself: count them (two
      // binary searches) before profiling it.
      const auto lo = std::lower_bound(calls.begin(), calls.end(), g_.segments[s].first);
      const auto hi = std::upper_bound(lo, calls.end(), g_.segments[s].last);
      const bool many = static_cast<uint32_t>(hi - lo) >= kYieldCalls;
      const SegmentProfile p = many ? profile_segment(trace_, ev_, g_, s) : SegmentProfile{};
      if (many && p.syscalls >= kYieldCalls && !p.by_name.empty() &&
          2 * p.by_name.front().count >= p.syscalls) {
        yielding[i] = true;
        key[i] = p.by_name.front().name;
      } else if (const Event& first = trace_.events[g_.segments[s].first];
                 enter_ != kNoKind && first.kind == enter_ && enter_name_ >= 0) {
        key[i] = static_cast<StrId>(trace_.value(first, enter_name_));
      }
      if (strong_in_[s]) key[i] = kNone;
    }
    for (uint32_t i = 0; i < n;) {
      uint32_t j = i + 1;
      bool any_yielding = yielding[i];
      if (key[i] != kNone) {
        for (; j < n && key[j] == key[i]; ++j) any_yielding = any_yielding || yielding[j];
      }
      const bool merge = j - i >= kMinMergedRun || (j - i > 1 && any_yielding);
      if (merge) {
        const uint32_t first = t.begin + i, last = t.begin + j - 1;
        out.push_back({t.tid, g_.segments[first].start_ns, segment_end(t, last), first, last});
      } else {
        for (uint32_t k = i; k < j; ++k) {
          const uint32_t s = t.begin + k;
          out.push_back({t.tid, g_.segments[s].start_ns, segment_end(t, s), s, s});
        }
      }
      i = j;
    }
  }

  // Const once prepare_shared_lookups() has run, so threads may call it side by side.
  std::vector<Stretch> stretches(const Graph::ThreadSegments& t) const {
    std::vector<Stretch> out;
    if (t.begin == t.end) return out;
    if (has_loop_cut(t))
      loop_stretches(t, out);
    else
      segment_stretches(t, out);
    return out;
  }

  // The lookups stretches() shares between threads, made once before any of them runs:
  // which segments have an incoming strong edge from another thread, and who opened each
  // conversation between two processes (initiator()).
  void prepare_shared_lookups() {
    mark_strong_in();
    initiator(0, 0);
  }

  void mark_strong_in() {
    if (!strong_in_.empty() || g_.segments.empty()) return;
    strong_in_.assign(g_.segments.size(), false);
    for (const Edge& e : g_.edges)
      if (e.strength == Strength::Strong && g_.segments[e.from].tid != g_.segments[e.to].tid)
        strong_in_[e.to] = true;
  }

  // ---- the hang -----------------------------------------------------------------------

  // What the stretch was, and how long it went without a response. classify() reads the
  // profile alone: a wait retried after timeouts (a poll with a timeout on the same
  // descriptors, a timed futex wait) looks like a loop of calls there. It is one wait when
  // its slices are one logical wait that another thread's edge ended and that takes most
  // of the stretch: a LongWait lasting from its first slice to that wake-up. A loop whose
  // slices all timed out, or that polls a data flag between its waits, stays a yield loop.
  HangKind kind_of(const Stretch& st, const SegmentProfile& p, uint64_t* waited = nullptr) const {
    const HangKind k = classify(p);
    if (waited) *waited = k == HangKind::LongWait ? p.longest_block_ns : 0;
    // A stretch classified LongWait by its blocked time may be slices too (a shell's
    // `read -t` loop: each slice's look costs calls of other names): its wait is the
    // logical wait, not its longest slice.
    const uint64_t stretch = p.end_ns - std::min(p.end_ns, p.start_ns);
    if (k == HangKind::LongRunning ||
        (k == HangKind::LongWait && (p.blocks < 2 || 2 * p.longest_block_ns >= stretch)))
      return k;
    uint32_t seg = st.first;
    for (uint32_t s = st.first; s <= st.last; ++s)
      if (g_.segments[s].start_ns <= p.longest_block_start) seg = s;
    // (A loop that reads a data flag between its waits polls the flag, a pack declared it:
    // the flag's writer ends it, not the waits' wake-ups; retried_wait says no.)
    const LogicalWait lw = retried_wait(trace_, ev_, g_, seg, p);
    if (lw.wake_edge == kNoIndex) return k;
    const uint64_t length = lw.end_ns - std::min(lw.end_ns, lw.start_ns);
    if (waited) *waited = std::max(length, p.longest_block_ns);
    return HangKind::LongWait;
  }

  Hang make_hang(const Stretch& st, std::string chosen_by) const {
    Hang h;
    h.tid = st.tid;
    h.pid = g_.segments[st.first].pid;
    h.start_ns = st.start_ns;
    h.end_ns = st.end_ns;
    h.first_segment = st.first;
    h.last_segment = st.last;
    h.profile = profile_range(trace_, ev_, st.tid, st.start_ns, st.end_ns);
    h.kind = kind_of(st, h.profile);
    h.chosen_by = std::move(chosen_by);
    h.segment = st.first;
    switch (h.kind) {
      case HangKind::RepeatedYield: break;
      case HangKind::LongWait:
        if (h.profile.longest_block_ns > 0) {
          // The last of the stretch's segments starting at or before the block.
          for (uint32_t s = st.first; s <= st.last; ++s)
            if (g_.segments[s].start_ns <= h.profile.longest_block_start) h.segment = s;
        }
        break;
      case HangKind::LongRunning: {
        const Graph::ThreadSegments* t = g_.thread_segments(st.tid);
        uint64_t best = 0;
        for (uint32_t s = st.first; s <= st.last; ++s) {
          const uint64_t from = std::max(g_.segments[s].start_ns, st.start_ns);
          const uint64_t to = std::min(s == st.last ? st.end_ns : segment_end(*t, s), st.end_ns);
          if (to <= from) continue;
          const SegmentProfile p = profile_range(trace_, ev_, st.tid, from, to);
          if (p.on_cpu_ns + p.runnable_ns > best) {
            best = p.on_cpu_ns + p.runnable_ns;
            h.segment = s;
          }
        }
        break;
      }
    }
    return h;
  }

  // "2 main threads", "1 event-loop thread", "2 main threads and 1 event-loop thread": the
  // counts of the kinds there are.
  static std::string threads_of(size_t mains, size_t loops) {
    if (loops == 0) return count_of(mains, "main thread");
    if (mains == 0) return count_of(loops, "event-loop thread");
    return count_of(mains, "main thread") + " and " + count_of(loops, "event-loop thread");
  }

  static std::string count_of(size_t n, std::string_view what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
  }

  // The candidate stretches for auto: every stretch of the candidate threads (main or
  // loop threads of the recorded command, or the threads named `thread_name`), only those
  // around a marker when some are. False with `why` set when there is none.
  struct Pool {
    std::vector<Stretch> all;
    size_t mains = 0, loops = 0;
    std::string whose;  // " of process P and its descendants (the recorded command)"
  };
  bool gather(const std::string& thread_name, Pool& pool, std::string* why) {
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
    // Each thread's stretches read the graph only: they are found on every CPU, into one
    // slot per thread, and joined in thread order (the same stretches in the same order
    // as one thread would find them).
    prepare_shared_lookups();
    std::vector<std::vector<Stretch>> per_thread(chosen.size());
    parallel_for(chosen.size(), [&](size_t i) { per_thread[i] = stretches(*chosen[i]); });
    for (const auto& s : per_thread) pool.all.insert(pool.all.end(), s.begin(), s.end());
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
    if (pool.all.empty()) {
      *why = fmt::format("no stretch of work in {}{}: every thread was idle in its loop",
                         threads_of(pool.mains, pool.loops), pool.whose);
      return false;
    }
    // With markers, only the stretches holding one, if any does.
    if (!markers_.empty()) {
      std::vector<Stretch> marked;
      for (const Stretch& s : pool.all)
        if (marker_in(s)) marked.push_back(s);
      if (!marked.empty()) pool.all = std::move(marked);
    }
    return true;
  }

  const Marker* marker_in(const Stretch& s) const {
    for (const Marker& m : markers_)
      if (m.ts >= s.start_ns && m.ts <= s.end_ns) return &m;
    return nullptr;
  }

  // The longest time without a response: a blocked stretch counts its longest wait (a
  // client waiting on a server encloses the server's own wait, and wins over it; the
  // time a thread spent finishing up or exiting after its wait does not count), any
  // other its length. A score never exceeds the length, so each thread's stretches are
  // profiled longest first until no shorter one can win.
  std::vector<HangCandidate> rank(std::vector<Stretch> all) const {
    std::stable_sort(all.begin(), all.end(), [](const Stretch& a, const Stretch& b) {
      if (a.tid != b.tid) return a.tid < b.tid;
      const uint64_t da = a.end_ns - a.start_ns, db = b.end_ns - b.start_ns;
      if (da != db) return da > db;
      return a.start_ns < b.start_ns;
    });
    // One candidate per thread: the threads' stretches are runs of `all`, each ranked on
    // its own, on every CPU, into one slot per thread.
    std::vector<size_t> run_begin;
    for (size_t i = 0; i < all.size(); ++i)
      if (i == 0 || all[i].tid != all[i - 1].tid) run_begin.push_back(i);
    run_begin.push_back(all.size());
    std::vector<HangCandidate> out(run_begin.size() - 1);
    parallel_for(out.size(), [&](size_t r) {
      const Stretch* best = nullptr;
      uint64_t best_score = 0;
      for (size_t j = run_begin[r]; j < run_begin[r + 1]; ++j) {
        const Stretch& s = all[j];
        if (best && s.end_ns - s.start_ns <= best_score) continue;
        const SegmentProfile p = profile_range(trace_, ev_, s.tid, s.start_ns, s.end_ns);
        uint64_t waited = 0;
        const uint64_t score =
            kind_of(s, p, &waited) == HangKind::LongWait ? waited : s.end_ns - s.start_ns;
        if (!best || score > best_score) {
          best = &s;
          best_score = score;
        }
      }
      HangCandidate& c = out[r];
      c.hang = make_hang(*best, "");
      c.score_ns = best_score;
      c.by_design = by_design(*best, c.hang, &c.woken_by);
    });
    std::stable_sort(out.begin(), out.end(), [](const HangCandidate& a, const HangCandidate& b) {
      if (a.by_design.empty() != b.by_design.empty()) return a.by_design.empty();
      if (a.score_ns != b.score_ns) return a.score_ns > b.score_ns;
      return a.hang.start_ns != b.hang.start_ns ? a.hang.start_ns < b.hang.start_ns
                                                : a.hang.tid < b.hang.tid;
    });
    return out;
  }

  // The other thread whose edge into `tid` landed in [from, to]: the strongest, then the
  // latest. 0 when none did.
  Tid woken_by(Tid tid, uint64_t from, uint64_t to) const {
    const Graph::ThreadSegments* t = g_.thread_segments(tid);
    if (!t) return 0;
    Tid best = 0;
    Strength best_strength = Strength::Weak;
    uint64_t best_ts = 0;
    for (uint32_t s = t->begin; s < t->end; ++s) {
      if (g_.segments[s].start_ns > to) break;
      if (segment_end(*t, s) < from) continue;
      for (auto [it, end] = in_edges(s, g_.csr); it != end; ++it) {
        const Edge& e = g_.edges[g_.csr[*it]];
        const Tid other = g_.segments[e.from].tid;
        const uint64_t ts = trace_.events[e.to_event].ts;
        if (other == tid || ts < from || ts > to) continue;
        const bool stronger =
            best == 0 || (e.strength == Strength::Strong && best_strength != Strength::Strong);
        const bool as_strong_later = e.strength == best_strength && ts >= best_ts;
        if (stronger || as_strong_later) {
          best = other;
          best_strength = e.strength;
          best_ts = ts;
        }
      }
    }
    return best;
  }

  // Whether a segment of `tid` caused something in another thread before `before`.
  bool told_another(Tid tid, uint64_t before) const {
    const Graph::ThreadSegments* t = g_.thread_segments(tid);
    if (!t) return false;
    for (uint32_t s = t->begin; s < t->end && g_.segments[s].start_ns < before; ++s)
      for (auto [it, end] = out_edges(s, g_.csr); it != end; ++it) {
        const Edge& e = g_.edges[g_.csr[*it]];
        if (g_.segments[e.to].tid != tid && trace_.events[e.from_event].ts < before) return true;
      }
    return false;
  }

  int64_t call_int(uint32_t call, int field) const {
    return field < 0 ? 0 : static_cast<int64_t>(trace_.value(trace_.events[call], field));
  }

  // Why the candidate's thread waits by design (docs/diagnosis.md), or "". Only a
  // LongWait can: a thread that polls or computes is doing something.
  std::string by_design(const Stretch& st, const Hang& h, Tid* waker) const {
    const SegmentProfile& p = h.profile;
    if (h.kind != HangKind::LongWait || p.longest_block_ns == 0) return {};
    const uint64_t block_start = p.longest_block_start;
    const uint64_t returned = p.longest_block_exit != kNoIndex
                                  ? trace_.events[p.longest_block_exit].ts
                                  : block_start + p.longest_block_ns;
    *waker = woken_by(st.tid, block_start, returned);
    const std::string call = p.longest_block_call == kNoIndex || enter_name_ < 0
                                 ? std::string("a wait")
                                 : std::string(trace_.strings.get(static_cast<StrId>(trace_.value(
                                       trace_.events[p.longest_block_call], enter_name_))));
    // A sleep on nothing: the call names no descriptor (fd -1: the recorder saw none)
    // and no object, so only its timer could end it, and no other thread did.
    if (p.longest_block_call != kNoIndex && *waker == 0 &&
        call_int(p.longest_block_call, enter_fd_) < 0 &&
        call_int(p.longest_block_call, enter_resource_) == 0)
      return fmt::format("a timed sleep: {} on no descriptor or object, ended by no other thread",
                         call);
    // Idle all its life: the wait never returned, and outside it the thread did no work
    // (under kIdleCpuNs on a CPU) and told no other thread anything.
    const Graph::ThreadSegments* t = g_.thread_segments(st.tid);
    if (p.longest_block_exit == kNoIndex && t) {
      const SegmentProfile life =
          profile_range(trace_, ev_, st.tid, g_.segments[t->begin].start_ns, thread_end(*t));
      if (life.on_cpu_ns < kIdleCpuNs && !told_another(st.tid, block_start))
        return fmt::format(
            "idle all its life: it never returned from {} and did no work outside it", call);
    }
    return {};
  }

  static std::string secs_of(uint64_t ns) {
    return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
  }

  std::vector<HangCandidate> list(const SymptomRequest& request, std::string* why) {
    Pool pool;
    if (!gather(request.thread_name, pool, why)) return {};
    auto ranked = rank(std::move(pool.all));
    for (HangCandidate& c : ranked) {
      c.hang_arg = fmt::format("{}@{}", c.hang.tid,
                               short_seconds(c.hang.start_ns - std::min(c.hang.start_ns, t0_)));
      c.hang.chosen_by = "--hang " + c.hang_arg;
    }
    return ranked;
  }

  std::optional<Hang> find_auto(const SymptomRequest& request, std::string* why, bool* no_hang) {
    const std::string& thread_name = request.thread_name;
    Pool pool;
    if (!gather(thread_name, pool, why)) return std::nullopt;
    const auto ranked = rank(pool.all);
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

  std::optional<Hang> find_at(const SymptomRequest& r, std::string* why) {
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
      *why =
          fmt::format("thread {} ({}) was not alive at {}: its events run from {} to {}", r.tid,
                      comm(r.tid), seconds(r.at_ns, t0_), seconds(begin, t0_), seconds(end, t0_));
      return std::nullopt;
    }
    const std::string how =
        fmt::format("--hang {}@{}", r.tid, short_seconds(r.at_ns - std::min(r.at_ns, t0_)));
    mark_strong_in();
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

  const Trace& trace_;
  const Graph& g_;
  const ThreadEvents& ev_;
  const KindId enter_, exit_, marker_, thread_exit_, call_enter_, call_exit_, send_, recv_;
  const int enter_name_, enter_fd_, enter_resource_, exit_ret_, marker_text_;
  const uint64_t t0_, trace_end_;
  Pid command_pid_ = 0;
  bool named_ = false;  // the candidates are the threads the user named
  std::vector<Marker> markers_;
  // initiator(): per pair of processes, the first causal edge between them (time, sender).
  mutable std::unordered_map<uint64_t, std::pair<uint64_t, Pid>> first_contact_;
  std::vector<bool> strong_in_;
};

}  // namespace

std::string_view hang_kind_name(HangKind k) {
  switch (k) {
    case HangKind::LongRunning: return "LongRunning";
    case HangKind::RepeatedYield: return "RepeatedYield";
    case HangKind::LongWait: return "LongWait";
  }
  return "?";
}

uint64_t trace_start_ns(const Trace& trace) {
  return trace.events.empty() ? 0 : trace.events.front().ts;
}

HangKind classify(const SegmentProfile& p) {
  const uint64_t length = p.end_ns - std::min(p.end_ns, p.start_ns);
  // A loop calls all along, turn after turn: bursts of calls (a program's start-up, its
  // input read, its output written) around long computations without any are not one.
  // (Sixteen calls make eight turns or more: none takes a quarter of the stretch; the
  // stretch may begin or end with up to half of it outside the loop.)
  // A loop that spent most of its time in the kernel's uninterruptible sleep (a disk
  // write's completion, each fsync of a logging loop) does not yield: it waits on a device,
  // turn after turn, and the device's time is its wait.
  if (p.syscalls >= kYieldCalls && !p.by_name.empty() &&
      2 * p.by_name.front().count >= p.syscalls && 2 * p.longest_block_ns <= length &&
      4 * p.longest_gap_ns <= length && 2 * p.longest_quiet_ns <= length &&
      2 * p.uninterruptible_ns < length)
    return HangKind::RepeatedYield;
  if (p.blocked_ns >= p.on_cpu_ns + p.runnable_ns) return HangKind::LongWait;
  return HangKind::LongRunning;
}

bool is_loop_cut(const Graph& graph, uint32_t segment) {
  const RuleRef& r = graph.segments.at(segment).cut_rule;
  if (r.kind == RuleKind::Batch) return true;
  return r.kind == RuleKind::Split && r.index < graph.rule_names.split_loops.size() &&
         graph.rule_names.split_loops[r.index];
}

std::optional<Hang> find_hang(const Trace& trace, const Graph& graph, const ThreadEvents& events,
                              const SymptomRequest& request, std::string* why, bool* no_hang) {
  return Finder(trace, graph, events).find(request, why, no_hang);
}

std::vector<HangCandidate> list_hangs(const Trace& trace, const Graph& graph,
                                      const ThreadEvents& events, const SymptomRequest& request,
                                      std::string* why) {
  std::string error;
  auto out = Finder(trace, graph, events).candidates(request, &error);
  if (out.empty() && why) *why = std::move(error);
  return out;
}

}  // namespace cw::engine
