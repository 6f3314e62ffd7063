#include "eval/pack_tests.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "engine/diagnosis/diagnose.h"
#include "engine/export/graph_report.h"
#include "engine/graph/builder.h"
#include "rules/loader.h"
#include "rules/lua_sandbox.h"
#include "trace/binary_format.h"
#include "trace/symbolize.h"
#include "trace/text_format.h"

namespace cw::eval {

using engine::answer_source_name;
using engine::AnswerSource;
using engine::AutoAnswerer;
using engine::build_graph;
using engine::BuildResult;
using engine::diagnose;
using engine::DiagnoseError;
using engine::DiagnoseOptions;
using engine::Diagnosis;
using engine::Edge;
using engine::Graph;
using engine::Hang;
using engine::hang_kind_name;
using engine::kNoRule;
using engine::Query;
using engine::question_kind_name;
using engine::RootCause;
using engine::RuleKind;
using engine::Segment;
using engine::stats_json;
using engine::strength_name;
using engine::SymptomRequest;
using engine::trace_start_ns;

namespace {

using rules::Expectation;
using Subject = rules::Expectation::Subject;

constexpr size_t kMaxHints = 10;
constexpr uint32_t kExpectWidth = 6;  // the caret spans the word `expect`

std::string ns(uint64_t t) {
  return fmt::format("{}ns", t);
}

// `rule R` names a rule by its qualified id or by its id inside its pack.
bool rule_matches(const std::string& written, const std::string& qualified) {
  if (written.empty()) return true;
  if (qualified.empty()) return false;
  if (written == qualified) return true;
  auto slash = qualified.find('/');
  return slash != std::string::npos &&
         qualified.compare(slash + 1, std::string::npos, written) == 0;
}

bool compare(int64_t actual, const std::string& cmp, int64_t expected) {
  if (cmp == "==") return actual == expected;
  if (cmp == "!=") return actual != expected;
  if (cmp == "<") return actual < expected;
  if (cmp == "<=") return actual <= expected;
  if (cmp == ">") return actual > expected;
  if (cmp == ">=") return actual >= expected;
  return false;
}

std::string describe(const Expectation& x) {
  std::string out = x.negated ? "expected no " : "expected ";
  switch (x.subject) {
    case Subject::Edge:
      out += fmt::format("edge {} -> {}", x.from_tid, x.to_tid);
      if (!x.kind.empty()) out += " kind " + x.kind;
      if (!x.strength.empty()) out += " strength " + x.strength;
      if (!x.rule.empty()) out += " rule " + x.rule;
      if (x.has_at) out += " at " + ns(x.at_ns);
      break;
    case Subject::Split:
      out += fmt::format("split {}", x.from_tid);
      if (x.has_at) out += " at " + ns(x.at_ns);
      if (!x.rule.empty()) out += " rule " + x.rule;
      break;
    case Subject::Segments:
      out += fmt::format("segments {} {} {}", x.from_tid, x.cmp, x.value);
      break;
    case Subject::Stat: out += fmt::format("stat {} {} {}", x.stat, x.cmp, x.value); break;
    case Subject::Hang:
    case Subject::RootCause:
      out += fmt::format("{} {}", x.subject == Subject::Hang ? "hang" : "root_cause", x.from_tid);
      if (!x.kind.empty()) out += " kind " + x.kind;
      break;
    case Subject::Questions: out += fmt::format("questions {} {}", x.cmp, x.value); break;
  }
  return out;
}

bool is_diagnosis(const Expectation& x) {
  return x.subject == Subject::Hang || x.subject == Subject::RootCause ||
         x.subject == Subject::Questions;
}

class Checker {
 public:
  // `diagnosis` may be null when the test has no diagnosis expectation.
  Checker(const Trace& trace, const BuildResult& result, const Diagnosis* diagnosis)
      : trace_(trace), result_(result), diagnosis_(diagnosis) {}

  // True when the expectation holds; else false with the message and hints.
  bool check(const Expectation& x, std::string& message, std::vector<std::string>& hints) {
    switch (x.subject) {
      case Subject::Hang: return check_hang(x, message, hints);
      case Subject::RootCause: return check_root_cause(x, message, hints);
      case Subject::Questions: return check_questions(x, message, hints);
      case Subject::Edge: return check_edge(x, message, hints);
      case Subject::Split: return check_split(x, message, hints);
      case Subject::Segments: {
        const auto* t = result_.graph.thread_segments(x.from_tid);
        int64_t n = t ? t->end - t->begin : 0;
        if (compare(n, x.cmp, x.value)) return true;
        message = "expectation failed: " + describe(x);
        hints.push_back(fmt::format("found: {} segments", n));
        return false;
      }
      case Subject::Stat: {
        nlohmann::json stats = stats_json(result_.stats);
        if (!stats.contains(x.stat)) {
          message = fmt::format("expectation failed: unknown stat '{}'", x.stat);
          std::vector<std::string> names;
          for (const auto& [k, v] : stats.items()) names.push_back(k);
          std::string close = closest_match(x.stat, names);
          if (!close.empty()) hints.push_back(fmt::format("did you mean '{}'?", close));
          return false;
        }
        int64_t n = stats[x.stat].get<int64_t>();
        if (compare(n, x.cmp, x.value)) return true;
        message = "expectation failed: " + describe(x);
        hints.push_back(fmt::format("found: {}", n));
        return false;
      }
    }
    return false;
  }

 private:
  const Segment& seg(uint32_t s) const { return result_.graph.segments[s]; }

  bool edge_matches(const Expectation& x, const Edge& e) const {
    const Graph& g = result_.graph;
    if (seg(e.from).tid != x.from_tid || seg(e.to).tid != x.to_tid) return false;
    if (!x.kind.empty() && g.kind_name(e) != x.kind) return false;
    if (!x.strength.empty()) {
      std::string want = x.strength == "boost" ? "boosted" : x.strength;
      if (strength_name(e.strength) != want) return false;
    }
    if (!x.rule.empty()) {
      bool by_rule = rule_matches(x.rule, g.rule_names.id(e.rule));
      bool by_boost = e.boost_rule != kNoRule &&
                      rule_matches(x.rule, g.rule_names.id({RuleKind::Edge, e.boost_rule}));
      if (!by_rule && !by_boost) return false;
    }
    return !x.has_at || trace_.events[e.to_event].ts == x.at_ns;
  }

  std::string edge_text(const Edge& e) const {
    const Graph& g = result_.graph;
    std::string rules = g.rule_names.id(e.rule);
    if (e.boost_rule != kNoRule)
      rules += ", boosted by " + g.rule_names.id({RuleKind::Edge, e.boost_rule});
    return fmt::format("found: {} -> {} {} {} ({}) at {}", seg(e.from).tid, seg(e.to).tid,
                       g.kind_name(e), strength_name(e.strength), rules,
                       ns(trace_.events[e.to_event].ts));
  }

  static void add_hint(std::vector<std::string>& hints, size_t& shown, std::string hint) {
    if (shown++ < kMaxHints) hints.push_back(std::move(hint));
  }
  static void close_hints(std::vector<std::string>& hints, size_t shown) {
    if (shown > kMaxHints) hints.push_back(fmt::format("… and {} more", shown - kMaxHints));
  }

  bool check_edge(const Expectation& x, std::string& message, std::vector<std::string>& hints) {
    const auto& edges = result_.graph.edges;
    bool found =
        std::any_of(edges.begin(), edges.end(), [&](const Edge& e) { return edge_matches(x, e); });
    if (found != x.negated) return true;
    message = "expectation failed: " + describe(x) + (x.negated ? " but found one" : "");
    size_t shown = 0;
    for (const Edge& e : edges) {
      bool between = seg(e.from).tid == x.from_tid && seg(e.to).tid == x.to_tid;
      if (x.negated ? edge_matches(x, e) : between) add_hint(hints, shown, edge_text(e));
    }
    close_hints(hints, shown);
    if (shown == 0)
      hints.push_back(fmt::format("found: no edges from {} to {}", x.from_tid, x.to_tid));
    return false;
  }

  bool check_split(const Expectation& x, std::string& message, std::vector<std::string>& hints) {
    const Graph& g = result_.graph;
    const auto* t = g.thread_segments(x.from_tid);
    auto matches = [&](uint32_t s) {
      return rule_matches(x.rule, g.rule_names.id(seg(s).cut_rule)) &&
             (!x.has_at || g.cut_time(trace_, s) == x.at_ns);
    };
    bool found = false;
    if (t)
      for (uint32_t s = t->begin + 1; s < t->end; ++s) found = found || matches(s);
    if (found != x.negated) return true;
    message = "expectation failed: " + describe(x) + (x.negated ? " but found one" : "");
    size_t shown = 0;
    if (t)
      for (uint32_t s = t->begin + 1; s < t->end; ++s)
        if (!x.negated || matches(s))
          add_hint(hints, shown,
                   fmt::format("found: split {} at {} ({})", x.from_tid, ns(g.cut_time(trace_, s)),
                               g.rule_names.id(seg(s).cut_rule)));
    close_hints(hints, shown);
    if (shown == 0) hints.push_back(fmt::format("found: no splits on thread {}", x.from_tid));
    return false;
  }

  bool check_hang(const Expectation& x, std::string& message, std::vector<std::string>& hints) {
    const Hang& h = diagnosis_->hang;
    if (h.tid == x.from_tid && (x.kind.empty() || hang_kind_name(h.kind) == x.kind)) return true;
    message = "expectation failed: " + describe(x);
    hints.push_back(fmt::format("found: hang {} kind {} from {} to {} ({})", h.tid,
                                hang_kind_name(h.kind), ns(h.start_ns), ns(h.end_ns), h.chosen_by));
    return false;
  }

  bool check_root_cause(const Expectation& x, std::string& message,
                        std::vector<std::string>& hints) {
    const auto& causes = diagnosis_->root_causes;
    auto tid_of = [&](const RootCause& c) {
      return c.segment < result_.graph.segments.size() ? seg(c.segment).tid : Tid{0};
    };
    if (std::any_of(causes.begin(), causes.end(), [&](const RootCause& c) {
          return tid_of(c) == x.from_tid && (x.kind.empty() || hang_kind_name(c.kind) == x.kind);
        }))
      return true;
    message = "expectation failed: " + describe(x);
    size_t shown = 0;
    for (const RootCause& c : causes)
      add_hint(hints, shown,
               fmt::format("found: root_cause {} kind {}: {}", tid_of(c), hang_kind_name(c.kind),
                           c.what));
    close_hints(hints, shown);
    if (shown == 0) hints.push_back("found: no root causes");
    for (const std::string& note : diagnosis_->notes) add_hint(hints, shown, "diagnosis: " + note);
    return false;
  }

  // Questions the test's `answer` rules did not answer: what a user would have been asked.
  bool check_questions(const Expectation& x, std::string& message,
                       std::vector<std::string>& hints) {
    const auto& queries = diagnosis_->queries;
    auto asked = [](const Query& q) { return q.answer.source != AnswerSource::Rule; };
    const auto n = static_cast<int64_t>(std::count_if(queries.begin(), queries.end(), asked));
    if (compare(n, x.cmp, x.value)) return true;
    message = "expectation failed: " + describe(x);
    hints.push_back(fmt::format("found: {} questions not answered by a rule, {} answered by one", n,
                                static_cast<int64_t>(queries.size()) - n));
    size_t shown = 0;
    for (const Query& q : queries)
      add_hint(
          hints, shown,
          fmt::format("{} question: {} (answered by {}{})", question_kind_name(q.question.kind),
                      q.question.text, answer_source_name(q.answer.source),
                      q.answer.rule.empty() ? "" : " " + q.answer.rule));
    close_hints(hints, shown);
    return false;
  }

  const Trace& trace_;
  const BuildResult& result_;
  const Diagnosis* diagnosis_;
};

Diagnostic failure_at(const rules::PackTest& test, SourceLoc loc, uint32_t length,
                      std::string message) {
  Diagnostic d;
  d.source = test.source;
  d.loc = loc;
  d.length = length;
  d.message = std::move(message);
  return d;
}

// The test's trace: its text, or the file it names (text or binary, by content). A file
// the reader could not read whole fails the test: a fixture with holes proves nothing.
Trace read_test_trace(const rules::PackTest& test) {
  if (test.trace_file.empty()) {
    Trace trace = parse_text_trace(test.source, test.trace_loc.byte,
                                   test.trace_loc.byte + test.trace_text.size());
    // As below: a test's own jit (and map) lines name its frames, as `causeway debug` would.
    if (!trace.maps.empty() || !trace.jit_symbols.empty()) symbolize_stacks(trace);
    return trace;
  }
  // The caret spans the path's string, quotes included.
  const std::string& text = test.source->text;
  size_t end = test.trace_loc.byte + 1;
  while (end < text.size() && text[end] != '"' && text[end] != '\n')
    end += text[end] == '\\' ? 2 : 1;
  const auto path_width =
      static_cast<uint32_t>(std::min(end, text.size()) + 1 - test.trace_loc.byte);
  Trace trace;
  ReadReport report;
  try {
    report = load_trace(test.trace_file, trace);
  } catch (const DiagnosticError&) {
    throw;
  } catch (const std::exception& e) {
    throw DiagnosticError(failure_at(test, test.trace_loc, path_width,
                                     fmt::format("cannot read the test's trace: {}", e.what())));
  }
  if (!report.skipped.empty()) {
    const SkippedRange& s = report.skipped.front();
    throw DiagnosticError(
        failure_at(test, test.trace_loc, path_width,
                   fmt::format("trace file {} is damaged: {} bytes at offset {} skipped: {}",
                               test.trace_file, s.size, s.offset, s.reason)));
  }
  // As `causeway debug` does: rules match frames by symbol.
  if (!trace.maps.empty() || !trace.jit_symbols.empty()) symbolize_stacks(trace);
  return trace;
}

SymptomRequest symptom_of(const rules::PackTest& test, const Trace& trace) {
  SymptomRequest request;
  auto spec = rules::parse_hang_spec(test.hang.empty() ? "auto" : test.hang);
  if (!spec) throw std::invalid_argument(fmt::format("bad hang '{}'", test.hang));
  if (!spec->automatic) {
    request.mode = SymptomRequest::Mode::ThreadAt;
    request.tid = spec->tid;
    request.at_ns = trace_start_ns(trace) + spec->offset_ns;
  }
  request.thread_name = spec->thread_name;
  return request;
}

PackTestResult run_one(const rules::RuleSet& all, const rules::PackTest& test) {
  PackTestResult out{test.pack, test.name, {}};
  try {
    rules::RuleSet rules = rules::select_packs(all, {test.pack});
    Trace trace = read_test_trace(test);
    BuildResult result = build_graph(trace, rules);
    // Diagnosis expectations share one diagnosis, as `causeway debug --auto` would make it
    // (the packs' answer rules, then the best-ranked option).
    std::optional<Diagnosis> diagnosis;
    auto first_diagnosis = std::find_if(test.expects.begin(), test.expects.end(), is_diagnosis);
    if (first_diagnosis != test.expects.end()) {
      AutoAnswerer answerer;
      DiagnoseOptions options;
      options.symptom = symptom_of(test, trace);
      options.answerer = &answerer;
      try {
        diagnosis = diagnose(trace, result, rules, options);
      } catch (const DiagnoseError& e) {
        out.failures.push_back(failure_at(
            test, first_diagnosis->loc, kExpectWidth,
            fmt::format("expectation failed: the diagnosis found no hang: {}", e.what())));
      }
    }
    Checker checker(trace, result, diagnosis ? &*diagnosis : nullptr);
    for (const Expectation& x : test.expects) {
      if (is_diagnosis(x) && !diagnosis) continue;  // failed above
      std::string message;
      std::vector<std::string> hints;
      if (checker.check(x, message, hints)) continue;
      Diagnostic d = failure_at(test, x.loc, kExpectWidth, std::move(message));
      d.hints = std::move(hints);
      out.failures.push_back(std::move(d));
    }
  } catch (const DiagnosticError& e) {
    out.failures.push_back(e.diagnostic);
  } catch (const rules::LuaError& e) {
    out.failures.push_back(failure_at(test, test.loc, 4, e.what()));
  } catch (const std::exception& e) {
    out.failures.push_back(failure_at(test, test.loc, 4, fmt::format("test failed: {}", e.what())));
  }
  return out;
}

}  // namespace

std::vector<PackTestResult> run_pack_tests(const rules::RuleSet& all,
                                           const std::vector<std::string>& pack_ids) {
  std::vector<PackTestResult> results;
  for (const rules::PackTest& test : all.tests) {
    if (!pack_ids.empty() &&
        std::find(pack_ids.begin(), pack_ids.end(), test.pack) == pack_ids.end())
      continue;
    results.push_back(run_one(all, test));
  }
  return results;
}

std::string render_pack_tests(const std::vector<PackTestResult>& results) {
  std::string out;
  size_t passed = 0;
  for (const PackTestResult& r : results) {
    out += fmt::format("{} {} \"{}\"\n", r.passed() ? "PASS" : "FAIL", r.pack, r.name);
    for (const Diagnostic& d : r.failures) out += d.render();
    passed += r.passed();
  }
  out += fmt::format("{} passed, {} failed\n", passed, results.size() - passed);
  return out;
}

}  // namespace cw::eval
