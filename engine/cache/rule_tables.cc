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
  w.bools(n.edge_requests);
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
  n.edge_requests = rd.bools();
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
  using K = dsl::RuleKind;
  auto bad = [](const char* what) { throw CorruptEntry(what); };
  const size_t splits = n.of(K::Split).size(), batches = n.of(K::Batch).size(),
               links = n.of(K::Link).size(), edges = n.of(K::Edge).size(),
               flags = n.of(K::Flag).size();
  if (n.split_cuts_after.size() != splits || n.split_loops.size() != splits ||
      n.edge_strengths.size() != edges || n.edge_ends_polling.size() != edges ||
      n.edge_requests.size() != edges)
    bad("the graph's rule tables do not agree");
  if (edges != rules.edges.size() || flags != rules.flags.size() || links != rules.links.size() ||
      (!for_reuse && (splits != rules.splits.size() || batches != rules.batches.size())))
    bad("the graph's rules are not those of the packs");
  for (rules::Strength s : n.edge_strengths)
    if (s > rules::Strength::Prune) bad("an edge rule of unknown strength");
  if (c.splits.size() != splits || c.batches.size() != batches || c.edges.size() != edges ||
      c.pruned.size() != edges || c.boosted.size() != edges || c.flags.size() != flags)
    bad("the graph's rule counts do not fit its rules");
}

bool rule_in_range(const engine::RuleNames& n, engine::RuleRef ref) {
  if (ref.kind == engine::kNoRuleKind) return true;
  // nullptr for a kind this causeway does not have, or one the graph keeps no rules of.
  const std::vector<std::string>* ids = n.ids(ref.kind);
  return ids && ref.index < ids->size();
}

}  // namespace cw::cache
