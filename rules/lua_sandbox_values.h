// Values between the host and a pack's Lua (a part of LuaSandbox, rules/lua_sandbox.h):
// a hook's arguments pushed as Lua values, its result converted back to a LuaValue.
// Internal to rules/: nothing outside includes this.
#pragma once

#include <cstdint>
#include <lua.hpp>
#include <optional>
#include <span>
#include <string>

#include "rules/lua_sandbox.h"

namespace cw::rules::sandbox {

struct CallRequest {
  std::span<const LuaValue> args;
};

// Runs inside lua_pcall with [request, function] and calls the function with the
// request's arguments, so that pushing them is under the memory cap and protected.
int call_with_arguments(lua_State* L);

// Converts the value at the top of the stack without calling metamethods; an error
// returns what was wrong ("a function", "a table that is not a list", ...). At most
// `values_left` list elements in all: a list's length is not its size (a table holding
// only the keys 1, 2, 4, ..., 2^61 can have a border at 2^61), and one list can be held
// many times over by another.
std::optional<std::string> to_value(lua_State* L, int depth, uint64_t values_cap,
                                    uint64_t& values_left, LuaValue& out);

}  // namespace cw::rules::sandbox
