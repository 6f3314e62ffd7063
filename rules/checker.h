// Checking packs: syntax trees (dsl/ast.h) -> compiled rules (rules/ruleset.h), with
// every name type-checked against Schema::builtin(). One pass over each file, in load
// order; errors become diagnostics and never stop the pass.
#pragma once

#include <string>
#include <vector>

#include "base/source.h"
#include "dsl/ast.h"
#include "rules/lint.h"
#include "rules/ruleset.h"

namespace cw::rules {

// Diagnostics kept in groups: an error and the notes that explain it stay together when
// the groups are sorted into file order.
class Diagnostics {
 public:
  void add(Diagnostic d);  // starts a new group
  void error(const SourcePtr& source, SourceLoc loc, uint32_t length, std::string message,
             std::vector<std::string> hints = {});
  // Appends a note to the latest group.
  void note(const SourcePtr& source, SourceLoc loc, uint32_t length, std::string message);
  bool has_errors() const;
  // Errors first, then warnings; each by the order of its source in `file_order`, then
  // by position.
  std::vector<Diagnostic> sorted(const std::vector<SourcePtr>& file_order) const;

 private:
  std::vector<std::vector<Diagnostic>> groups_;
};

// "did you mean 'x'?" when a candidate is close to `word`, else nothing.
std::vector<std::string> did_you_mean(const std::string& word,
                                      const std::vector<std::string>& candidates);

// A pack after grouping and resolution: its `requires` are all loaded and acyclic.
struct PackUnit {
  PackInfo info;
  std::vector<const dsl::File*> files;  // the header's file first, then file order
};

// Checks and compiles `packs` (load order) into `out` (packs, rules, Lua chunks, tests;
// edges not yet sorted). Returns what lint needs.
LintFacts check_packs(const std::vector<PackUnit>& packs, RuleSet& out, Diagnostics& diags);

// Sorts out.edges into evaluation order: priority (higher first), later-loaded pack
// first, then file order; and out.splits by priority (higher first), then load order.
void sort_edges(RuleSet& out);

}  // namespace cw::rules
