// What `debug` and `export` share to diagnose a trace named on the command line: the
// --hang symptom, the --answers file, and the diagnosis run with its errors reported.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "rules/ruleset.h"

namespace cw::cli {

// `--hang`: "auto", TID@SECONDS (seconds since the trace started) or a thread name, read as
// pack tests read their `hang` (rules::parse_hang_spec) so that saved answers replay the
// same symptom. Nothing, with `why`, when it is none of those.
std::optional<rules::HangSpec> parse_hang(const std::string& s, std::string* why);

// The symptom to look for: `hang`, in `trace`; with auto or a name, none below `min_hang_s`.
engine::SymptomRequest symptom_request(const Trace& trace, const rules::HangSpec& hang,
                                       double min_hang_s);

// `s` without leading and trailing blanks.
std::string trim(std::string_view s);
// An option number 1..n as typed, as an index, or nothing.
std::optional<uint32_t> option_number(const std::string& s, size_t n);
// The option of `q` that stops the diagnosis, if it has one.
std::optional<uint32_t> stop_option(const engine::Question& q);

struct AnswersFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The lines of an answers file; false, having said so on stderr, when it cannot be read.
bool read_answer_lines(const std::string& path, std::vector<std::string>& lines);

// --hang and --answers as given: the symptom and the answers file's lines; nullopt, having
// said why on stderr, when either is wrong (bad input).
struct HangAndAnswers {
  rules::HangSpec hang;
  std::vector<std::string> answer_lines;
};
std::optional<HangAndAnswers> read_hang_and_answers(const std::string& hang,
                                                    const std::string& answers);

// `--answers FILE`: each line that is not blank and not a `#` comment answers the next
// question, with an option number or `s`; then `fallback` answers. A line that is no
// answer to its question throws AnswersFileError saying FILE:LINE.
class FileAnswerer : public engine::Answerer {
 public:
  FileAnswerer(std::string path, std::vector<std::string> lines, engine::Answerer& fallback)
      : path_(std::move(path)), lines_(std::move(lines)), fallback_(fallback) {}
  engine::Answer ask(const engine::Question& q) override;
  // Answers left over once the diagnosis is done.
  size_t unused() const;
  // Says on stderr how many were left over, if any.
  void note_unused() const;

 private:
  std::string path_;
  std::vector<std::string> lines_;
  engine::Answerer& fallback_;
  size_t next_ = 0;
};

// A diagnosis, or why there is none: `no_hang` (auto found nothing that long: not an
// error) or an exit status other than kExitOk, its message already on stderr.
struct DiagnosisRun {
  int rc = 0;
  std::optional<engine::Diagnosis> diagnosis;
  std::optional<std::string> no_hang;
};

// engine::diagnose with its errors (a symptom not in the trace, an answers file line, a
// rule's or Lua hook's error) said on stderr as bad input. `before_error` runs first (a
// progress line to clear). With `missing_is_no_hang`, a symptom that cannot be found (no
// candidate thread for auto) is `no_hang` too, for a command that has a use without one.
DiagnosisRun run_diagnosis(const Trace& trace, const engine::BuildResult& built,
                           const rules::RuleSet& rules, const engine::DiagnoseOptions& options,
                           const std::function<void()>& before_error = {},
                           bool missing_is_no_hang = false);

}  // namespace cw::cli
