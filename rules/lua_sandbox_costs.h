// What a library function's loop will cost, from its arguments (a part of LuaSandbox,
// rules/lua_sandbox.h).
//
// Lua's count hook fires between instructions, never inside a C function, so a library
// function that loops over a range its caller chose (table.move({}, 1, math.maxinteger,
// 2)) or over a long table (table.insert(t, 1, x) shifts every element) would run for as
// long as the pack likes on a single instruction. Each such function is charged for its
// loop before it runs. The functions that only build a string are charged by the
// allocator instead; the pattern functions count their own steps.
//
// A cost function leaves the stack as it found it. Arguments of the wrong type cost
// nothing: the function itself then raises its usual error.
// Internal to rules/: nothing outside includes this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <lua.hpp>

namespace cw::rules::sandbox {

// Allocating (and so copying or collecting) this many bytes, or scanning this many bytes
// of a string in a library function, costs one instruction. Priced so that a whole budget
// spent on copying (256 MB) takes a small part of the CPU time limit, on slow machines and
// under sanitizers too: the budget, not the clock, is what stops a pack, so the same pack
// fails the same way everywhere.
constexpr size_t kBytesPerInstruction = 256;

using Cost = uint64_t (*)(lua_State* L);

uint64_t cost_move(lua_State* L);
uint64_t cost_insert(lua_State* L);
uint64_t cost_remove(lua_State* L);
uint64_t cost_concat(lua_State* L);
uint64_t cost_unpack(lua_State* L);
uint64_t cost_sort(lua_State* L);
uint64_t cost_byte_range(lua_State* L);
uint64_t cost_scan_first(lua_State* L);
uint64_t cost_tonumber(lua_State* L);
uint64_t cost_rawequal(lua_State* L);

}  // namespace cw::rules::sandbox
