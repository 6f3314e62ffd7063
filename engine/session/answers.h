// What a diagnosis is asked: the symptom (`--hang`) and the answers given ahead (an
// answers file), read as pack tests read theirs so that saved answers replay the same.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "rules/ruleset.h"

namespace cw::session {

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

// The lines of an answers file; throws SessionError (bad input) when it cannot be read.
std::vector<std::string> read_answer_lines(const std::string& path);

// --hang and --answers as given: the symptom and the answers file's lines (none when
// `answers` is empty). Throws SessionError (bad input) saying why either is wrong.
struct HangAndAnswers {
  rules::HangSpec hang;
  std::vector<std::string> answer_lines;
};
HangAndAnswers read_hang_and_answers(const std::string& hang, const std::string& answers);

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
  // "FILE: note: N answers not used: …" when some were left over.
  std::optional<std::string> unused_note() const;

 private:
  std::string path_;
  std::vector<std::string> lines_;
  engine::Answerer& fallback_;
  size_t next_ = 0;
};

}  // namespace cw::session
