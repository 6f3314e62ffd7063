#include "engine/diagnosis/answer_pack.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "base/output_file.h"
#include "base/quoted.h"
#include "engine/diagnosis/questions.h"
#include "engine/diagnosis/symptom.h"

namespace fs = std::filesystem;

namespace cw::engine {
namespace {

// Text for a `#` comment: one line.
std::string comment_text(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

// `tid == T and ts == TS` of an event, with a prefix ("from.", "to.", "").
std::string event_match(const Trace& trace, uint32_t event, std::string_view prefix) {
  const Event& e = trace.events[event];
  return fmt::format("{0}tid == {1} and {0}ts == {2}", prefix, e.tid, e.ts);
}

std::string_view question_word(QuestionKind k) {
  return question_kind_name(k);
}

std::string choose_clause(const Trace& trace, const Graph& graph, const Question& q,
                          const Option& o) {
  if (o.stop) return "stop";
  switch (q.kind) {
    case QuestionKind::Edge: {
      const Edge& e = graph.edges.at(o.edge);
      return fmt::format("{} and {} and edge.kind == {}", event_match(trace, e.from_event, "from."),
                         event_match(trace, e.to_event, "to."), cw::quoted(graph.kind_name(e)));
    }
    case QuestionKind::Baseline: return event_match(trace, graph.segments.at(o.segment).first, "");
    case QuestionKind::Recurse: break;
  }
  return "recurse";
}

}  // namespace

std::string answer_pack_id(const std::string& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "out/answers/" names "answers"
  const std::string name = p.filename().string();
  std::string id;
  for (char c : name) id += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (id.empty()) id = "saved";
  if (std::isdigit(static_cast<unsigned char>(id[0]))) id = "_" + id;
  return "answers." + id;
}

size_t saved_answer_count(const Diagnosis& diagnosis) {
  size_t n = 0;
  for (const Query& q : diagnosis.queries)
    if (q.answer.source != AnswerSource::Rule) ++n;
  return n;
}

std::string answer_pack_text(const Trace& trace, const Graph& graph, const Diagnosis& d,
                             const AnswerPackSpec& spec) {
  std::string out(kAnswerPackMarker);
  out +=
      "\n# Re-run the diagnosis with --rules on this folder: every question below is\n"
      "# answered without asking. Edit a `choose` to answer differently.\n\n";
  out += fmt::format("pack {} {{\n  version \"1.0.0\"\n  engine \">= 0.1\"\n", spec.pack_id);
  if (!spec.requires_.empty()) {
    out += "  requires ";
    for (size_t i = 0; i < spec.requires_.size(); ++i) out += (i ? ", " : "") + spec.requires_[i];
    out += "\n";
  }
  out += fmt::format("  description {}\n}}\n",
                     cw::quoted("Answers saved by causeway debug from " + spec.trace_file));

  size_t n = 0;
  for (size_t i = 0; i < d.queries.size(); ++i) {
    const Query& q = d.queries[i];
    if (q.answer.source == AnswerSource::Rule) continue;
    const Option& chosen = q.question.options.at(q.answer.option);
    ++n;
    out += fmt::format("\n# {}\n# chosen: {} ({})\n", comment_text(q.question.text),
                       comment_text(chosen.label), answer_source_name(q.answer.source));
    out += fmt::format("answer q{} {{\n", n);
    out += fmt::format("  question {}\n", question_word(q.question.kind));
    out += fmt::format("  subject {}\n",
                       event_match(trace, graph.segments.at(q.question.subject).first, ""));
    out += fmt::format("  choose {}\n}}\n", choose_clause(trace, graph, q.question, chosen));
  }

  out += fmt::format("\ntest \"replays the saved diagnosis\" {{\n  trace file {}\n  hang {}\n",
                     cw::quoted(spec.trace_file), cw::quoted(spec.hang));
  out += fmt::format("  expect hang {} kind {}\n", d.hang.tid, hang_kind_name(d.hang.kind));
  if (!d.root_causes.empty()) {
    const RootCause& rc = d.root_causes.front();
    out += fmt::format("  expect root_cause {} kind {}\n", graph.segments.at(rc.segment).tid,
                       hang_kind_name(rc.kind));
  }
  out += "  expect questions == 0\n}\n";
  return out;
}

std::string save_answer_pack(const std::string& dir, const std::string& trace_path,
                             const std::string& hang, const std::vector<std::string>& packs,
                             const Trace& trace, const Graph& graph, const Diagnosis& diagnosis) {
  const fs::path folder(dir);
  const fs::path file = folder / "pack.cw";
  std::error_code ec;
  if (fs::exists(file, ec)) {
    std::ifstream in(file);
    std::string first;
    std::getline(in, first);
    if (first != kAnswerPackMarker)
      throw std::invalid_argument(fmt::format(
          "{}: not overwritten: this pack was not written by causeway debug --save-answers "
          "(its first line is not the marker comment); choose another folder",
          file.string()));
  }
  fs::create_directories(folder, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("{}: cannot make the folder: {}", folder.string(), ec.message()));

  // The test names the trace relative to the pack when the two share a folder below `/`.
  const fs::path trace_abs = fs::absolute(trace_path).lexically_normal();
  const fs::path folder_abs = fs::absolute(folder).lexically_normal();
  std::string trace_file = trace_abs.string();
  auto t = trace_abs.begin(), f = folder_abs.begin();
  if (t != trace_abs.end() && f != folder_abs.end() && *t == *f && ++t != trace_abs.end() &&
      ++f != folder_abs.end() && *t == *f)
    trace_file = trace_abs.lexically_relative(folder_abs).string();

  AnswerPackSpec spec{answer_pack_id(dir), trace_file, hang, {}};
  for (const auto& p : packs)
    if (p != spec.pack_id) spec.requires_.push_back(p);
  std::string text = answer_pack_text(trace, graph, diagnosis, spec);
  std::string why;
  if (!write_output_file(file.string(), text, 0644, &why)) throw std::runtime_error(why);
  return file.string();
}

}  // namespace cw::engine
