// Versions of packs and of causeway itself, and the `engine` constraint a pack puts on
// causeway (docs/rules.md "Packs": `>= 0.1`, `< 2`, `= 0.1.0`, comma-separated).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cw::rules {

struct Version {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const Version&) const = default;
};

// "X.Y.Z" with an optional "-pre" or "+build" suffix (ignored when comparing).
std::optional<Version> parse_pack_version(std::string_view text);

// "X", "X.Y" or "X.Y.Z": missing parts are 0 (constraint operands).
std::optional<Version> parse_partial_version(std::string_view text);

// The version of this causeway build (CW_VERSION).
std::string_view engine_version();

enum class ConstraintResult { Satisfied, Unsatisfied, Malformed };

// Checks a conjunction like ">= 0.1, < 2" against `version`. Operators: = == != < <= > >=;
// a bare version means "=".
ConstraintResult check_constraint(std::string_view constraint, const Version& version);

// Whether some version satisfies both constraints (well-formed ones): two `requires` of one
// pack that no version meets together conflict.
bool constraints_overlap(std::string_view a, std::string_view b);

}  // namespace cw::rules
