// A scenario of the suite (tests/scenarios/README.md): how to run it and its ground truth,
// read from its folder's scenario.json.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cw::eval {

struct EdgeTruth {
  std::string from, to;  // comms
  std::string kind;      // "" = any kind
};

struct ScriptedAnswer {
  std::string kind;    // "edge", "baseline", "recurse"
  std::string choose;  // text in the chosen option's label, or "stop"
};

struct Scenario {
  std::string name;  // the folder's name, "01-livelock"
  std::string dir;   // the folder
  std::string title, case_name, story;
  std::vector<std::string> command;  // what `record --` runs
  std::vector<std::string> record;   // more `record` options
  std::string pack;                  // the scenario's pack, a path; "" = none
  bool needs_pack = false;
  // A found pack (stdlib or a search folder) that must apply to the recording by itself
  // and make its diagnosis better than without it: "" = none.
  std::string uses_pack;
  std::string hang = "auto";  // "auto" or a thread's comm
  std::vector<ScriptedAnswer> answers;
  struct {
    std::string comm, kind;
  } hang_truth;
  struct {
    std::string comm, kind, what, stack;
  } root_truth;
  std::vector<std::string> path_truth;
  std::vector<EdgeTruth> edges, not_edges;
};

// A scenario.json that cannot be used: what() is "FILE: where: what".
struct ScenarioError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads DIR/scenario.json. Unknown keys, missing required keys, wrong types and a `pack`
// that does not exist are errors that name the key.
Scenario load_scenario(const std::string& dir);

// The scenario folders under `suite` (those with a scenario.json), sorted by name.
std::vector<std::string> scenario_dirs(const std::string& suite);

}  // namespace cw::eval
