// Running the diagnosis of a built graph, and what follows from one: the files that left
// its stack frames unnamed, and its answers saved as a pack.
#pragma once

#include <optional>
#include <string>

#include "engine/diagnosis/diagnose.h"
#include "rules/ruleset.h"
#include "trace/symbolize.h"
#include "trace/trace.h"

namespace cw::session {

// A diagnosis, or why there is none: `no_hang` (auto found nothing that long: not an
// error).
struct DiagnosisRun {
  std::optional<engine::Diagnosis> diagnosis;
  std::optional<std::string> no_hang;
};

// engine::diagnose, its errors (a symptom not in the trace, an answers file's line, a
// rule's or Lua hook's error) thrown as SessionError (bad input). With
// `missing_is_no_hang`, a symptom that cannot be found (no candidate thread for auto) is
// `no_hang` too, for a command that has a use without one.
DiagnosisRun run_diagnosis(const Trace& trace, const engine::BuildResult& built,
                           const rules::RuleSet& rules, const engine::DiagnoseOptions& options,
                           bool missing_is_no_hang = false);

// "TRACE: note: …" naming the files that left stack frames unnamed, only for the processes
// the diagnosis is about (the hang's, the root causes', the path's): a library another
// process mapped (a JIT's /memfd: region) says nothing about this diagnosis.
std::optional<std::string> unnamed_frames_note(const std::string& trace_path,
                                               const engine::Graph& graph,
                                               const engine::Diagnosis& d,
                                               const SymbolizeReport& symbols);

// The diagnosis's answers as a pack in folder `dir`, requiring `ruleset`'s packs (the trace
// at `trace_path`, the symptom `hang` as given). Returns what was saved; throws
// SessionError: bad input when `dir` holds a pack causeway did not write, the environment
// when it cannot be written.
std::string save_answers(const std::string& dir, const std::string& trace_path,
                         const std::string& hang, const rules::RuleSet& ruleset, const Trace& trace,
                         const engine::Graph& graph, const engine::Diagnosis& diagnosis);

}  // namespace cw::session
