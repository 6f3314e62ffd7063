// The graph's rule tables in a graph entry, kind by kind (engine/cache only): the ids of
// the rules of each kind the graph build applies (dsl/rule_kinds.h builds_graph), which the
// graph names (engine::RuleNames) with what the diagnosis reads of some, and the counts
// reports show per rule (engine::RuleCounts), and which table a rule reference
// (engine::RuleRef) of each kind indexes (RuleNames::ids). The ids of a kind the graph
// gains are encoded from the table; what it reads of them is added here (with a bump of
// kFormatVersion).
#pragma once

#include "engine/cache/encoding.h"
#include "engine/graph/builder.h"
#include "engine/graph/graph.h"
#include "rules/ruleset.h"

namespace cw::cache {

void write_rule_names(Writer& w, const engine::RuleNames& names);
// What write_rule_names wrote; R is Reader or FileReader.
template <class R>
engine::RuleNames read_rule_names(R& rd);

void write_rule_counts(Writer& w, const engine::RuleCounts& counts);
// What write_rule_counts wrote; R is Reader or FileReader.
template <class R>
engine::RuleCounts read_rule_counts(R& rd);

// Throws CorruptEntry unless `names` has one entry per rule of `rules` (a rebuild of the
// cuts, `for_reuse`, reads no cut rule of the graph it reuses: those may differ), its
// per-rule lists are as long as its rules and hold known strengths, and `counts` has a
// count per rule.
void check_rule_tables(const engine::RuleNames& names, const engine::RuleCounts& counts,
                       const rules::RuleSet& rules, bool for_reuse);

// Whether `ref` names no rule, or one `names` has.
bool rule_in_range(const engine::RuleNames& names, engine::RuleRef ref);

}  // namespace cw::cache
