// Diagnosis: from a hang to its root cause on the event graph (DESIGN §7; the Argus paper,
// Algorithm 1; an Argus draft's FindSimilarNode and AssistedGraphDiff pseudo-code; the
// published Argus design's beam search with lookback and recursive subgraph comparison).
//
//   LongRunning   slice back from the hang vertex to the event that started the work;
//   RepeatedYield with no data-flag event: report the loop and stop; with one: as LongWait;
//   LongWait      find a baseline (a similar segment whose wait ended quickly), slice its
//                 causal path, and compare it thread by thread with what those threads
//                 did during the hang; recurse on a thread that was itself hung.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnosis/questions.h"
#include "engine/diagnosis/segment_profile.h"
#include "engine/diagnosis/symptom.h"
#include "engine/graph/builder.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::engine {

struct Diagnosis;

struct DiagnoseOptions {
  SymptomRequest symptom;
  uint32_t beam_width = 8;
  uint32_t lookback = 3;    // the beam is pruned to its width only every `lookback` steps
  uint32_t max_depth = 64;  // slicing never walks more segments than this
  uint32_t max_recursion = 8;
  // Compare a LongWait with a baseline even when another thread's wake-up ended it (by
  // default only a wait nobody woke is compared).
  bool baseline = false;
  Answerer* answerer = nullptr;  // null: AutoAnswerer
  // The trace's per-thread event index of every thread, made before (the derived cache
  // keeps it); null: the diagnosis indexes the trace itself.
  const ThreadEvents* events = nullptr;
  // The symptom as find_hang found it before for this trace, graph and `symptom` (the
  // derived cache keeps it); null: the diagnosis finds it, and tells `hang_found`.
  const FoundHang* known_hang = nullptr;
  std::function<void(const FoundHang&)> hang_found;
  // Auto's search on a graph with the same edges (packs that differ in cut rules only): its
  // candidate threads with the same cuts are not searched again (ThreadRank).
  const std::vector<ThreadRank>* ranks_before = nullptr;
  Progress progress;  // ("finding the hang", 0, 0) first when searching for it, then
                      // ("search", step, 0) while searching its cause
  // Called before a question goes to the answerer, with what was found so far (the
  // hang, root causes, paths): a terminal shows it so the question has its context.
  std::function<void(const Diagnosis& so_far, const Question& q)> before_asking;
};

// A segment the diagnosis blames, with what it did.
struct RootCause {
  uint32_t segment = kNoIndex;
  HangKind kind = HangKind::LongWait;  // how that segment itself behaved
  std::string what;                    // "blocked 302 ms in read (fd 3) …"
  StackId stack = 0;                   // the most telling stack in it, 0 if none
  uint32_t depth = 0;                  // 0 = the hang itself, 1 = its culprit, …
  // The time `what` was measured over (the hang's stretch, a culprit's segment); 0, 0:
  // the segment's.
  uint64_t start_ns = 0, end_ns = 0;
  // A busy root cause (LongRunning): the stacks of that time, and the costliest functions
  // they show (engine/latency, IntroPerf), so "it ran for 2 s" comes with where. Filled
  // when the diagnosis ends, so that its reports only render.
  uint64_t costliest_stacks = 0;
  std::vector<std::pair<std::string, uint64_t>> costliest;  // function, own ns; costliest first
};

// One step of the causal path from the root cause to the hang: the segment, and the edge
// that leads from it to the next step (kNoIndex on the last step, the hang vertex).
struct PathStep {
  uint32_t segment = kNoIndex;
  uint32_t edge = kNoIndex;
};

// The loop of a RepeatedYield with no data flag: what it called and from where.
struct YieldLoop {
  std::vector<SyscallCount> syscalls;  // most frequent first
  std::vector<StackId> call_sites;     // distinct stacks of those calls
};

struct Diagnosis {
  Hang hang;
  std::vector<RootCause> root_causes;      // best first
  std::vector<PathStep> path;              // root cause → … → hang vertex
  std::vector<Query> queries;              // in the order asked
  uint32_t baseline = kNoIndex;            // the baseline segment of a LongWait, if any
  uint64_t baseline_longest_block_ns = 0;  // the baseline's longest blocking call
  std::vector<PathStep> baseline_path;
  bool yield_without_flag = false;  // RepeatedYield and no data-flag event explains it
  YieldLoop yield_loop;
  std::vector<std::string> notes;  // what people should know: fell back, stopped, …
  uint32_t search_steps = 0;       // beam-search expansions, for the benchmark
};

// What the reports say of a diagnosis beyond the walk itself (RootCause::costliest,
// Diagnosis::baseline_longest_block_ns), measured once so that the text, the JSON and the
// UI only render. diagnose() calls it; a Diagnosis made another way (a test) calls it too.
void measure_for_reports(const Trace& trace, const Graph& graph, Diagnosis& d);

// The symptom cannot be found (unknown thread, time outside the trace, no candidate):
// what() says why. The command line reports it as bad input (exit 1).
struct DiagnoseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Auto found candidates, but none went without a response for the request's
// min_hang_ns: there is nothing to diagnose. Not an error: the command says so, exit 0.
struct NoHangFound : DiagnoseError {
  using DiagnoseError::DiagnoseError;
};

// Throws NoHangFound below the threshold, DiagnoseError when the symptom cannot be found and
// rules::LuaError from a failing hook (an answer rule's expression calling Lua).
Diagnosis diagnose(const Trace& trace, const BuildResult& built, const rules::RuleSet& rules,
                   const DiagnoseOptions& options);

}  // namespace cw::engine
