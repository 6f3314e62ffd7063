// The Lua sandboxes of a rule set: one per pack, holding that pack's `lua` chunks, made
// when a rule first needs it. A rule sees its own pack's functions, then those of the
// packs it requires (docs/rules.md "Packs").
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "rules/lua_sandbox.h"
#include "rules/ruleset.h"

namespace cw::engine {

class LuaHost {
 public:
  explicit LuaHost(const rules::RuleSet& rules, rules::LuaLimits limits = {});

  // The sandbox that defines `function` for a rule of `pack`, or nullptr. Loading a
  // pack's chunks may throw rules::LuaError.
  rules::LuaSandbox* find(const std::string& pack, const std::string& function);

 private:
  rules::LuaSandbox& sandbox(const std::string& pack);

  const rules::RuleSet& rules_;
  rules::LuaLimits limits_;
  std::map<std::string, std::unique_ptr<rules::LuaSandbox>> sandboxes_;
  bool indexed_ = false;
  std::set<std::string> with_chunks_;                    // packs with `lua` chunks
  std::map<std::string, const rules::PackInfo*> packs_;  // by id
};

}  // namespace cw::engine
