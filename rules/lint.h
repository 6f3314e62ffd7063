// Lint: warnings about rules that load but cannot do what their author meant — a rule
// that can never match, a rule shadowed by an earlier one, a link no edge rule uses, a
// list never used. Warnings never make a load fail.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/source.h"
#include "dsl/rule_kinds.h"
#include "rules/ruleset.h"

namespace cw::rules {

// What the checker knows that the compiled rules no longer show.
struct ListUse {
  std::string name;
  std::string pack;
  SourcePtr source;
  SourceLoc loc;
  bool used = false;
};

struct LintFacts {
  std::vector<ListUse> lists;
  // Per rule kind, the clauses its check looked for: rules/rule_kinds_test.cc holds them
  // to the table of kinds (dsl/rule_kinds.h), so a clause the table gives a kind cannot be
  // accepted there and ignored here.
  std::map<dsl::RuleKind, std::set<std::string>> clauses_read;
};

// `rules.edges` must already be in evaluation order.
std::vector<Diagnostic> lint(const RuleSet& rules, const LintFacts& facts);

// The name a rule author wrote for a field reference ("from.syscall.name", "stack").
std::string field_display_name(const FieldRef& field);

}  // namespace cw::rules
