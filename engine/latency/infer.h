// Function instances inferred from the stacks recorded on kernel events (IntroPerf, §3.3,
// Algorithm 2): a function is running, in one calling context, for as long as
// consecutive stacks of its thread keep that context; when a stack shows a different
// function at some depth, every frame from that depth up ends and new instances begin.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/latency/cct.h"
#include "trace/trace.h"

namespace cw::latency {

struct FunctionInstance {
  NodeId node = kRoot;  // its function in its context
  Tid tid = 0;
  uint64_t start = 0;  // the first stack that showed it
  uint64_t last = 0;   // the last stack that showed it: the conservative end
  uint64_t next = 0;   // the first stack that did not, or the thread's end: the aggressive end
  uint64_t latency(Mode m) const { return (m == Mode::Conservative ? last : next) - start; }
};

// Algorithm 2 for one thread. Feed its stacks in time order, then finish(). Each ended
// instance is added to its node's annotations in `cct`, and appended to `out` if given.
class ContextTracker {
 public:
  // `out` may be null: the instances then only annotate the tree.
  ContextTracker(Cct& cct, Tid tid, std::vector<FunctionInstance>* out)
      : cct_(cct), tid_(tid), out_(out) {}
  void sample(uint64_t ts, std::span<const FunctionId> outer_first);
  // Ends what is still open: the thread's recording ended at `end` (at or after its
  // last stack), which bounds the aggressive estimate.
  void finish(uint64_t end);

 private:
  void close_from(size_t depth, uint64_t next);

  Cct& cct_;
  Tid tid_;
  std::vector<FunctionInstance>* out_;
  std::vector<FunctionInstance> open_;  // one per depth of the current context
  std::vector<NodeId> nodes_;
  uint64_t last_ts_ = 0;
};

// Which threads to analyse (all, those of a process, those of a process and its
// descendants, those whose process or thread name is `comm`, one thread) and over which
// stretch of time: the events in [from, to].
struct Selection {
  std::optional<Pid> pid;
  std::optional<std::string> comm;
  std::optional<Tid> tid;
  uint64_t from = 0;
  uint64_t to = UINT64_MAX;
  std::optional<Pid> tree;  // the process and its descendants (a recorded command's)
};

struct InferOptions {
  // Keep every instance (a timeline of them), not only the tree's sums: at Chromium scale
  // that is ~10 M instances, 400 MB.
  bool keep_instances = false;
};

struct Profile {
  Cct cct;                                  // annotated and normalised
  std::vector<FunctionInstance> instances;  // with InferOptions::keep_instances
  uint64_t selected_threads = 0;            // threads the selection named
  uint64_t threads = 0;                     // of those, threads with at least one stack
  uint64_t stacks = 0;                      // events with a stack
  uint64_t span_ends = 0;  // events that closed a span opened with a stack (its stack again)
  uint64_t frames = 0;
  uint64_t unnamed_frames = 0;  // frames shown by address: no symbol was found
  uint64_t start_ns = 0, end_ns = 0;
};

// The functions with the most own time, summed over their contexts, costliest first.
struct FunctionCost {
  std::string function;
  uint64_t own_ns = 0;
};
std::vector<FunctionCost> costliest_functions(const Cct& cct, Mode mode, size_t n);

// Builds the PA-CCT of the selected threads of `trace`. Each process's contexts hang
// under a frame "[COMM]" of its own, so two programs' `main`s stay apart and the same
// program matches itself across two recordings.
Profile infer(const Trace& trace, const Selection& selection, const InferOptions& options = {});

}  // namespace cw::latency
