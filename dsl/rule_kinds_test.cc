// The grammar and the parser agree with the table of rule kinds (dsl/rule_kinds.h): its
// keywords, and only they, start a rule; a parsed rule carries the kind's enum value; its
// clauses are the grammar's clause words, and those written alone its bare keywords.
#include "dsl/rule_kinds.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "dsl/grammar.h"
#include "dsl/parser.h"

using namespace cw;
using namespace cw::dsl;

namespace {

template <typename Rule>
bool whole_match(const std::string& text) {
  namespace pegtl = tao::pegtl;
  pegtl::memory_input in(text, "test");
  grammar::ParseState state;
  try {
    return pegtl::parse<pegtl::seq<Rule, pegtl::eof>, pegtl::nothing, grammar::control>(in, state);
  } catch (const grammar::SyntaxError&) {
    return false;
  }
}

}  // namespace

TEST_CASE("the grammar's rule kinds are the table's keywords") {
  for (const RuleKindInfo& kind : kRuleKinds) {
    CAPTURE(kind.keyword);
    CHECK(whole_match<grammar::rule_kind>(std::string(kind.keyword)));
    CHECK(find_rule_kind(kind.keyword) == &kind);
    CHECK(rule_keyword(kind.kind) == kind.keyword);
  }
  // Other items' keywords, a prefix and an extension of a kind are not kinds.
  for (const char* word : {"pack", "list", "lua", "test", "disable", "rule", "spli", "splits", ""})
    CHECK_FALSE(whole_match<grammar::rule_kind>(word));
}

TEST_CASE("a rule of each kind parses to the table's enum value") {
  for (const RuleKindInfo& kind : kRuleKinds) {
    CAPTURE(kind.keyword);
    auto r = parse(make_source("k.cw", std::string(kind.keyword) + " r.one { }\n"));
    REQUIRE(r.ok());
    REQUIRE(r.file.rules.size() == 1);
    CHECK(r.file.rules[0].kind == kind.kind);
    CHECK(r.file.rules[0].id == "r.one");
  }
}

TEST_CASE("the clauses written alone are the grammar's bare keywords") {
  std::set<std::string> bare, valued;
  for (const RuleKindInfo& kind : kRuleKinds)
    for (std::string_view clause : kind.clauses)
      (std::find(kind.bare.begin(), kind.bare.end(), clause) != kind.bare.end() ? bare : valued)
          .emplace(clause);
  CHECK_FALSE(bare.empty());
  for (const auto& clause : bare) CHECK_MESSAGE(whole_match<grammar::bare_keyword>(clause), clause);
  for (const auto& clause : valued)
    CHECK_MESSAGE(!whole_match<grammar::bare_keyword>(clause), clause);
  for (const RuleKindInfo& kind : kRuleKinds)
    for (std::string_view clause : kind.bare)
      CHECK_MESSAGE(
          std::find(kind.clauses.begin(), kind.clauses.end(), clause) != kind.clauses.end(),
          clause);
}

TEST_CASE("every clause of every kind is a clause word of the grammar") {
  for (const RuleKindInfo& kind : kRuleKinds)
    for (std::string_view clause : kind.clauses) {
      CAPTURE(kind.keyword);
      CAPTURE(clause);
      CHECK(whole_match<grammar::clause_word>(std::string(clause)));
      CHECK(std::find(kRuleClauseWords.begin(), kRuleClauseWords.end(), clause) !=
            kRuleClauseWords.end());
      // A line that starts with it ends the expression before it, so an operand missing
      // there is reported there rather than taken from the next clause.
      const std::string text =
          std::string(kind.keyword) + " r {\n  x a ==\n  " + std::string(clause) + " 1\n}\n";
      auto r = parse(make_source("k.cw", text));
      CAPTURE(text);
      REQUIRE_FALSE(r.diagnostics.empty());
      CHECK(r.diagnostics[0].message == "expected an expression after '=='");
      CHECK(r.diagnostics[0].loc.line == 3);
      CHECK(r.diagnostics[0].loc.col == 3);
    }
  CHECK_FALSE(whole_match<grammar::clause_word>("bogus"));
  CHECK_FALSE(whole_match<grammar::clause_word>("froms"));
}

TEST_CASE("an unknown item lists the table's kinds among the items") {
  auto r = parse(make_source("k.cw", "spilt r { }\n"));
  REQUIRE(r.diagnostics.size() == 1);
  std::string expected = "pack, list, lua, ";
  for (const RuleKindInfo& kind : kRuleKinds) expected += std::string(kind.keyword) + ", ";
  expected += "test or disable";
  CHECK(r.diagnostics[0].message == "unknown item 'spilt' (expected " + expected + ")");
}
