#include "cli/debug_session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <fstream>
#include <iostream>
#include <set>

#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "engine/diagnosis/answer_pack.h"
#include "engine/diagnosis/debug_report.h"

namespace cw::cli {

using engine::Answer;
using engine::AnswerSource;
using engine::Question;

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::optional<uint32_t> option_number(const std::string& s, size_t n) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 1 || v > n) return std::nullopt;
  return v - 1;
}

std::optional<uint32_t> stop_option(const Question& q) {
  for (size_t i = 0; i < q.options.size(); ++i)
    if (q.options[i].stop) return static_cast<uint32_t>(i);
  return std::nullopt;
}

std::optional<rules::HangSpec> parse_hang(const std::string& s, std::string* why) {
  if (auto spec = rules::parse_hang_spec(s)) return spec;
  std::string detail;
  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos) {
    detail = fmt::format(" (a thread id needs its time: {}@SECONDS)", s);
  } else if (size_t at = s.find('@'); at != std::string::npos) {
    const std::string tid = s.substr(0, at), secs = s.substr(at + 1);
    if (!rules::parse_hang_spec(tid + "@0"))
      detail = fmt::format(" ('{}' is not a thread id)", tid);
    else
      detail = fmt::format(" ('{}' is not a number of seconds, like 1.5)", secs);
  }
  *why = fmt::format("--hang: expected auto, TID@SECONDS or a thread name, got '{}'{}", s, detail);
  return std::nullopt;
}

engine::SymptomRequest symptom_request(const Trace& trace, const rules::HangSpec& hang,
                                       double min_hang_seconds) {
  engine::SymptomRequest symptom;
  if (!hang.automatic) {
    symptom.mode = engine::SymptomRequest::Mode::ThreadAt;
    symptom.tid = hang.tid;
    symptom.at_ns = engine::trace_start_ns(trace) + hang.offset_ns;
  }
  symptom.thread_name = hang.thread_name;
  symptom.min_hang_ns = static_cast<uint64_t>(min_hang_seconds * 1e9);
  return symptom;
}

bool read_answers_file(const std::string& path, std::vector<std::string>& lines) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << fmt::format("causeway: {}: cannot read\n", path);
    return false;
  }
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return true;
}

namespace {
// A line of an answers file without its `#` comment and surrounding blanks.
std::string answer_text(std::string line) {
  if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
  return trim(line);
}
}  // namespace

Answer FileAnswerer::ask(const Question& q) {
  while (next_ < lines_.size()) {
    const size_t line_no = ++next_;
    const std::string line = answer_text(lines_[line_no - 1]);
    if (line.empty()) continue;
    if (line == "s") {
      if (auto s = stop_option(q)) return {*s, AnswerSource::Answers, {}};
      throw AnswersFileError(fmt::format("{}:{}: 's' but question \"{}\" has no option to stop at",
                                         path_, line_no, q.text));
    }
    if (auto n = option_number(line, q.options.size())) return {*n, AnswerSource::Answers, {}};
    throw AnswersFileError(fmt::format(
        "{}:{}: expected an option number from 1 to {} or 's' for question \"{}\", got '{}'", path_,
        line_no, q.options.size(), q.text, line));
  }
  return fallback_.ask(q);
}

size_t FileAnswerer::unused() const {
  size_t n = 0;
  for (size_t i = next_; i < lines_.size(); ++i)
    if (!answer_text(lines_[i]).empty()) ++n;
  return n;
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
