// One scenario's diagnosis, measured the way the Argus paper's Table 2 measures its cases, and
// compared with the scenario's ground truth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/diagnosis/questions.h"
#include "eval/scenario.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::eval {

// The Table 2 columns (docs/scenarios.md defines each).
struct Columns {
  uint64_t connections = 0;  // edges between threads (not neighbour edges) in the graph
  // Connections through a segment (an edge in from another thread, a later one out to
  // another thread): how many the graph would claim with no split or batch rule, and how
  // many of those the rules' cuts withdrew.
  uint64_t without_cuts = 0;
  uint64_t filtered_out = 0;
  uint64_t added = 0;        // edges made by flag rules, boosted, or by the scenario's pack
  uint64_t data_flags = 0;   // flag rules with at least one edge
  uint32_t questions = 0;    // questions asked (not decided by a pack's answer rule)
  uint32_t baseline = 0;     // segments on the baseline's path (0: no baseline)
  uint32_t interactive = 0;  // segments on the diagnosis's path
  uint32_t automatic = 0;    // segments on the most-recent-edge slice from the hang
};

struct Outcome {
  bool match = false;
  std::vector<std::string> mismatches;  // what differed from the truth, one line each
  std::string hang;                     // "cw-browser LongWait 1.500 s"
  std::string root_cause;               // "cw-renderer LongWait: blocked …"
  std::string root_comm, root_kind;     // "cw-renderer", "LongWait"
  std::vector<std::string> path;        // comms, root cause first
  std::vector<std::string> notes;       // the diagnosis's notes
  std::vector<engine::Query> queries;
  std::string report;  // the diagnosis as `causeway debug` prints it
  Columns columns;
};

// The scripted user of a scenario: each question takes the first unused answer of its kind
// whose text is in an option's label; otherwise the best-scored option.
class ScriptedAnswerer : public engine::Answerer {
 public:
  explicit ScriptedAnswerer(std::vector<ScriptedAnswer> script) : script_(std::move(script)) {}
  engine::Answer ask(const engine::Question& q) override;
  bool wants_evidence() const override { return false; }

 private:
  std::vector<ScriptedAnswer> script_;
  std::vector<bool> used_ = std::vector<bool>(script_.size(), false);
};

// Builds the graph of `trace` under `rules`, diagnoses it with the scenario's answers and
// checks the truth. `scenario_pack` is the id of the scenario's pack in `rules` ("" when
// not loaded): edges its rules made count as added. Throws what the engine throws
// (DiagnoseError: no such hang) — the caller reports it as the scenario's error.
Outcome evaluate(const Scenario& scenario, const Trace& trace, const rules::RuleSet& rules,
                 const std::string& scenario_pack);

}  // namespace cw::eval
