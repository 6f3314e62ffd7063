#include "rules/lua_host.h"

#include <deque>
#include <set>

namespace cw::engine {

LuaHost::LuaHost(const rules::RuleSet& rules, rules::LuaLimits limits)
    : rules_(rules), limits_(limits) {}

rules::LuaSandbox& LuaHost::sandbox(const std::string& pack) {
  auto it = sandboxes_.find(pack);
  if (it != sandboxes_.end()) return *it->second;
  auto box = std::make_unique<rules::LuaSandbox>(pack, limits_);
  for (const auto& chunk : rules_.lua)
    if (chunk.pack == pack)
      box->load(chunk.source ? chunk.source->path : pack, chunk.code, chunk.first_line);
  return *sandboxes_.emplace(pack, std::move(box)).first->second;
}

rules::LuaSandbox* LuaHost::find(const std::string& pack, const std::string& function) {
  // Which packs have chunks and what each requires, indexed once: scanning every pack and
  // chunk for each pack the search visits was quadratic in a pack that requires thousands.
  if (!indexed_) {
    for (const auto& chunk : rules_.lua) with_chunks_.insert(chunk.pack);
    for (const auto& info : rules_.packs) packs_.emplace(info.id, &info);
    indexed_ = true;
  }
  // Breadth-first over `requires`: the rule's own pack wins, then the nearest requirement.
  std::deque<std::string> queue{pack};
  std::set<std::string> seen{pack};
  while (!queue.empty()) {
    std::string p = queue.front();
    queue.pop_front();
    if (with_chunks_.count(p)) {
      rules::LuaSandbox& box = sandbox(p);
      if (box.has_function(function)) return &box;
    }
    // The first pack with the id, as the scan this replaces found it.
    if (auto it = packs_.find(p); it != packs_.end())
      for (const auto& r : it->second->requires_)
        if (seen.insert(r).second) queue.push_back(r);
  }
  return nullptr;
}

}  // namespace cw::engine
