// The symptom of a diagnosis: the stretch of time in which a thread did not return to
// its loop, and what it was doing meanwhile (the Argus paper, §2: LongRunning, RepeatedYield,
// LongWait).
//
// `auto` looks at main threads (tid == pid) and at threads a rule marks as a loop (cuts
// by a split rule with `loop`, or by any batch rule). On such a thread a stretch runs from
// the return of the wait that a loop cut starts to the next loop cut; on a thread with no
// loop cuts every segment is a stretch, and a run of short segments that repeat the same
// system call with no strong edge from another thread is one stretch (a yield loop).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnosis/segment_profile.h"
#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::engine {

enum class HangKind : uint8_t { LongRunning, RepeatedYield, LongWait };
std::string_view hang_kind_name(HangKind k);  // "LongRunning", "RepeatedYield", "LongWait"

struct Hang {
  Tid tid = 0;
  Pid pid = 0;
  uint64_t start_ns = 0, end_ns = 0;  // the stretch
  HangKind kind = HangKind::LongWait;
  uint32_t segment = kNoIndex;  // the hang vertex: where the thread spent the stretch
  uint32_t first_segment = kNoIndex, last_segment = kNoIndex;  // the stretch's segments
  SegmentProfile profile;                                      // over the stretch
  std::string chosen_by;  // how it was found: "auto: …", "--hang TID@SECONDS", "marker …"
};

struct SymptomRequest {
  enum class Mode : uint8_t { Auto, ThreadAt } mode = Mode::Auto;
  Tid tid = 0;         // ThreadAt
  uint64_t at_ns = 0;  // ThreadAt: absolute trace time
  // Auto: when set, the candidates are the threads of this name (main or not) instead.
  std::string thread_name;
  // Auto: when the best candidate went less than this long without a response (its
  // longest wait for a LongWait, its length otherwise), there is no hang: find_hang sets
  // `no_hang` and returns nullopt. 0 takes any stretch (the command line's default is
  // 500 ms, `--min-hang`).
  uint64_t min_hang_ns = 0;
};

// One candidate for the hang: a thread's longest stretch without a response, as `auto`
// ranks them (docs/diagnosis.md, "The symptom").
struct HangCandidate {
  Hang hang;              // the stretch, classified; chosen_by says how it ranked
  uint64_t score_ns = 0;  // time without a response: the longest wait of a LongWait, else
                          // the stretch's length
  // Why the thread waits by design, or empty: a sleep on nothing (no descriptor, no
  // object) that no other thread ended, or a thread that did no work outside the wait
  // (no CPU time to speak of, no message to another thread). Such candidates rank below
  // every thread that stopped responding.
  std::string by_design;
  Tid woken_by = 0;      // the other thread whose edge ended the wait, 0 if none
  std::string hang_arg;  // what `--hang` selects it with: "TID@SECONDS"
};

// What auto's search found for one candidate thread, kept to be reused by a search of a
// graph whose edges are the same (the same trace, and packs that differ in cut rules only:
// a rule added, changed or removed). A thread's candidate reads its own segments, and of
// its edges only their events, strengths and the other end's thread and process, which
// such a graph keeps; so where the thread's segments start at the same events with the
// same loop cuts, its candidate is the same.
struct ThreadRank {
  Tid tid = 0;
  uint32_t segments = 0;  // how many the thread had
  uint64_t cuts = 0;      // a hash of their first events and which are loop cuts
  bool has_stretch = false;
  // Its segment numbers count from the thread's first segment.
  HangCandidate candidate;
};

// What find_hang answered: the hang, or why there is none (`no_hang`: candidates, none
// long enough). A function of the trace, its graph and the request: the derived cache
// keeps it beside the graph, so a re-run with the same packs skips auto's search.
struct FoundHang {
  std::optional<Hang> hang;
  std::string why;
  bool no_hang = false;
  // Auto without markers: every candidate thread's, by tid (for the next search; above).
  std::vector<ThreadRank> ranks;
  size_t reused = 0;  // of the threads' ranks, how many were a former search's
};

// The trace's start time, for TID@SECONDS (seconds since the recording started).
uint64_t trace_start_ns(const Trace& trace);

// Classifies what a thread did in a stretch. RepeatedYield: at least 16 system calls, the
// most frequent one at least half of them, no single block longer than half the stretch,
// and less than half of it in uninterruptible sleep (a device's wait); LongWait: blocked at least
// as long as it ran or was runnable; else LongRunning.
HangKind classify(const SegmentProfile& p);

// Auto: the longest stretch of a candidate thread; when the trace has marker events,
// only stretches that contain a marker's time are considered (if any does). When the
// trace holds a `causeway: command PID …` marker (written by `record -- CMD`), only that
// process and its descendants are candidates. ThreadAt: the stretch of `tid` holding
// `at_ns`. Auto with a thread name: the longest stretch of the threads so named. Returns nullopt
// and sets `why` when there is none (unknown thread, time outside the trace, no candidate thread).
// `no_hang` (optional) is set when auto found candidates but none reached
// `request.min_hang_ns`; `why` then says how long the best one was.
std::optional<Hang> find_hang(const Trace& trace, const Graph& graph, const ThreadEvents& events,
                              const SymptomRequest& request, std::string* why,
                              bool* no_hang = nullptr);

// find_hang, reusing `before` (ThreadRank: the ranks of a search of the same request on a
// graph with the same edges, by tid) for the threads whose cuts match; this search's ranks
// are in found.ranks (auto without markers).
FoundHang find_hang_reusing(const Trace& trace, const Graph& graph, const ThreadEvents& events,
                            const SymptomRequest& request, const std::vector<ThreadRank>* before);

// Auto's candidates, best first: each candidate thread's longest stretch (one per
// thread), those that stopped responding before those that wait by design, then by
// score. `request` as for find_hang (markers, the recorded command, a thread name;
// min_hang_ns is ignored). Empty with `why` set when there is no candidate thread.
std::vector<HangCandidate> list_hangs(const Trace& trace, const Graph& graph,
                                      const ThreadEvents& events, const SymptomRequest& request,
                                      std::string* why);

// Whether the cut that started `segment` is a return to the thread's loop.
bool is_loop_cut(const Graph& graph, uint32_t segment);

}  // namespace cw::engine
