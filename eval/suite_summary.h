// The suite's results: the Table 2 columns per scenario, whether each matched its ground
// truth, and the summary (docs/scenarios.md), as Markdown or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/evaluate.h"
#include "eval/scenario.h"

namespace cw::eval {

struct ScenarioResult {
  Scenario scenario;
  std::string trace;                    // the recording
  std::string error;                    // could not record or diagnose: why ("" = it ran)
  std::optional<Outcome> with_rules;    // stdlib-rules + the scenario's pack
  std::optional<Outcome> without_pack;  // stdlib-rules alone (needs_pack), or the packs
                                        // found less uses_pack

  double record_seconds = 0;

  // ScenarioRun::lose_switches: each run with one switch lost, what it diagnosed.
  struct LostSwitchRun {
    uint64_t ts = 0;      // the lost switch's time
    Tid out = 0, in = 0;  // the threads it switched out and in (0: none recorded)
    bool match = false;
    std::string result;  // the root cause found, or the error
  };
  std::vector<LostSwitchRun> lost_switch_runs;

  // Matched its truth, and (needs_pack) did not without the pack, or (uses_pack) did worse
  // without it.
  bool passed() const;
  // Whether the scenario's pass depends on a pack (needs_pack or uses_pack).
  bool pack_dependent() const { return scenario.needs_pack || !scenario.uses_pack.empty(); }
};

// A pack is shown to help when the diagnosis with it matches and the one without it
// misses the truth or matches after more questions.
bool better_than(const Outcome& with, const Outcome& without);

// What the diagnosis without the scenario's pack did, in a few words.
std::string without_pack_summary(const ScenarioResult& r);

struct Summary {
  size_t scenarios = 0, passed = 0;
  double median_questions = 0;
  size_t rule_dependent = 0, failing_without_rule = 0;
};
Summary summarize(const std::vector<ScenarioResult>& results);

std::string render_markdown(const std::vector<ScenarioResult>& results);
nlohmann::json render_json(const std::vector<ScenarioResult>& results);

}  // namespace cw::eval
