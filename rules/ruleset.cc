#include "rules/ruleset.h"

#include <algorithm>
#include <map>
#include <set>

#include "rules/kind_semantics.h"
#include "rules/loader.h"

namespace cw::rules {

std::optional<HangSpec> parse_hang_spec(std::string_view text) {
  if (text == "auto") return HangSpec{};
  auto digits = [](std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const size_t at = text.find('@');
  if (at == std::string_view::npos) {
    // A thread name: what the kernel keeps of a comm (15 bytes), printable; blanks inside
    // it (tmux names its threads "tmux: server"), not around it.
    if (text.empty() || text.size() > 15 || digits(text)) return std::nullopt;
    if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= ' ' && c < 127; }) ||
        text.front() == ' ' || text.back() == ' ')
      return std::nullopt;
    HangSpec spec;
    spec.thread_name = std::string(text);
    return spec;
  }
  if (at == 0 || at + 1 == text.size()) return std::nullopt;
  const std::string_view tid = text.substr(0, at);
  std::string_view whole = text.substr(at + 1), fraction;
  if (size_t dot = whole.find('.'); dot != std::string_view::npos) {
    fraction = whole.substr(dot + 1);
    whole = whole.substr(0, dot);
    if (!digits(fraction)) return std::nullopt;
  }
  if (!digits(tid) || !digits(whole) || tid.size() > 10 || whole.size() > 9) return std::nullopt;
  HangSpec spec;
  spec.automatic = false;
  const uint64_t t = std::stoull(std::string(tid));
  if (t == 0 || t > UINT32_MAX) return std::nullopt;
  spec.tid = static_cast<uint32_t>(t);
  spec.offset_ns = std::stoull(std::string(whole)) * 1000000000ull;
  uint64_t scale = 100000000;
  for (size_t i = 0; i < fraction.size() && i < 9; ++i, scale /= 10)
    spec.offset_ns += static_cast<uint64_t>(fraction[i] - '0') * scale;
  return spec;
}

// The kind's list is named by its row of the table of kind semantics
// (rules/kind_semantics.h). No list for a value no kind of the table takes.
std::vector<RuleOrigin*> RuleSet::origins(dsl::RuleKind kind) {
  const auto k = static_cast<size_t>(kind);
  if (k >= kRuleKindSemantics.size()) return {};
  return kRuleKindSemantics[k].origins(*this);
}

std::vector<const RuleOrigin*> RuleSet::origins(dsl::RuleKind kind) const {
  const std::vector<RuleOrigin*> found = const_cast<RuleSet&>(*this).origins(kind);
  return {found.begin(), found.end()};
}

bool calls_lua(const CompiledExpr& expr) {
  return std::any_of(expr.nodes.begin(), expr.nodes.end(), [](const ExprNode& n) {
    return n.op == Op::Call && n.sval.starts_with("lua.");
  });
}

bool RuleSet::cut_rules_call_lua() const {
  for (const SplitRule& s : splits)
    if (s.origin.active() && s.mode != SplitRule::Mode::Peers && calls_lua(s.where)) return true;
  for (const BatchRule& b : batches)
    if (b.origin.active() &&
        (calls_lua(b.within_where) || calls_lua(b.item_where) || calls_lua(b.per)))
      return true;
  return false;
}

const PackInfo* RuleSet::pack(const std::string& id) const {
  for (const auto& p : packs)
    if (p.id == id) return &p;
  return nullptr;
}

RuleSet select_packs(const RuleSet& rules, const std::vector<std::string>& pack_ids) {
  // By id once, not RuleSet::pack's scan per name: a pack may require thousands.
  std::map<std::string, const PackInfo*> by_id;
  for (const auto& p : rules.packs) by_id.emplace(p.id, &p);
  std::set<std::string> chosen;
  std::vector<std::string> pending = pack_ids;
  while (!pending.empty()) {
    std::string id = pending.back();
    pending.pop_back();
    auto found = by_id.find(id);
    const PackInfo* info = found == by_id.end() ? nullptr : found->second;
    if (!info || !chosen.insert(id).second) continue;
    pending.insert(pending.end(), info->requires_.begin(), info->requires_.end());
  }
  auto keep = [&](const std::string& pack) { return chosen.count(pack) > 0; };

  RuleSet out;
  for (const auto& p : rules.packs)
    if (keep(p.id)) out.packs.push_back(p);
  std::map<uint32_t, uint32_t> link_index;
  for (uint32_t i = 0; i < rules.links.size(); ++i)
    if (keep(rules.links[i].origin.pack)) {
      link_index[i] = static_cast<uint32_t>(out.links.size());
      out.links.push_back(rules.links[i]);
    }
  auto renumber = [&](uint32_t link) {
    auto it = link_index.find(link);
    return it == link_index.end() ? kNoRule : it->second;
  };
  for (const auto& s : rules.splits)
    if (keep(s.origin.pack)) {
      out.splits.push_back(s);
      if (s.link != kNoRule) out.splits.back().link = renumber(s.link);
    }
  for (const auto& e : rules.edges)
    if (keep(e.origin.pack)) {
      out.edges.push_back(e);
      out.edges.back().link = renumber(e.link);
    }
  for (const auto& b : rules.batches)
    if (keep(b.origin.pack)) out.batches.push_back(b);
  for (const auto& f : rules.flags)
    if (keep(f.origin.pack)) out.flags.push_back(f);
  for (const auto& a : rules.answers)
    if (keep(a.origin.pack)) out.answers.push_back(a);
  for (const auto& l : rules.lua)
    if (keep(l.pack)) out.lua.push_back(l);
  for (const auto& t : rules.tests)
    if (keep(t.pack)) out.tests.push_back(t);
  // A rule stays off only while the pack that disabled it is among those chosen.
  auto enable = [&](RuleOrigin& o) {
    if (!o.active() && !keep(o.disabled_by)) o.disabled_by.clear();
  };
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds)
    if (kind.disableable)
      for (RuleOrigin* origin : out.origins(kind.kind)) enable(*origin);
  for (const auto& d : rules.disabled)
    if (keep(d.by) && keep(d.rule.substr(0, d.rule.find('/')))) out.disabled.push_back(d);
  return out;
}

std::string_view condition_kind_name(PackCondition::Kind kind) {
  switch (kind) {
    case PackCondition::Kind::Library: return "library";
    case PackCondition::Kind::Program: return "program";
    case PackCondition::Kind::Symbol: return "symbol";
  }
  return "?";
}

}  // namespace cw::rules
