#include "rules/lua_sandbox_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace cw::rules::sandbox {
namespace {

// Lists nested deeper than this (or cyclic tables) are refused on the way in and out.
constexpr int kMaxListDepth = 16;

void push_value(lua_State* L, const LuaValue& value, int depth) {
  switch (value.type) {
    case LuaValue::Type::Nil: lua_pushnil(L); return;
    case LuaValue::Type::Bool: lua_pushboolean(L, value.b); return;
    case LuaValue::Type::Int: lua_pushinteger(L, value.i); return;
    case LuaValue::Type::Number: lua_pushnumber(L, value.n); return;
    case LuaValue::Type::Str: lua_pushlstring(L, value.s.data(), value.s.size()); return;
    case LuaValue::Type::List:
      if (depth >= kMaxListDepth) luaL_error(L, "hook arguments nest lists too deeply");
      luaL_checkstack(L, 2, "hook arguments nest lists too deeply");
      lua_createtable(L, static_cast<int>(std::min<size_t>(value.list.size(), INT_MAX)), 0);
      for (size_t i = 0; i < value.list.size(); ++i) {
        push_value(L, value.list[i], depth + 1);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
      }
      return;
  }
}

}  // namespace

int call_with_arguments(lua_State* L) {
  const auto& request = *static_cast<const CallRequest*>(lua_touserdata(L, 1));
  int count = static_cast<int>(std::min<size_t>(request.args.size(), INT_MAX / 2));
  luaL_checkstack(L, count + LUA_MINSTACK, "too many hook arguments");
  for (int i = 0; i < count; ++i) push_value(L, request.args[i], 0);
  lua_call(L, count, 1);
  return 1;
}

std::optional<std::string> to_value(lua_State* L, int depth, uint64_t values_cap,
                                    uint64_t& values_left, LuaValue& out) {
  switch (lua_type(L, -1)) {
    case LUA_TNIL: out = LuaValue::nil(); return std::nullopt;
    case LUA_TBOOLEAN: out = LuaValue::boolean(lua_toboolean(L, -1)); return std::nullopt;
    case LUA_TNUMBER:
      out = lua_isinteger(L, -1) ? LuaValue::integer(lua_tointeger(L, -1))
                                 : LuaValue::number(lua_tonumber(L, -1));
      return std::nullopt;
    case LUA_TSTRING: {
      size_t size = 0;
      const char* text = lua_tolstring(L, -1, &size);
      out = LuaValue::string(std::string(text, size));
      return std::nullopt;
    }
    case LUA_TTABLE: break;
    default: return fmt::format("a {}", luaL_typename(L, -1));
  }
  if (depth >= kMaxListDepth) {
    return fmt::format("lists nested deeper than {}", kMaxListDepth);
  }
  if (!lua_checkstack(L, 3)) return std::string("lists too deep for the Lua stack");
  lua_Unsigned size = lua_rawlen(L, -1);
  if (size > values_left) return fmt::format("lists of more than {} values in all", values_cap);
  values_left -= size;
  out = LuaValue::from_list({});
  out.list.resize(size);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_Integer key = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
    if (key < 1 || static_cast<lua_Unsigned>(key) > size) {
      lua_pop(L, 2);
      return std::string("a table that is not a list");
    }
    if (auto wrong = to_value(L, depth + 1, values_cap, values_left, out.list[key - 1])) {
      lua_pop(L, 2);
      return wrong->starts_with("lists ") ? *wrong : "a list holding " + *wrong;
    }
    lua_pop(L, 1);
  }
  return std::nullopt;
}

}  // namespace cw::rules::sandbox
