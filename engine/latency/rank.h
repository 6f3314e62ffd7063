// Ranking the costly calling contexts of a PA-CCT (IntroPerf, §3.4.2, Algorithm 3), alone
// or as the difference of a slow run against a normal one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/latency/cct.h"

namespace cw::latency {

// Where a context was seen, in a differential ranking.
enum class Presence : uint8_t {
  Both,      // in the base run and the slow run
  New,       // only in the slow run
  Vanished,  // only in the base run
};
std::string_view presence_name(Presence p);

struct RankedFrame {
  std::string function;
  int64_t cost = 0;       // own latency; in a differential ranking, slow minus base
  uint64_t own = 0;       // own latency in the run ranked (the slow one when comparing)
  uint64_t total = 0;     // with its callees' (in the same run as `own`)
  uint64_t base_own = 0;  // own latency in the base run (differential ranking only)
  uint64_t instances = 0;
  uint32_t distance = 0;  // frames away from the path's costliest frame (0: that frame)
};

struct RankedPath {
  std::vector<RankedFrame> frames;  // outermost first
  int64_t cost = 0;                 // the frames' costs summed, and below_cost
  size_t costliest = 0;             // index in frames
  Presence presence = Presence::Both;
  // Differential ranking only: the contexts that differ from this one only below its hot
  // frame (frames[hot_frame]: where its run spent the most own time) are merged into it,
  // `merged` of them (1: this context alone); `frames` is the one whose frames below the
  // hot one took the most, and the others' frames below it cost `below_cost` more in the
  // slow run (their own times summed, each frame once).
  size_t hot_frame = 0;
  int64_t below_cost = 0;
  size_t merged = 1;
};

struct RankOptions {
  Mode mode = Mode::Conservative;
  size_t top = 10;
  // Contexts whose cost is below this (in absolute value) are left out: differences of
  // a few scheduler ticks are noise, not a slowdown.
  uint64_t threshold_ns = 0;
  // Differential ranking only: scale the base run's times so its total equals the slow
  // run's before subtracting (pprof's -normalize). Two runs of different lengths then
  // compare shares of their time: a thread that waits for work all along (a server's
  // listener, a pool's idle worker) waits longer in the longer run, and unscaled that
  // growth ties with the slowdown itself.
  bool normalize = false;
};

// The base run's scale factor a differential ranking with `normalize` applies: the slow
// run's total own time over the base run's (1 when either is empty).
double base_scale(const Cct& base, const Cct& slow, Mode mode);

// The contexts (root-to-leaf paths) of `cct`, costliest first.
std::vector<RankedPath> rank_paths(const Cct& cct, const RankOptions& options);

// The contexts of `slow`, ranked by how much more they cost than the same context of
// `base` (a context new in the slow run costs all it costs). Contexts only in `base`
// follow, as Vanished, their cost negative. Two contexts are the same when their
// function names are, in order, down to the context's hot frame (where its run spent the
// most own time): the frames below it vary from run to run (where in the kernel or the
// allocator a sample landed), so contexts that differ only there are one row, and a
// base context that reaches the slow run's hot frame or below is part of that row, not
// a vanished one.
std::vector<RankedPath> diff_rank_paths(const Cct& base, const Cct& slow,
                                        const RankOptions& options);

// The folded-stack form of flame-graph tools: one line per context with own latency,
// "f1;f2;…;fn NANOSECONDS".
std::string folded(const Cct& cct, Mode mode);

}  // namespace cw::latency
