// The latency pairs run end to end (tests/latency-pairs/README.md): each program recorded
// in its normal and its slow run, both ranked as `latency --base --buggy` ranks them, and
// scored against the function a fix would touch with IntroPerf's p_min and f_min; the
// results as Markdown or JSON (docs/latency.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/session/reporter.h"
#include "eval/latency_pair.h"

namespace cw::eval {

struct PairResult {
  LatencyPair pair;
  std::string error;
  PairScore score;     // normalised ranking
  PairScore unscaled;  // the same without --normalize
  ContextShape shape;
  std::string hottest;  // the costliest function of the first context
  int64_t first_cost_ns = 0;
  uint64_t base_ns = 0, slow_ns = 0;  // the time each recording of the program covered
  double seconds = 0;                 // preparing and recording both runs
};

// Prepares and records the pair into `out_dir` (NAME.base.cwt, NAME.slow.cwt, their logs
// and the NAME.work folder of its inputs) when `record`, else reads what a previous run left
// there; ranks and scores. Failures are in `r.error`. The work folder stays: frames are
// named from the files the runs mapped (remove_pair_work after reading).
void run_pair(PairResult& r, const std::string& out_dir, bool record, session::Reporter& reporter);

void remove_pair_work(const PairResult& r, const std::string& out_dir);

// A score as a table cell: the rank (p_min) or distance (f_min), or "—" when the truth
// was ranked nowhere.
std::string score_cell(const std::optional<size_t>& v);

std::string render_latency_markdown(const std::vector<PairResult>& results);
nlohmann::json render_latency_json(const std::vector<PairResult>& results);

}  // namespace cw::eval
