// Checker pass: `disable PACK/RULE`, after every rule is compiled.
#include <fmt/format.h>

#include "dsl/rule_kinds.h"
#include "rules/check_context.h"

namespace cw::rules::check {

// `disable PACK/RULE` (or a local id, this pack's own): marks the rule, which the engine
// then skips. Only kinds the table marks `disableable` can be (dsl/rule_kinds.h); a link's
// candidates are left to its edge rules, which can be.
void Checker::apply_disables() {
  std::map<std::string, RuleOrigin*> rules;
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds)
    if (kind.disableable)
      for (RuleOrigin* origin : out_.origins(kind.kind)) rules[origin->id] = origin;
  std::vector<std::string> ids;
  for (const auto& [id, _] : rules) ids.push_back(id);
  // "split, batch, edge, flag or holder rule": the kinds that can be, from the table.
  std::vector<std::string_view> kinds;
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds)
    if (kind.disableable) kinds.push_back(kind.keyword);
  std::string kinds_text;
  for (size_t k = 0; k < kinds.size(); ++k)
    kinds_text += std::string(k == 0                  ? ""
                              : k + 1 == kinds.size() ? " or "
                                                      : ", ") +
                  std::string(kinds[k]);
  for (size_t p = 0; p < units_.size(); ++p) {
    const std::string& me = units_[p].info.id;
    for (const dsl::File* file : units_[p].files) {
      source_ = file->source;
      for (const dsl::Disable& d : file->disables) {
        const std::string id = d.rule.find('/') == std::string::npos ? me + "/" + d.rule : d.rule;
        const std::string owner = id.substr(0, id.find('/'));
        auto it = rules.find(id);
        auto pack = pack_index_.find(owner);
        const auto& visible = packs_[p].visible;
        if (pack != pack_index_.end() &&
            std::find(visible.begin(), visible.end(), pack->second) == visible.end()) {
          error_at(
              d.rule_loc, d.rule.size(),
              fmt::format("pack '{}' disables '{}' but does not require pack '{}'", me, id, owner),
              {fmt::format("add `requires {}` to the pack header", owner)});
        } else if (it == rules.end()) {
          bool link = std::any_of(out_.links.begin(), out_.links.end(),
                                  [&](const LinkRule& l) { return l.origin.id == id; });
          if (link)
            error_at(d.rule_loc, d.rule.size(),
                     fmt::format("'{}' is a link: disable the edge "
                                 "rules that classify its candidates",
                                 id));
          else
            error_at(d.rule_loc, d.rule.size(),
                     fmt::format("no {} rule '{}' to disable", kinds_text, id),
                     did_you_mean(id, ids));
        } else {
          if (it->second->active()) it->second->disabled_by = me;
          out_.disabled.push_back({id, me, source_, d.loc});
        }
      }
    }
  }
}

}  // namespace cw::rules::check
