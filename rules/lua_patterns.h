// Lua's string pattern functions (find, match, gmatch, gsub) with a step count. The
// library's own matcher is C code that can backtrack for hours on a crafted pattern
// without running one Lua instruction, out of reach of the instruction budget.
#pragma once

#include <cstdint>

struct lua_State;

namespace cw::rules {

// Told every few thousand matcher steps (and when a call ends) how many were taken;
// raises a Lua error to stop the match.
using ChargeSteps = void (*)(lua_State* L, uint64_t steps);

// Replaces find, match, gmatch and gsub in the table at absolute index `string_table`
// with versions that follow the Lua 5.4 manual (§6.4.1) and report their steps.
void install_counted_patterns(lua_State* L, int string_table, ChargeSteps charge);

}  // namespace cw::rules
