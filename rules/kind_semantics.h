// What each rule kind of the table (dsl/rule_kinds.h) means in rules/: the check that
// compiles a rule of the kind, and the RuleSet list its rules are compiled into. The
// checker dispatches a rule through its kind's row, and RuleSet::origins reads the list
// from it, so neither lists the kinds itself. The rows are defined beside the checks
// (rules/check_kinds.cc), which asserts there is one per kind of the table, in its order.
// Internal to rules/.
#pragma once

#include <array>
#include <vector>

#include "dsl/ast.h"
#include "dsl/rule_kinds.h"
#include "rules/ruleset.h"

namespace cw::rules {

namespace check {
class Checker;
}

struct RuleKindSemantics {
  dsl::RuleKind kind;
  // Reads a rule's clauses and appends what it compiles to to the kind's list.
  void (check::Checker::*check)(const dsl::Rule& rule);
  // Where each rule of the kind came from, in its list's order.
  std::vector<RuleOrigin*> (*origins)(RuleSet& rules);
};

// Indexed by dsl::RuleKind, like dsl::kRuleKinds.
extern const std::array<RuleKindSemantics, dsl::kRuleKinds.size()> kRuleKindSemantics;

}  // namespace cw::rules
