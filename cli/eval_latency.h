// `causeway eval --latency`: the latency pairs (tests/latency-pairs/README.md), each
// recorded twice (base, slow), ranked by `latency --base --buggy`, scored against the
// function a fix would touch with IntroPerf's p_min and f_min.
#pragma once

#include <string>
#include <vector>

namespace cw::cli {

struct LatencyEvalArgs {
  std::vector<std::string> names;  // pairs to run; empty = all
  std::string suite;               // "" = the default
  std::string keep, from;          // as `eval --keep/--from`
  bool json = false;
};

// Returns the exit status: 0 every pair ran and was scored, 1 bad input, 2 the
// environment cannot, 3 a pair failed to run or its truth was not ranked at all.
int run_latency_eval(const LatencyEvalArgs& args);

}  // namespace cw::cli
