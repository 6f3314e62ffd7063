#include "engine/cache/rule_tables.h"

#include "dsl/rule_kinds.h"

namespace cw::cache {

// The ids of each kind the graph build applies, in the table's order (dsl/rule_kinds.h).
void write_rule_names(Writer& w, const engine::RuleNames& n) {
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds)
    if (kind.builds_graph) w.texts(*n.ids(kind.kind));
  w.bools(n.split_cuts_after);
  w.bools(n.split_loops);
  w.array(n.edge_strengths);
  w.bools(n.edge_ends_polling);
}

template <class R>
engine::RuleNames read_rule_names(R& rd) {
  engine::RuleNames n;
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds)
    if (kind.builds_graph) *n.ids(kind.kind) = rd.texts();
  n.split_cuts_after = rd.bools();
  n.split_loops = rd.bools();
  n.edge_strengths = rd.template array<rules::Strength>();
  n.edge_ends_polling = rd.bools();
  return n;
}
template engine::RuleNames read_rule_names(Reader&);
template engine::RuleNames read_rule_names(FileReader&);

void write_rule_counts(Writer& w, const engine::RuleCounts& c) {
  for (const auto* v : {&c.splits, &c.batches, &c.edges, &c.pruned, &c.boosted, &c.flags})
    w.array(*v);
}

template <class R>
engine::RuleCounts read_rule_counts(R& rd) {
  engine::RuleCounts c;
  for (auto* v : {&c.splits, &c.batches, &c.edges, &c.pruned, &c.boosted, &c.flags})
    *v = rd.template array<uint64_t>();
  return c;
}
template engine::RuleCounts read_rule_counts(Reader&);
template engine::RuleCounts read_rule_counts(FileReader&);

void check_rule_tables(const engine::RuleNames& n, const engine::RuleCounts& c,
                       const rules::RuleSet& rules, bool for_reuse) {
  auto bad = [](const char* what) { throw CorruptEntry(what); };
  if (n.split_cuts_after.size() != n.splits.size() || n.split_loops.size() != n.splits.size() ||
      n.edge_strengths.size() != n.edges.size() || n.edge_ends_polling.size() != n.edges.size())
    bad("the graph's rule tables do not agree");
  if (n.edges.size() != rules.edges.size() || n.flags.size() != rules.flags.size() ||
      n.links.size() != rules.links.size() ||
      (!for_reuse &&
       (n.splits.size() != rules.splits.size() || n.batches.size() != rules.batches.size())))
    bad("the graph's rules are not those of the packs");
  for (rules::Strength s : n.edge_strengths)
    if (s > rules::Strength::Prune) bad("an edge rule of unknown strength");
  if (c.splits.size() != n.splits.size() || c.batches.size() != n.batches.size() ||
      c.edges.size() != n.edges.size() || c.pruned.size() != n.edges.size() ||
      c.boosted.size() != n.edges.size() || c.flags.size() != n.flags.size())
    bad("the graph's rule counts do not fit its rules");
}

bool rule_in_range(const engine::RuleNames& n, engine::RuleRef ref) {
  if (ref.kind == engine::kNoRuleKind) return true;
  // nullptr for a kind this causeway does not have, or one the graph keeps no rules of.
  const std::vector<std::string>* ids = n.ids(ref.kind);
  return ids && ref.index < ids->size();
}

}  // namespace cw::cache
