#include "engine/session/diagnosis_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <stdexcept>

#include "base/source.h"
#include "engine/diagnosis/answer_pack.h"
#include "engine/session/answers.h"
#include "engine/session/session_error.h"
#include "rules/lua_sandbox.h"

namespace cw::session {

DiagnosisRun run_diagnosis(const Trace& trace, const engine::BuildResult& built,
                           const rules::RuleSet& rules, const engine::DiagnoseOptions& options,
                           bool missing_is_no_hang) {
  using Kind = SessionError::Kind;
  DiagnosisRun run;
  try {
    run.diagnosis = engine::diagnose(trace, built, rules, options);
  } catch (const engine::NoHangFound& e) {
    run.no_hang = e.what();
  } catch (const engine::DiagnoseError& e) {
    if (!missing_is_no_hang)
      throw SessionError(Kind::BadInput, fmt::format("causeway: {}", e.what()));
    run.no_hang = e.what();
  } catch (const AnswersFileError& e) {
    throw SessionError(Kind::BadInput, e.what());
  } catch (const DiagnosticError& e) {
    throw SessionError(Kind::BadInput, e.what());
  } catch (const rules::LuaError& e) {
    throw SessionError(Kind::BadInput, e.what());
  }
  return run;
}

std::optional<std::string> unnamed_frames_note(const std::string& trace_path,
                                               const engine::Graph& graph,
                                               const engine::Diagnosis& d,
                                               const SymbolizeReport& symbols) {
  std::set<Pid> pids = {d.hang.pid};
  for (const auto& rc : d.root_causes) pids.insert(graph.segments[rc.segment].pid);
  for (const auto& step : d.path) pids.insert(graph.segments[step.segment].pid);
  for (const auto& step : d.baseline_path) pids.insert(graph.segments[step.segment].pid);
  std::set<std::string> files;
  for (Pid pid : pids)
    if (auto it = symbols.files_not_found_by_pid.find(pid);
        it != symbols.files_not_found_by_pid.end())
      files.insert(it->second.begin(), it->second.end());
  if (files.empty()) return std::nullopt;
  return fmt::format(
      "{}: note: stack frames of the processes in this diagnosis unnamed; not found: {}",
      trace_path, fmt::join(files, ", "));
}

std::string save_answers(const std::string& dir, const std::string& trace_path,
                         const std::string& hang, const rules::RuleSet& ruleset, const Trace& trace,
                         const engine::Graph& graph, const engine::Diagnosis& diagnosis) {
  std::vector<std::string> pack_ids;
  for (const auto& p : ruleset.packs) pack_ids.push_back(p.id);
  std::string file;
  try {
    file = engine::save_answer_pack(dir, trace_path, hang, pack_ids, trace, graph, diagnosis);
  } catch (const std::invalid_argument& e) {
    throw SessionError(SessionError::Kind::BadInput, fmt::format("causeway: {}", e.what()));
  } catch (const std::exception& e) {
    throw SessionError(SessionError::Kind::Environment, fmt::format("causeway: {}", e.what()));
  }
  const size_t n = engine::saved_answer_count(diagnosis);
  return fmt::format("saved {} answer{} as rules in {}; re-run with --rules {} to ask nothing", n,
                     n == 1 ? "" : "s", file, dir);
}

}  // namespace cw::session
