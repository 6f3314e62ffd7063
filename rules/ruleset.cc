#include "rules/ruleset.h"

#include <map>
#include <set>

#include "rules/loader.h"

namespace cw::rules {

const PackInfo* RuleSet::pack(const std::string& id) const {
  for (const auto& p : packs)
    if (p.id == id) return &p;
  return nullptr;
}

RuleSet select_packs(const RuleSet& rules, const std::vector<std::string>& pack_ids) {
  std::set<std::string> chosen;
  std::vector<std::string> pending = pack_ids;
  while (!pending.empty()) {
    std::string id = pending.back();
    pending.pop_back();
    const PackInfo* info = rules.pack(id);
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
  for (const auto& l : rules.lua)
    if (keep(l.pack)) out.lua.push_back(l);
  for (const auto& t : rules.tests)
    if (keep(t.pack)) out.tests.push_back(t);
  return out;
}

}  // namespace cw::rules
