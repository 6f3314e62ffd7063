#include "instrument/hook/inline_hook.h"

#include "instrument/hook/patcher.h"

namespace cw::hook {

std::optional<Hooked> install_hook(const HookTarget& target, std::string* refusal) {
  char reason[256] = {};
  const uint32_t id = install(reinterpret_cast<uint64_t>(target.address), target.size_hint,
                              target.index, reason, sizeof reason);
  if (id) return Hooked{id};
  if (refusal) *refusal = reason;
  return std::nullopt;
}

bool remove_hook(const Hooked& hooked, std::string* error) {
  char reason[256] = {};
  if (remove(hooked.id, reason, sizeof reason)) return true;
  if (error) *error = reason;
  return false;
}

}  // namespace cw::hook
