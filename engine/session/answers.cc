#include "engine/session/answers.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>

#include "engine/session/session_error.h"

namespace cw::session {

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
                                       double min_hang_s) {
  engine::SymptomRequest r;
  if (!hang.automatic) {
    r.mode = engine::SymptomRequest::Mode::ThreadAt;
    r.tid = hang.tid;
    r.at_ns = engine::trace_start_ns(trace) + hang.offset_ns;
  }
  r.thread_name = hang.thread_name;
  r.min_hang_ns = static_cast<uint64_t>(min_hang_s * 1e9);
  return r;
}

std::vector<std::string> read_answer_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw SessionError(SessionError::Kind::BadInput,
                       fmt::format("causeway: {}: cannot read", path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Answer FileAnswerer::ask(const Question& q) {
  while (next_ < lines_.size()) {
    const size_t line_no = ++next_;
    std::string line = lines_[line_no - 1];
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = trim(line);
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
  for (size_t i = next_; i < lines_.size(); ++i) {
    std::string line = lines_[i];
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (!trim(line).empty()) ++n;
  }
  return n;
}

std::optional<std::string> FileAnswerer::unused_note() const {
  const size_t n = unused();
  if (n == 0) return std::nullopt;
  return fmt::format("{}: note: {} answer{} not used: the diagnosis asked fewer questions", path_,
                     n, n == 1 ? "" : "s");
}

HangAndAnswers read_hang_and_answers(const std::string& hang, const std::string& answers) {
  std::string why;
  auto spec = parse_hang(hang, &why);
  if (!spec) throw SessionError(SessionError::Kind::BadInput, "causeway: " + why);
  HangAndAnswers out{*spec, {}};
  if (!answers.empty()) out.answer_lines = read_answer_lines(answers);
  return out;
}

}  // namespace cw::session
