// The table of rule kinds (dsl/rule_kinds.h) and the checker agree: every kind of the
// table reaches its own check, which takes exactly the table's clauses, needs its required
// ones, compiles into its own list, and lets `disable` turn it off exactly when the table
// says so. A kind or clause added to the table and not to the checker (or the reverse)
// fails here.
#include "dsl/rule_kinds.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "dsl/parser.h"
#include "rules/checker.h"
#include "rules/loader.h"

using namespace cw;
using namespace cw::rules;

namespace {

LoadResult load_pack(const std::string& body) {
  return load_sources({make_source("p.cw", "pack p { version \"0.1.0\" }\n" + body)});
}

bool contains(std::span<const std::string_view> words, std::string_view w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

// `KIND r { CLAUSE 1 ... bogus 1 }` with every clause of the table once (alone when the
// table says it takes no value).
std::string rule_with_every_clause(const dsl::RuleKindInfo& kind) {
  std::string rule = std::string(kind.keyword) + " r {\n";
  for (std::string_view clause : kind.clauses)
    rule += "  " + std::string(clause) + (contains(kind.bare, clause) ? "\n" : " 1\n");
  return rule + "  bogus 1\n}\n";
}

}  // namespace

TEST_CASE("the checker takes each kind's clauses from the table, and no others") {
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    const std::string kw(kind.keyword);
    CAPTURE(kw);
    // Values may be wrong for their clause (that is another error), but no clause of the
    // table is unknown.
    const auto r = load_pack(rule_with_every_clause(kind));
    const std::string out = r.render();
    CAPTURE(out);
    CHECK(out.find("unknown rule kind") == std::string::npos);
    for (std::string_view clause : kind.clauses)
      CHECK(out.find("unknown clause '" + std::string(clause) + "'") == std::string::npos);
    CHECK(out.find("unknown clause 'bogus' in " + kw + " rule") != std::string::npos);
  }
}

TEST_CASE("a rule without clauses misses each clause the table requires") {
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    const std::string kw(kind.keyword);
    CAPTURE(kw);
    const auto r = load_pack(kw + " r { }\n");
    const std::string out = r.render();
    CAPTURE(out);
    CHECK(out.find("unknown rule kind") == std::string::npos);
    for (std::string_view clause : kind.required)
      CHECK(out.find("missing clause '" + std::string(clause) + "' in " + kw + " rule 'r'") !=
            std::string::npos);
  }
}

TEST_CASE("disable turns off a rule exactly when the table says its kind can be") {
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    const std::string kw(kind.keyword);
    CAPTURE(kw);
    const auto r = load_pack(kw + " r { }\ndisable r\n");
    const std::string out = r.render();
    CAPTURE(out);
    const bool refused = out.find("to disable") != std::string::npos ||
                         out.find("is a link: disable") != std::string::npos;
    CHECK(refused == !kind.disableable);
    const bool recorded =
        std::any_of(r.rules.disabled.begin(), r.rules.disabled.end(),
                    [](const DisabledRule& d) { return d.rule == "p/r" && d.by == "p"; });
    CHECK(recorded == kind.disableable);
  }
}

TEST_CASE("each kind's check reads exactly the clauses the table gives the kind") {
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    CAPTURE(kind.keyword);
    auto parsed = dsl::parse(make_source("p.cw", rule_with_every_clause(kind)));
    REQUIRE(parsed.ok());
    PackUnit unit;
    unit.info.id = "p";
    unit.files = {&parsed.file};
    RuleSet out;
    Diagnostics diags;
    const LintFacts facts = check_packs({unit}, out, diags);
    const std::set<std::string> table(kind.clauses.begin(), kind.clauses.end());
    REQUIRE(facts.clauses_read.count(kind.kind));
    CHECK(facts.clauses_read.at(kind.kind) == table);
  }
}

// The check the table of kind semantics gives a kind (rules/kind_semantics.h) compiles into
// the list it gives the kind, which `disable`, select_packs and the graph's rule names read
// through RuleSet::origins: a row that paired a kind with another kind's list fails here.
TEST_CASE("each kind's check compiles a rule into the list RuleSet::origins gives the kind") {
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    CAPTURE(kind.keyword);
    // Missing clauses are errors, but the check compiles the rule all the same.
    RuleSet rules = load_pack(std::string(kind.keyword) + " r { }\n").rules;
    for (const dsl::RuleKindInfo& other : dsl::kRuleKinds) {
      CAPTURE(other.keyword);
      const std::vector<RuleOrigin*> found = rules.origins(other.kind);
      if (other.kind != kind.kind) {
        CHECK(found.empty());
      } else {
        REQUIRE(found.size() == 1);
        CHECK(found[0]->id == "p/r");
      }
    }
  }
}

// A pack test's rules are its packs' own, chosen by select_packs (rules/ruleset.cc), which
// copies kind by kind: a kind the graph build applies that it left out would be missing
// from the graphs of its pack tests.
TEST_CASE("select_packs keeps the rules of every kind the graph build applies") {
  std::string body;
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds)
    body += std::string(kind.keyword) + " " + std::string(kind.keyword) + "_rule { }\n";
  const RuleSet chosen = select_packs(load_pack(body).rules, {"p"});
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    CAPTURE(kind.keyword);
    if (kind.builds_graph) CHECK(chosen.origins(kind.kind).size() == 1);
  }
}
