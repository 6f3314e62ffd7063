// What the parts of the symptom's search share (symptom.h runs them). One Finder looks at a
// trace's threads for the stretch in which one did not return to its loop (the Argus paper,
// §2); its member functions are defined by job, one file each:
//   symptom.cc             the entry points: find_hang, list_hangs
//   symptom_candidates.cc  the candidate threads (markers, the recorded command, a name),
//                          ranked; auto's choice, or the stretch at TID@SECONDS
//   symptom_stretches.cc   a thread's stretches: between loop cuts, or its segments with
//                          a run of the same call merged (a yield loop)
//   symptom_wait_end.cc    how a loop wait ended: the answer to a request the thread made,
//                          other work, or nothing (a timeout)
//   symptom_classify.cc    what a stretch was (LongRunning, RepeatedYield, LongWait), its
//                          hang vertex, and whether its thread waits by design
// Internal to engine/diagnosis/: nothing outside includes this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/terminal_text.h"
#include "engine/diagnosis/symptom.h"
#include "trace/names.h"

namespace cw::engine::symptom_detail {

// A segment with this many system calls, at least half of them one call, is a yield loop
// on its own (classify() then says RepeatedYield).
constexpr uint32_t kYieldCalls = 16;

struct Stretch {
  Tid tid = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t first = kNoIndex, last = kNoIndex;  // segments
};

class Finder {
 public:
  Finder(const Trace& trace, const Graph& graph, const ThreadEvents& events);

  std::vector<HangCandidate> candidates(const SymptomRequest& request, std::string* why) {
    return list(request, why);
  }

  // Auto reuses the candidates of `before`'s threads whose cuts match (ThreadRank), and
  // keeps every candidate thread's in `after` (when not null; not with markers, which
  // choose among all threads' stretches at once). `reused` counts the threads reused.
  void keep_ranks(const std::vector<ThreadRank>* before, std::vector<ThreadRank>* after) {
    before_ = before;
    after_ = after;
  }
  size_t reused() const { return reused_; }

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

  // The candidate stretches for auto: every stretch of the candidate threads (main or
  // loop threads of the recorded command, or the threads named `thread_name`), only those
  // around a marker when some are. Never all in one list (~0.9 M stretches, 28 MB, at
  // 19 M events).
  struct Pool {
    // With markers: one run a thread (none empty), in the graph's thread order, as each
    // thread's search found them (the markers filter them as a whole).
    std::vector<std::vector<Stretch>> runs;
    // Without markers: each searched thread's candidate, ranked as its stretches were
    // found (rank_run), then let go; one per thread with stretches, in thread order.
    std::vector<HangCandidate> ranked;
    size_t mains = 0, loops = 0;
    std::string whose;  // " of process P and its descendants (the recorded command)"
    // Each candidate thread's rank, in the order of the graph's threads: reused from
    // before_ (`reused`), or filled in by rank() from `ranked` or `runs`.
    std::vector<ThreadRank> threads;
    std::vector<bool> reused;
    bool keeps_ranks = false;  // no markers: each thread's candidate is its own
  };

  // A process the thread asked something of, and when its request reached it: the latest
  // arrival of the thread's causal edges into that process (a request sent in several
  // writes is whole when its last one is read).
  struct Asked {
    Pid pid = 0;
    uint64_t arrived_ns = 0;
  };

  // A causal (not weak) edge between a segment of a thread and another process's, as its
  // turns read it (asked_in(), wait_end()): the process at the other end, and when the
  // edge reached it (an edge out) or left it (an edge in).
  struct Across {
    Pid pid = 0;
    uint64_t ts = 0;
  };
  // A thread's edges across processes (across_of()), per segment s in the order the
  // graph's index lists them: out[out_begin[s - base], out_begin[s - base + 1]), and in.
  struct ThreadAcross {
    uint32_t base = 0;
    std::vector<uint32_t> out_begin, in_begin;
    std::vector<Across> out, in;
    const Across* out_first(uint32_t s) const { return out.data() + out_begin[s - base]; }
    const Across* out_end(uint32_t s) const { return out.data() + out_begin[s - base + 1]; }
    const Across* in_first(uint32_t s) const { return in.data() + in_begin[s - base]; }
    const Across* in_end(uint32_t s) const { return in.data() + in_begin[s - base + 1]; }
  };

  // initiator(own, to) == own, remembered for the few processes one thread talks to (a
  // lookup in the table of all pairs for every edge out of every turn cost more).
  class InitiatorCache {
   public:
    bool opened(const Finder& f, Pid own, Pid to);

   private:
    static constexpr size_t kKept = 32;
    Pid own_ = 0;
    std::vector<std::pair<Pid, bool>> known_;
  };

  // How a loop wait ended (wait_end()): by the answer to a request, by other work, or by
  // no causal edge at all.
  enum class WaitEnd : uint8_t { Answer, OtherWork, NoCause };

  // For messages: a name's control bytes shown as \xNN (matching uses the raw comm).
  std::string comm(Tid tid) const { return terminal_text(thread_comm(trace_, tid, "?")); }

  // the candidates and the choice among them (symptom_candidates.cc)
  void read_markers();
  bool in_command(Pid pid) const;
  bool descends_from(Pid pid, Pid ancestor) const;
  bool gather(const std::string& thread_name, Pool& pool, std::string* why);
  const Marker* marker_in(const Stretch& s) const;
  // A thread's candidate: its stretch that went longest without a response (sorts `run`).
  HangCandidate rank_run(std::vector<Stretch>& run) const;
  std::vector<HangCandidate> rank(Pool& pool) const;
  uint64_t cuts_of(const Graph::ThreadSegments& t) const;
  bool reuse(const Graph::ThreadSegments& t, uint64_t cuts, ThreadRank& rank) const;
  std::vector<HangCandidate> list(const SymptomRequest& request, std::string* why);
  std::optional<Hang> find_auto(const SymptomRequest& request, std::string* why, bool* no_hang);
  std::optional<Hang> find_at(const SymptomRequest& r, std::string* why);

  // a thread's stretches (symptom_stretches.cc)
  bool has_loop_cut(const Graph::ThreadSegments& t) const;
  uint64_t thread_end(const Graph::ThreadSegments& t) const;
  bool program_activity(KindId k) const;
  uint64_t segment_end(const Graph::ThreadSegments& t, uint32_t s) const;
  // A loop cut's wait: whether the cut opens a system call, and the syscall_exit that
  // closes it (kNoIndex when none) and when.
  struct LoopWait {
    bool opens = false;
    uint32_t ret = kNoIndex;
    uint64_t returned_ns = 0;
  };
  std::vector<LoopWait> wait_returns(const std::vector<uint32_t>& loops) const;
  uint32_t segment_from(uint32_t from, uint32_t last, uint32_t event) const;
  void loop_stretches(const Graph::ThreadSegments& t, std::vector<Stretch>& out) const;
  bool woken_by_other(uint32_t first, uint32_t last) const;
  bool waits_in_sequence(const std::vector<uint32_t>& loops,
                         const std::vector<LoopWait>& waits) const;
  void segment_stretches(const Graph::ThreadSegments& t, std::vector<Stretch>& out) const;
  std::vector<Stretch> stretches(const Graph::ThreadSegments& t) const;

  // how a loop wait ended (symptom_wait_end.cc)
  void prepare_shared_lookups();
  ThreadAcross across_of(const Graph::ThreadSegments& t) const;
  Pid initiator(Pid a, Pid b) const;
  void asked_in(const ThreadAcross& across, uint32_t first, uint32_t last,
                std::vector<Asked>& asked, InitiatorCache& initiators) const;
  WaitEnd wait_end(const ThreadAcross& across, uint32_t first, uint32_t last,
                   std::vector<Asked>& asked) const;

  // what a stretch was (symptom_classify.cc)
  HangKind kind_of(const Stretch& st, const SegmentProfile& p, uint64_t* waited = nullptr) const;
  Hang make_hang(const Stretch& st, std::string chosen_by) const;
  // The same, with the stretch's profile and kind found already (rank() found them).
  Hang make_hang(const Stretch& st, std::string chosen_by, SegmentProfile profile,
                 HangKind kind) const;
  Tid woken_by(Tid tid, uint64_t from, uint64_t to) const;
  bool told_another(Tid tid, uint64_t before) const;
  int64_t call_int(uint32_t call, int field) const;
  std::string by_design(const Stretch& st, const Hang& h, Tid* waker) const;

  const Trace& trace_;
  const Graph& g_;
  const ThreadEvents& ev_;
  const KindId enter_, exit_, marker_, thread_exit_, call_enter_, call_exit_, send_, recv_;
  const int enter_name_, enter_fd_, enter_resource_, exit_ret_, marker_text_;
  const uint64_t t0_, trace_end_;
  Pid command_pid_ = 0;
  bool named_ = false;  // the candidates are the threads the user named
  std::vector<Marker> markers_;
  // What stretches() reads of the edges, made by prepare_shared_lookups() before any
  // thread's stretches are found:
  bool prepared_ = false;
  // initiator(): per pair of processes, the first causal edge between them (time, sender).
  std::unordered_map<uint64_t, std::pair<uint64_t, Pid>> first_contact_;
  // Per segment, whether a strong edge from another thread ends in it (bytes: two CPUs
  // mark it at once).
  std::vector<uint8_t> strong_in_;
  // Per edge, whether it joins two processes causally (not weak); per segment, whether
  // such an edge leaves it, and whether one ends in it.
  std::vector<uint8_t> across_, across_out_, across_in_;
  const std::vector<ThreadRank>* before_ = nullptr;
  std::vector<ThreadRank>* after_ = nullptr;
  size_t reused_ = 0;
};

}  // namespace cw::engine::symptom_detail
