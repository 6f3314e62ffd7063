#include "cli/debug_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <set>

#include "cli/diagnose_input.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "engine/diagnosis/answer_pack.h"
#include "engine/diagnosis/debug_report.h"

namespace cw::cli {

std::optional<HangAndAnswers> read_hang_and_answers(const DiagnosisArgs& a) {
  return read_hang_and_answers(a.hang, a.answers);
}

void unnamed_frames_note(const std::string& path, const engine::Graph& graph,
                         const engine::Diagnosis& d, const SymbolizeReport& symbols) {
  std::set<Pid> pids = {d.hang.pid};
  for (const auto& rc : d.root_causes) pids.insert(graph.segments[rc.segment].pid);
  for (const auto& step : d.path) pids.insert(graph.segments[step.segment].pid);
  for (const auto& step : d.baseline_path) pids.insert(graph.segments[step.segment].pid);
  std::set<std::string> files;
  for (Pid pid : pids)
    if (auto it = symbols.files_not_found_by_pid.find(pid);
        it != symbols.files_not_found_by_pid.end())
      files.insert(it->second.begin(), it->second.end());
  if (!files.empty())
    std::cerr << fmt::format(
        "{}: note: stack frames of the processes in this diagnosis unnamed; not found: {}\n", path,
        fmt::join(files, ", "));
}

nlohmann::json debug_report_json(const Trace& trace, const engine::Graph& graph,
                                 const engine::Diagnosis& diagnosis) {
  nlohmann::json j = engine::debug_json(trace, graph, diagnosis);
  const uint64_t start = engine::trace_start_ns(trace);
  add_seconds_since_start(j, start);
  j["trace_start_ns"] = start;
  return j;
}

SavedAnswers save_answers(const std::string& dir, const std::string& trace_path,
                          const std::string& hang, const rules::RuleSet& ruleset,
                          const Trace& trace, const engine::Graph& graph,
                          const engine::Diagnosis& diagnosis) {
  std::vector<std::string> pack_ids;
  for (const auto& p : ruleset.packs) pack_ids.push_back(p.id);
  try {
    std::string file =
        engine::save_answer_pack(dir, trace_path, hang, pack_ids, trace, graph, diagnosis);
    const size_t n = engine::saved_answer_count(diagnosis);
    return {kExitOk,
            fmt::format("saved {} answer{} as rules in {}; re-run with --rules {} to ask nothing",
                        n, n == 1 ? "" : "s", file, dir)};
  } catch (const std::invalid_argument& e) {
    return {kExitBadInput, fmt::format("causeway: {}", e.what())};
  } catch (const std::exception& e) {
    return {kExitEnvironment, fmt::format("causeway: {}", e.what())};
  }
}

}  // namespace cw::cli
