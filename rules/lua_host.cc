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
  // Breadth-first over `requires`: the rule's own pack wins, then the nearest requirement.
  std::deque<std::string> queue{pack};
  std::set<std::string> seen{pack};
  while (!queue.empty()) {
    std::string p = queue.front();
    queue.pop_front();
    bool has_chunks = false;
    for (const auto& chunk : rules_.lua) has_chunks = has_chunks || chunk.pack == p;
    if (has_chunks) {
      rules::LuaSandbox& box = sandbox(p);
      if (box.has_function(function)) return &box;
    }
    for (const auto& info : rules_.packs)
      if (info.id == p)
        for (const auto& r : info.requires_)
          if (seen.insert(r).second) queue.push_back(r);
  }
  return nullptr;
}

}  // namespace cw::engine
