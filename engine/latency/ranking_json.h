// A latency ranking as JSON (docs/json.md, `causeway latency --json`), shared by the
// command's --json and the HTML page, and the performance-annotated CCT of the ranked
// contexts.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/latency/infer.h"
#include "engine/latency/rank.h"

namespace cw::latency {

// What was read: threads, stacks, frames, contexts, functions, the time covered.
nlohmann::json profile_json(const Profile& p);

// {"mode", "threshold_ns", "contexts": [...]} and "trace", or "base" and "buggy" when
// `base` is given (a differential ranking).
nlohmann::json ranking_json(const RankOptions& options, const Profile& ranked_run,
                            const Profile* base, const std::vector<RankedPath>& ranked);

// The PA-CCT restricted to the ranked contexts: a tree of {"function", "own_ns",
// "total_ns", "instances", "children"} (with "base_own_ns" and "presence" when
// comparing), the contexts sharing their common callers.
nlohmann::json ranked_tree_json(const std::vector<RankedPath>& ranked, bool differential);

}  // namespace cw::latency
