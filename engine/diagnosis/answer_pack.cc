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

// `tid == T and ts == TS` of an event, with a prefix ("from.", "to.", ""): this recording's
// event and no other.
std::string event_match(const Trace& trace, uint32_t event, std::string_view prefix) {
  const Event& e = trace.events[event];
  return fmt::format("{0}tid == {1} and {0}ts == {2}", prefix, e.tid, e.ts);
}

// Where an event is in the program rather than in this recording: its process's and
// thread's names, its kind and its innermost named user frame. A new recording of the same
// program has other tids and times but the same places, so an answer that names a place
// still answers there.
struct Place {
  std::string process, thread, kind, frame;  // frame: "" when no user frame is named
  bool operator==(const Place&) const = default;
};

Place place_of(const Trace& trace, uint32_t event) {
  const Event& e = trace.events[event];
  Place p;
  p.kind = trace.schema.kind(e.kind).name;
  if (const ThreadInfo* t = trace.thread(e.tid)) {
    p.thread = trace.strings.get(t->comm);
    if (const ProcessInfo* proc = trace.process(t->pid)) p.process = trace.strings.get(proc->comm);
  }
  const Stack& stack = trace.stacks[e.stack];
  for (size_t i = std::min<size_t>(stack.kernel, stack.symbols.size()); i < stack.symbols.size();
       ++i)
    if (stack.symbols[i] != 0) {
      p.frame = trace.strings.get(stack.symbols[i]);
      break;
    }
  return p;
}

// A place as a rule's condition over the event `prefix` names (docs/rules.md "answer").
std::string place_match(const Place& p, std::string_view prefix, bool with_frame) {
  std::string out =
      fmt::format("{0}process.comm == {1} and {0}thread.comm == {2} and {0}kind == {3}", prefix,
                  cw::quoted(p.process), cw::quoted(p.thread), cw::quoted(p.kind));
  if (with_frame && !p.frame.empty())
    out += fmt::format(" and {} in {}stack", cw::quoted(p.frame), prefix);
  return out;
}

// What an answer rule's `choose` compares for an option: the edge's two ends and kind, or
// the candidate segment's first event.
struct OptionPlace {
  Place from, to;
  std::string edge_kind;
  bool operator==(const OptionPlace&) const = default;
};

OptionPlace option_place(const Trace& trace, const Graph& graph, const Question& q,
                         const Option& o) {
  if (q.kind == QuestionKind::Edge) {
    const Edge& e = graph.edges.at(o.edge);
    return {place_of(trace, e.from_event), place_of(trace, e.to_event), graph.kind_name(e)};
  }
  return {place_of(trace, graph.segments.at(o.segment).first), {}, {}};
}

// Whether a place-level choice picks `chosen` in `q`: the engine takes the first option
// that matches, so no option before it may look the same. `with_frame` compares frames too.
bool picks_by_place(const Trace& trace, const Graph& graph, const Question& q, const Option& chosen,
                    bool with_frame) {
  auto key = [&](const Option& o) {
    OptionPlace p = option_place(trace, graph, q, o);
    if (!with_frame) p.from.frame = p.to.frame = "";
    return p;
  };
  const OptionPlace want = key(chosen);
  for (const Option& o : q.options) {
    if (&o == &chosen) return true;
    if (!o.stop && key(o) == want) return false;
  }
  return false;
}

std::string_view question_word(QuestionKind k) {
  return question_kind_name(k);
}

std::string choose_clause(const Trace& trace, const Graph& graph, const Question& q,
                          const Option& o, bool by_place) {
  if (o.stop) return "stop";
  if (q.kind == QuestionKind::Recurse) return "recurse";
  if (by_place)
    for (bool with_frame : {false, true})
      if (picks_by_place(trace, graph, q, o, with_frame)) {
        const OptionPlace p = option_place(trace, graph, q, o);
        if (q.kind == QuestionKind::Baseline) return place_match(p.from, "", with_frame);
        return fmt::format("{} and {} and edge.kind == {}",
                           place_match(p.from, "from.", with_frame),
                           place_match(p.to, "to.", with_frame), cw::quoted(p.edge_kind));
      }
  if (q.kind == QuestionKind::Edge) {
    const Edge& e = graph.edges.at(o.edge);
    return fmt::format("{} and {} and edge.kind == {}", event_match(trace, e.from_event, "from."),
                       event_match(trace, e.to_event, "to."), cw::quoted(graph.kind_name(e)));
  }
  return event_match(trace, graph.segments.at(o.segment).first, "");
}

// The saved queries whose subject is at the same place as another saved query of the same
// kind answered otherwise: a rule naming the place would answer both alike, so these are
// saved for this recording's events alone.
std::vector<bool> places_shared(const Trace& trace, const Graph& graph,
                                const std::vector<const Query*>& saved) {
  std::vector<bool> shared(saved.size(), false);
  auto subject = [&](const Query& q) {
    return place_of(trace, graph.segments.at(q.question.subject).first);
  };
  auto answer = [&](const Query& q) {
    const Option& o = q.question.options.at(q.answer.option);
    if (o.stop) return std::string("stop");
    if (q.question.kind == QuestionKind::Recurse) return std::string("recurse");
    const OptionPlace p = option_place(trace, graph, q.question, o);
    return fmt::format("{}|{}|{}|{}|{}|{}|{}", p.from.process, p.from.thread, p.from.kind,
                       p.from.frame, p.to.thread, p.to.kind, p.edge_kind);
  };
  for (size_t i = 0; i < saved.size(); ++i)
    for (size_t j = 0; j < saved.size(); ++j)
      if (i != j && saved[i]->question.kind == saved[j]->question.kind &&
          subject(*saved[i]) == subject(*saved[j]) && answer(*saved[i]) != answer(*saved[j]))
        shared[i] = true;
  return shared;
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

  std::vector<const Query*> saved;
  for (const Query& q : d.queries)
    if (q.answer.source != AnswerSource::Rule) saved.push_back(&q);
  const std::vector<bool> shared = places_shared(trace, graph, saved);
  for (size_t n = 0; n < saved.size(); ++n) {
    const Query& q = *saved[n];
    const Option& chosen = q.question.options.at(q.answer.option);
    const uint32_t subject = graph.segments.at(q.question.subject).first;
    out += fmt::format("\n# {}\n# chosen: {} ({})\n", comment_text(q.question.text),
                       comment_text(chosen.label), answer_source_name(q.answer.source));
    out += fmt::format("answer q{} {{\n", n + 1);
    out += fmt::format("  question {}\n", question_word(q.question.kind));
    out +=
        fmt::format("  subject {}\n", shared[n] ? event_match(trace, subject, "")
                                                : place_match(place_of(trace, subject), "", true));
    out += fmt::format("  choose {}\n}}\n",
                       choose_clause(trace, graph, q.question, chosen, !shared[n]));
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
