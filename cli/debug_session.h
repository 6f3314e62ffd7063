// What `causeway debug` and `causeway ui` share around a diagnosis (beside
// cli/diagnose_input.h, which `export` shares too): their options, the JSON report, and
// --save-answers.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/diagnose_input.h"
#include "cli/trace_input.h"
#include "engine/diagnosis/diagnose.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::cli {

// What `debug` and `ui` both take: the trace and its form, the packs, the symptom, the
// answers file and where to save the answers, --json, --no-cache.
struct DiagnosisArgs {
  std::string trace;
  std::string format = "auto";
  std::vector<std::string> rules;
  bool no_stdlib = false;
  std::string hang = "auto";
  std::string answers;
  std::string save_answers;
  bool json = false;
  bool no_cache = false;
};

// read_hang_and_answers (cli/diagnose_input.h) of a.hang and a.answers.
std::optional<HangAndAnswers> read_hang_and_answers(const DiagnosisArgs& a);

// --min-hang's default: shorter stretches are not a hang worth diagnosing.
inline constexpr double kDefaultMinHangSeconds = 0.5;

// On stderr, the files that left stack frames unnamed, only for the processes the
// diagnosis is about (the hang's, the root causes', the path's): a library another process
// mapped (a JIT's /memfd: region) says nothing about this diagnosis.
void unnamed_frames_note(const std::string& path, const engine::Graph& graph,
                         const engine::Diagnosis& d, const SymbolizeReport& symbols);

// `debug --json`'s document (docs/json.md): the report with seconds since the trace
// started beside each absolute time, and the trace's start; without the schema version.
nlohmann::json debug_report_json(const Trace& trace, const engine::Graph& graph,
                                 const engine::Diagnosis& diagnosis);

// --save-answers DIR: the diagnosis's answers as a pack requiring `ruleset`'s packs (the
// trace at `trace_path`, the symptom `hang` as given). `message` says what was saved, or
// why not (for stderr); `status` is kExitBadInput when DIR holds a pack causeway did not
// write, kExitEnvironment when it cannot be written.
struct SavedAnswers {
  int status = 0;
  std::string message;
};
SavedAnswers save_answers(const std::string& dir, const std::string& trace_path,
                          const std::string& hang, const rules::RuleSet& ruleset,
                          const Trace& trace, const engine::Graph& graph,
                          const engine::Diagnosis& diagnosis);

}  // namespace cw::cli
