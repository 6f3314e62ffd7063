// What `causeway debug` and `causeway ui` share around a diagnosis: the --hang and
// --answers options, the symptom they ask for, the JSON report, and --save-answers.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

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

// --min-hang's default: shorter stretches are not a hang worth diagnosing.
inline constexpr double kDefaultMinHangSeconds = 0.5;

// `--hang`: "auto", TID@SECONDS (seconds since the trace started) or a thread name, read as
// pack tests read their `hang` (rules::parse_hang_spec) so that saved answers replay the
// same symptom. nullopt with `*why` set (the message for the user) when it is none of them.
std::optional<rules::HangSpec> parse_hang(const std::string& s, std::string* why);

// What the diagnosis is asked to explain: `hang` in `trace`, candidates shorter than
// `min_hang_seconds` being no hang.
engine::SymptomRequest symptom_request(const Trace& trace, const rules::HangSpec& hang,
                                       double min_hang_seconds);

// The option that stops (Option::stop), if the question has one.
std::optional<uint32_t> stop_option(const engine::Question& q);
// An option number 1..n as typed, made an index, or nullopt.
std::optional<uint32_t> option_number(const std::string& s, size_t n);
std::string trim(std::string_view s);

struct AnswersFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The lines of `--answers FILE`; false, having said so on stderr, when it cannot be read.
bool read_answers_file(const std::string& path, std::vector<std::string>& lines);

// `--answers FILE`: each line that is not blank and not a `#` comment answers the next
// question, with an option number or `s`; then `fallback` answers. A line that answers
// nothing throws AnswersFileError naming the file and line.
class FileAnswerer : public engine::Answerer {
 public:
  FileAnswerer(std::string path, std::vector<std::string> lines, engine::Answerer& fallback)
      : path_(std::move(path)), lines_(std::move(lines)), fallback_(fallback) {}

  engine::Answer ask(const engine::Question& q) override;
  // Answers left over once the diagnosis is done.
  size_t unused() const;

 private:
  std::string path_;
  std::vector<std::string> lines_;
  engine::Answerer& fallback_;
  size_t next_ = 0;
};

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
