// The checker's driver: the order of its passes (rules/check_context.h lists them, one
// file each) and the dispatch of a rule to its kind's check.
#include "rules/checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "dsl/rule_kinds.h"
#include "rules/check_context.h"
#include "rules/kind_semantics.h"

namespace cw::rules {

// ---- diagnostics ----------------------------------------------------------------------

void Diagnostics::add(Diagnostic d) {
  groups_.push_back({std::move(d)});
}

void Diagnostics::error(const SourcePtr& source, SourceLoc loc, uint32_t length,
                        std::string message, std::vector<std::string> hints) {
  Diagnostic d;
  d.severity = Severity::Error;
  d.source = source;
  d.loc = loc;
  d.length = std::max<uint32_t>(1, length);
  d.message = std::move(message);
  d.hints = std::move(hints);
  add(std::move(d));
}

void Diagnostics::note(const SourcePtr& source, SourceLoc loc, uint32_t length,
                       std::string message) {
  Diagnostic d;
  d.severity = Severity::Note;
  d.source = source;
  d.loc = loc;
  d.length = std::max<uint32_t>(1, length);
  d.message = std::move(message);
  if (groups_.empty()) groups_.emplace_back();
  groups_.back().push_back(std::move(d));
}

bool Diagnostics::has_errors() const {
  return std::any_of(groups_.begin(), groups_.end(), [](const auto& g) {
    return std::any_of(g.begin(), g.end(),
                       [](const Diagnostic& d) { return d.severity == Severity::Error; });
  });
}

std::vector<Diagnostic> Diagnostics::sorted(const std::vector<SourcePtr>& file_order) const {
  // Looked up, not searched per comparison: thousands of files each with a diagnostic
  // made sorting quadratic.
  std::unordered_map<const Source*, long> file_rank;
  for (size_t i = 0; i < file_order.size(); ++i)
    file_rank[file_order[i].get()] = static_cast<long>(i);
  auto rank = [&](const std::vector<Diagnostic>& g) {
    const Diagnostic& d = g.front();
    auto it = file_rank.find(d.source.get());
    long file = it == file_rank.end() ? -1 : it->second;
    return std::tuple(d.severity == Severity::Warning, file, d.loc.byte);
  };
  std::vector<const std::vector<Diagnostic>*> order;
  for (const auto& g : groups_)
    if (!g.empty()) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto* a, const auto* b) { return rank(*a) < rank(*b); });
  std::vector<Diagnostic> out;
  for (const auto* g : order) out.insert(out.end(), g->begin(), g->end());
  return out;
}

std::vector<std::string> did_you_mean(const std::string& word,
                                      const std::vector<std::string>& candidates) {
  std::string best = closest_match(word, candidates);
  // Swapped neighbours ("nmae") are the commonest typo; plain edit distance counts two.
  for (size_t i = 0; best.empty() && i + 1 < word.size(); ++i) {
    std::string swapped = word;
    std::swap(swapped[i], swapped[i + 1]);
    if (std::find(candidates.begin(), candidates.end(), swapped) != candidates.end())
      best = swapped;
  }
  if (best.empty() || best == word) return {};
  return {fmt::format("did you mean '{}'?", best)};
}

namespace check {

LintFacts Checker::run() {
  packs_.resize(units_.size());
  for (size_t p = 0; p < units_.size(); ++p) {
    packs_[p].unit = &units_[p];
    pack_index_[units_[p].info.id] = p;
    out_.packs.push_back(units_[p].info);
  }
  compute_visibility();
  for (size_t p = 0; p < units_.size(); ++p) collect_lists(p);
  for (size_t p = 0; p < units_.size(); ++p) load_lua(p);
  for (size_t p = 0; p < units_.size(); ++p) index_links(p);
  for (size_t p = 0; p < units_.size(); ++p) {
    pack_ = p;
    for (const dsl::File* file : units_[p].files) {
      source_ = file->source;
      for (const auto& rule : file->rules) check_rule(rule);
      for (const auto& test : file->tests) check_test(test);
    }
  }
  apply_disables();
  return std::move(facts_);
}

RuleOrigin Checker::origin(const dsl::Rule& rule) const {
  const std::string& pack = units_[pack_].info.id;
  return RuleOrigin{pack, pack + "/" + rule.id, rule.id, source_, rule.id_loc};
}

// The check is the kind's row of the table of kind semantics (rules/kind_semantics.h);
// rules/rule_kinds_test.cc checks each kind's clauses against dsl/rule_kinds.h.
void Checker::check_rule(const dsl::Rule& rule) {
  check_rule_id(rule);
  if (const auto k = static_cast<size_t>(rule.kind); k < kRuleKindSemantics.size()) {
    (this->*kRuleKindSemantics[k].check)(rule);
    return;
  }
  std::vector<std::string> kinds;
  for (const auto& k : dsl::kRuleKinds) kinds.emplace_back(k.keyword);
  error_at(rule.loc, 1,
           fmt::format("unknown rule kind {} (expected {})", static_cast<int>(rule.kind),
                       alternatives(kinds)));
}

}  // namespace check

LintFacts check_packs(const std::vector<PackUnit>& packs, RuleSet& out, Diagnostics& diags) {
  return check::Checker(packs, out, diags).run();
}

void sort_edges(RuleSet& out) {
  std::map<std::string, size_t> load_index;
  for (size_t i = 0; i < out.packs.size(); ++i) load_index[out.packs[i].id] = i;
  std::stable_sort(out.edges.begin(), out.edges.end(), [&](const EdgeRule& a, const EdgeRule& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return load_index[a.origin.pack] > load_index[b.origin.pack];
  });
  std::stable_sort(out.splits.begin(), out.splits.end(),
                   [](const SplitRule& a, const SplitRule& b) { return a.priority > b.priority; });
}

}  // namespace cw::rules
