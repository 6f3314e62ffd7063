// Loading packs: find .cw files, group them into packs, resolve `requires` and the
// engine constraint, check every rule against the event schema, lint, compile.
#pragma once

#include <string>
#include <vector>

#include "base/source.h"
#include "rules/ruleset.h"

namespace cw::rules {

// LoadResult::render shows at most this many errors, then how many it left out.
inline constexpr size_t kErrorsShown = 100;

struct LoadResult {
  RuleSet rules;
  std::vector<Diagnostic> diagnostics;  // errors, then warnings (lint), in file order
  bool ok() const;                      // no errors (warnings allowed)
  std::string render() const;           // the diagnostics, rendered (kErrorsShown errors at most)
};

// Loads packs from files or folders (docs/rules.md "Packs"), in the order given; a
// later pack is a later load. Never throws for bad input: errors are diagnostics.
LoadResult load_packs(const std::vector<std::string>& paths);

// The same with the standard packs at `standard_paths` loaded first. A standard pack whose
// id a pack in `paths` also has is left out, files and all: the user's copy replaces it
// (checking another checkout's stdlib-rules must not load each pack twice).
LoadResult load_packs(const std::vector<std::string>& standard_paths,
                      const std::vector<std::string>& paths);

// The same from in-memory sources (tests, pack fixtures); each source is a file.
LoadResult load_sources(const std::vector<SourcePtr>& sources);

// The subset of `rules` made of `pack_ids` and everything they require, transitively,
// in load order (indexes re-numbered). Used to run a pack's tests in isolation.
RuleSet select_packs(const RuleSet& rules, const std::vector<std::string>& pack_ids);

}  // namespace cw::rules
