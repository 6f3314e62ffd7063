// Checker pass: `test` blocks (docs/rules.md "Tests"): their trace, `hang` clause and
// expectations, compiled to PackTest for eval/pack_tests.h to run.
#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "rules/check_context.h"

namespace cw::rules::check {

void Checker::check_test(const dsl::TestBlock& test) {
  PackState& pack = packs_[pack_];
  if (auto it = pack.test_names.find(test.name); it != pack.test_names.end()) {
    error_at(test.loc, 4,
             fmt::format("duplicate test '{}' in pack '{}'", test.name, units_[pack_].info.id));
    diags_.note(it->second.first, it->second.second, 4, "first defined here");
  } else {
    pack.test_names.emplace(test.name, std::pair(source_, test.loc));
  }
  PackTest out;
  out.hang = "auto";
  const dsl::Clause* hang = nullptr;
  for (const auto& clause : test.clauses) {
    if (clause.keyword != "hang") {
      error_at(clause.loc, clause.keyword.size(),
               fmt::format("unknown clause '{}' in test", clause.keyword),
               // An expectation's misspelt attribute ends it and reads as a clause.
               did_you_mean(clause.keyword,
                            {"trace", "expect", "hang", "kind", "strength", "rule", "at"}));
      continue;
    }
    if (hang) {
      error_at(clause.loc, clause.keyword.size(), "clause 'hang' given twice");
      continue;
    }
    hang = &clause;
    const dsl::Expr* e = single(clause);
    if (!e) continue;
    if (e->kind == dsl::ExprKind::Str && parse_hang_spec(e->sval))
      out.hang = e->sval;
    else
      error(*e, "'hang' needs \"auto\", \"TID@SECONDS\" or a thread name",
            {"SECONDS count from the start of the trace, as in \"811@1.5\"; a thread name "
             "(\"cw-browser\") picks that thread's longest stretch"});
  }
  if (!test.has_trace)
    error_at(test.loc, 4, fmt::format("test '{}' has no trace", test.name),
             {"add one: trace [[ causeway-trace 1 ... ]] or trace file \"PATH\""});
  out.pack = units_[pack_].info.id;
  out.name = test.name;
  out.source = source_;
  out.loc = test.loc;
  out.trace_text = test.trace_text;
  out.trace_loc = test.trace_loc;
  if (test.trace_is_file) {
    out.trace_loc = test.trace_file_loc;
    if (test.trace_file.empty()) {
      error_at(test.trace_file_loc, 2, "'trace file' needs a path");
    } else {
      // Relative to the folder of the file that holds the test.
      std::filesystem::path path(test.trace_file);
      if (path.is_relative()) path = std::filesystem::path(source_->path).parent_path() / path;
      out.trace_file = path.lexically_normal().generic_string();
    }
  }
  bool diagnoses = false;
  for (const auto& expect : test.expects) {
    diagnoses = diagnoses || expect.subject == "hang" || expect.subject == "root_cause" ||
                expect.subject == "questions";
    Expectation e;
    if (check_expect(expect, e)) out.expects.push_back(std::move(e));
  }
  if (hang && !diagnoses)
    error_at(hang->loc, hang->keyword.size(),
             "'hang' names the symptom of a diagnosis, and this test expects none",
             {"add `expect hang TID`, `expect root_cause TID` or `expect questions OP N`"});
  out_.tests.push_back(std::move(out));
}

bool Checker::check_expect(const dsl::Expect& expect, Expectation& out) {
  static const std::vector<std::string> subjects = {"edge", "split",      "segments", "stat",
                                                    "hang", "root_cause", "questions"};
  auto subject = std::find(subjects.begin(), subjects.end(), expect.subject);
  if (subject == subjects.end()) {
    error_at(expect.subject_loc, expect.subject.size(),
             fmt::format("unknown expectation '{}' (expected {})", expect.subject,
                         alternatives(subjects)));
    return false;
  }
  out.loc = expect.loc;
  out.negated = expect.negated;
  out.subject = static_cast<Expectation::Subject>(subject - subjects.begin());
  using S = Expectation::Subject;
  const bool counted =
      out.subject == S::Segments || out.subject == S::Stat || out.subject == S::Questions;
  if (expect.negated && counted) {
    error_at(expect.subject_loc, expect.subject.size(),
             "'expect no' works with edge and split only");
    return false;
  }
  const bool one_thread =
      out.subject == S::Split || out.subject == S::Hang || out.subject == S::RootCause;
  const size_t operands = one_thread || out.subject == S::Questions ? 1 : 2;
  const char* usage = out.subject == S::Edge        ? "expect edge A -> B"
                      : out.subject == S::Split     ? "expect split T"
                      : out.subject == S::Segments  ? "expect segments T OP N"
                      : out.subject == S::Stat      ? "expect stat NAME OP N"
                      : out.subject == S::Hang      ? "expect hang T"
                      : out.subject == S::RootCause ? "expect root_cause T"
                                                    : "expect questions OP N";
  if (expect.operands.size() != operands || counted == expect.cmp.empty()) {
    error_at(expect.loc, 6, fmt::format("malformed expectation: the form is `{}`", usage));
    return false;
  }
  bool ok = true;
  auto tid = [&](const dsl::Expr& e, uint32_t& slot) {
    if (e.kind == dsl::ExprKind::Int && !e.is_duration && e.ival > 0 && e.ival <= UINT32_MAX) {
      slot = static_cast<uint32_t>(e.ival);
    } else {
      error(e, "expected a thread id");
      ok = false;
    }
  };
  out.cmp = expect.cmp;
  if (out.subject == S::Stat) {
    if (expect.operands[0]->kind == dsl::ExprKind::Name) {
      out.stat = joined(expect.operands[0]->path);
    } else {
      error(*expect.operands[0], "expected a statistic name");
      ok = false;
    }
  } else if (out.subject != S::Questions) {
    tid(*expect.operands[0], out.from_tid);
  }
  if (out.subject == S::Edge) tid(*expect.operands[1], out.to_tid);
  if (counted) {
    const dsl::Expr& n = *expect.operands.back();
    auto value = const_int(n);
    if (value && !n.is_duration) {
      out.value = *value;
    } else {
      error(n, "expected an integer");
      ok = false;
    }
  }
  std::vector<std::string> attributes;
  if (out.subject == S::Edge) attributes = {"kind", "strength", "rule", "at"};
  if (out.subject == S::Split) attributes = {"at", "rule"};
  if (out.subject == S::Hang || out.subject == S::RootCause) attributes = {"kind"};
  std::set<std::string> seen;
  for (const auto& attr : expect.attrs) {
    if (std::find(attributes.begin(), attributes.end(), attr.name) == attributes.end()) {
      error_at(attr.loc, attr.name.size(),
               fmt::format("unknown attribute '{}' of expect {}", attr.name, expect.subject),
               did_you_mean(attr.name, attributes));
      ok = false;
      continue;
    }
    if (!seen.insert(attr.name).second) {
      error_at(attr.loc, attr.name.size(), fmt::format("attribute '{}' given twice", attr.name));
      ok = false;
      continue;
    }
    if (!attr.value) continue;
    const dsl::Expr& v = *attr.value;
    if (attr.name == "at") {
      if (v.kind == dsl::ExprKind::Int && v.is_duration && v.ival >= 0) {
        out.has_at = true;
        out.at_ns = static_cast<uint64_t>(v.ival);
      } else {
        error(v, "'at' needs a time like 1.5ms");
        ok = false;
      }
    } else if (attr.name == "rule") {
      if (auto id = id_text(v))
        out.rule = *id;
      else
        ok = false;
    } else if (attr.name == "kind" && (out.subject == S::Hang || out.subject == S::RootCause)) {
      static const std::vector<std::string> kinds = {"LongRunning", "RepeatedYield", "LongWait"};
      auto kind = word(v, "a hang kind");
      if (kind && std::find(kinds.begin(), kinds.end(), *kind) != kinds.end()) {
        out.kind = *kind;
      } else {
        if (kind)
          error(v, fmt::format("unknown hang kind '{}' (expected {})", *kind, alternatives(kinds)),
                did_you_mean(*kind, kinds));
        ok = false;
      }
    } else if (attr.name == "kind") {
      if (auto kind = word(v, "an edge kind"))
        out.kind = *kind;
      else
        ok = false;
    } else {
      static const std::vector<std::string> strengths = {"strong", "weak", "boosted", "boost"};
      auto s = word(v, "a strength");
      if (s && std::find(strengths.begin(), strengths.end(), *s) != strengths.end()) {
        out.strength = *s;
      } else {
        if (s)
          error(v, fmt::format("unknown strength '{}' (expected strong, weak or boosted)", *s));
        ok = false;
      }
    }
  }
  return ok;
}

}  // namespace cw::rules::check
