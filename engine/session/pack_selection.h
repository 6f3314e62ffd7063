// Packs that apply themselves (docs/rules.md "Packs that say what they are for"): a pack
// whose header says `applies library(...), program(...), symbol(...)` is loaded for a
// trace that shows one of them, and left out otherwise, so that the search path can hold
// packs for every runtime without each of them judging every trace.
#pragma once

#include <string>
#include <vector>

#include "rules/loader.h"
#include "trace/trace.h"

namespace cw::session {

// Why `pack` applies to `trace`: "" when it does not; for a pack without conditions,
// "always (no conditions)"; else the first condition that holds and where it holds
// ("library libuv.so.1.0.0 mapped in node 812").
std::string applies_because(const rules::PackInfo& pack, const Trace& trace);

// The loaded packs less those with conditions that `trace` does not meet (and that no
// kept pack requires). Packs from `explicit_paths` (a command's --rules) always stay: the
// user asked for them. Returns each kept pack that has conditions, with why it applies.
struct AppliedPack {
  std::string id;
  std::string why;
};
std::vector<AppliedPack> keep_applying(rules::LoadResult& loaded, const Trace& trace,
                                       const std::vector<std::string>& explicit_paths);

// Whether any loaded pack has conditions.
bool any_conditional(const rules::RuleSet& rules);

}  // namespace cw::session
