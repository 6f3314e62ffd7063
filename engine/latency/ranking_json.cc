#include "engine/latency/ranking_json.h"

#include <algorithm>

namespace cw::latency {

nlohmann::json profile_json(const Profile& p) {
  return {{"threads", p.threads},
          {"stacks", p.stacks},
          {"frames", p.frames},
          {"frames_without_symbol", p.unnamed_frames},
          {"contexts", p.cct.path_count()},
          {"functions", p.cct.function_count() - 1},
          {"start_ns", p.start_ns},
          {"end_ns", p.end_ns}};
}

namespace {

nlohmann::json path_json(const RankedPath& p, size_t rank, bool differential) {
  nlohmann::json frames = nlohmann::json::array();
  for (const auto& f : p.frames) {
    nlohmann::json j = {{"function", f.function},
                        {"own_ns", f.own},
                        {"cost_ns", f.cost},
                        {"instances", f.instances},
                        {"distance", f.distance}};
    if (differential) j["base_own_ns"] = f.base_own;
    frames.push_back(std::move(j));
  }
  nlohmann::json j = {
      {"rank", rank}, {"cost_ns", p.cost}, {"costliest", p.costliest}, {"frames", frames}};
  if (differential) {
    j["presence"] = std::string(presence_name(p.presence));
    j["hot_frame"] = p.hot_frame;
    j["below_cost_ns"] = p.below_cost;
    j["contexts_merged"] = p.merged;
  }
  return j;
}

}  // namespace

nlohmann::json ranking_json(const RankOptions& options, const Profile& ranked_run,
                            const Profile* base, const std::vector<RankedPath>& ranked) {
  nlohmann::json out = {{"mode", std::string(mode_name(options.mode))},
                        {"threshold_ns", options.threshold_ns},
                        {"contexts", nlohmann::json::array()}};
  if (base) {
    out["base"] = profile_json(*base);
    out["buggy"] = profile_json(ranked_run);
    out["normalize"] = options.normalize;
    out["base_scale"] =
        options.normalize ? base_scale(base->cct, ranked_run.cct, options.mode) : 1.0;
  } else {
    out["trace"] = profile_json(ranked_run);
  }
  for (size_t i = 0; i < ranked.size(); ++i)
    out["contexts"].push_back(path_json(ranked[i], i + 1, base != nullptr));
  return out;
}

nlohmann::json ranked_tree_json(const std::vector<RankedPath>& ranked, bool differential) {
  // Children in first-seen order: the costliest context's frames come first.
  nlohmann::json root = {{"children", nlohmann::json::array()}};
  for (const RankedPath& p : ranked) {
    nlohmann::json* at = &root;
    for (const RankedFrame& f : p.frames) {
      nlohmann::json& kids = (*at)["children"];
      auto it = std::find_if(kids.begin(), kids.end(),
                             [&](const nlohmann::json& k) { return k["function"] == f.function; });
      if (it == kids.end()) {
        nlohmann::json node = {{"function", f.function},
                               {"own_ns", f.own},
                               {"total_ns", f.total},
                               {"instances", f.instances},
                               {"children", nlohmann::json::array()}};
        if (differential) {
          node["base_own_ns"] = f.base_own;
          node["presence"] = std::string(presence_name(p.presence));
        }
        kids.push_back(std::move(node));
        it = kids.end() - 1;
      }
      at = &*it;
    }
  }
  return root["children"];
}

}  // namespace cw::latency
