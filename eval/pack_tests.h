// Runs the tests embedded in packs (docs/rules.md "Tests"): each test's trace is built
// into a graph with its pack and the packs it requires, and every expectation is checked.
#pragma once

#include <string>
#include <vector>

#include "base/source.h"
#include "rules/ruleset.h"

namespace cw::eval {

struct PackTestResult {
  std::string pack;
  std::string name;
  std::vector<Diagnostic> failures;  // at the failed expectation (or the broken trace)
  bool passed() const { return failures.empty(); }
};

// Tests of the packs named in `pack_ids` (every test of `all` when it is empty), in
// RuleSet order. Never throws for a broken test: its error is a failure.
std::vector<PackTestResult> run_pack_tests(const rules::RuleSet& all,
                                           const std::vector<std::string>& pack_ids);

// One `PASS PACK "NAME"` or `FAIL PACK "NAME"` line per test, each failure rendered
// below its test, then the total line `N passed, M failed`.
std::string render_pack_tests(const std::vector<PackTestResult>& results);

}  // namespace cw::eval
