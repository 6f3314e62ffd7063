// One scenario of the suite run end to end: its programs recorded with the real recorder
// (`causeway record` as a child process), the recording read back and diagnosed with the
// scenario's scripted answers, under its pack and, for a scenario that needs its pack,
// once more without it (docs/scenarios.md).
#pragma once

#include <string>

#include "engine/session/reporter.h"
#include "eval/scenario.h"
#include "eval/suite_summary.h"

namespace cw::eval {

struct ScenarioRun {
  std::string programs;  // where the cw-scn-* programs are
  std::string out_dir;   // NAME.cwt and NAME.record.log go here
  bool record = true;    // false: diagnose the recording a previous run left in out_dir
  // Given to every recording after the scenario's own (eval --record-option): the same
  // suite recorded another way, e.g. --full.
  std::vector<std::string> record_options;
  // Diagnose the recording this many times more, each with one context switch of the
  // recorded threads lost as a kernel loses one and the decoder then writes it
  // (eval/lost_switch.h); 0: not.
  uint32_t lose_switches = 0;
};

// Never throws for the scenario's own failures: they are in the result's `error`. What
// reading the trace has to say goes to `reporter`.
ScenarioResult run_scenario(const Scenario& s, const ScenarioRun& run, session::Reporter& reporter);

}  // namespace cw::eval
