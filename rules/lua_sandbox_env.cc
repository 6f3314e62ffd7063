// LuaSandbox's Lua state and the _ENV a pack's code sees: what is kept of the base,
// string, table, math and utf8 libraries, with pcall, xpcall, setmetatable and
// math.random replaced so that the limits hold and results repeat, and library loops
// charged for (lua_sandbox_costs.h).
#include <fmt/format.h>

#include "rules/lua_patterns.h"
#include "rules/lua_sandbox_impl.h"

namespace cw::rules {
namespace {

// A fixed seed: math.random gives the same sequence in every call of every run.
constexpr lua_Integer kRandomSeed = 0x5eed;

}  // namespace

// pcall and xpcall as in lbaselib, except that a broken budget or memory cap is
// raised again instead of being returned as an ordinary error.
int LuaSandbox::Impl::finish_pcall(lua_State* L, int status, int extra) {
  Impl& self = of(L);
  if (status == LUA_ERRMEM) self.fail(Failure::Memory, self.refusal_location);
  if (self.failure != Failure::None) self.raise_abort();
  if (status != LUA_OK) {
    lua_pushboolean(L, 0);
    lua_pushvalue(L, -2);
    return 2;
  }
  return lua_gettop(L) - extra;
}

int LuaSandbox::Impl::sandbox_pcall(lua_State* L) {
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  return finish_pcall(L, lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0), 0);
}

// xpcall's message handler, holding the pack's handler as its upvalue. A broken budget,
// cap or time limit is raised from inside the count hook, and Lua runs a message
// handler called from a hook with hooks off: the pack's handler would run unbounded.
// It runs only for the pack's own errors, where the hook counts its instructions.
int LuaSandbox::Impl::guarded_handler(lua_State* L) {
  if (of(L).failure != Failure::None) return 1;  // the error object, as it is
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int LuaSandbox::Impl::sandbox_xpcall(lua_State* L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, &guarded_handler, 1);
  lua_replace(L, 2);
  lua_pushboolean(L, 1);
  lua_pushvalue(L, 1);
  lua_rotate(L, 3, 2);
  return finish_pcall(L, lua_pcall(L, n - 2, LUA_MULTRET, 2), 2);
}

// A library function with its cost: upvalues are the cost function and the library's
// own function, called in place so that its errors name it as before.
int LuaSandbox::Impl::charged_function(lua_State* L) {
  auto cost = reinterpret_cast<Cost>(lua_touserdata(L, lua_upvalueindex(1)));
  lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(2));
  charge_steps(L, cost(L));
  return original(L);
}

// Replaces `name` of the table at absolute index `library` by its charged version.
void LuaSandbox::Impl::charge_function(int library, const char* name, Cost cost) {
  lua_pushlightuserdata(L, reinterpret_cast<void*>(cost));
  lua_getfield(L, library, name);
  lua_pushcclosure(L, &charged_function, 2);
  lua_setfield(L, library, name);
}

// Finalizers would run Lua code at collection time, outside any budget or call.
int LuaSandbox::Impl::sandbox_setmetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL) {
      return luaL_error(L, "__gc metamethods are not available in the sandbox");
    }
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

// Upvalues: the library's random and randomseed.
int LuaSandbox::Impl::deterministic_random(lua_State* L) {
  Impl& self = of(L);
  if (self.random_seeded_serial != self.run_serial) {
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushinteger(L, kRandomSeed);
    lua_call(L, 1, 0);
    self.random_seeded_serial = self.run_serial;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void LuaSandbox::Impl::open() {
  L = lua_newstate(&allocate, this);
  if (!L) throw LuaError(fmt::format("error: cannot create a Lua state for pack {}", pack));
  *static_cast<Impl**>(lua_getextraspace(L)) = this;
  lua_atpanic(L, &panic);

  luaL_requiref(L, "_G", luaopen_base, 0);              // 1: the full base library
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0);  // 2
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 0);   // 3
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 0);   // 4
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 0);   // 5
  lua_newtable(L);                                      // 6: the pack's _ENV
  constexpr int base = 1, string = 2, table = 3, math = 4, utf8 = 5, env = 6;

  charge_function(base, "tonumber", &sandbox::cost_tonumber);
  charge_function(base, "rawequal", &sandbox::cost_rawequal);
  for (const char* name :
       {"assert", "error", "ipairs", "next", "pairs", "select", "tonumber", "tostring", "type",
        "rawequal", "rawlen", "rawget", "rawset", "getmetatable"}) {
    lua_getfield(L, base, name);
    lua_setfield(L, env, name);
  }
  lua_pushcfunction(L, &sandbox_pcall);
  lua_setfield(L, env, "pcall");
  lua_pushcfunction(L, &sandbox_xpcall);
  lua_setfield(L, env, "xpcall");
  lua_getfield(L, base, "setmetatable");
  lua_pushcclosure(L, &sandbox_setmetatable, 1);
  lua_setfield(L, env, "setmetatable");
  lua_pushcfunction(L, [](lua_State*) { return 0; });  // print goes nowhere
  lua_setfield(L, env, "print");

  // string.dump would hand out bytecode; the strings' metatable shares this table.
  lua_pushnil(L);
  lua_setfield(L, string, "dump");
  install_counted_patterns(L, string, &charge_steps);
  charge_function(string, "byte", &sandbox::cost_byte_range);
  for (const char* name : {"pack", "unpack", "packsize"}) {
    charge_function(string, name, &sandbox::cost_scan_first);
  }
  lua_pushvalue(L, string);
  lua_setfield(L, env, "string");
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 2);

  lua_getfield(L, math, "random");
  lua_getfield(L, math, "randomseed");
  lua_pushcclosure(L, &deterministic_random, 2);
  lua_setfield(L, math, "random");
  lua_pushnil(L);
  lua_setfield(L, math, "randomseed");
  lua_pushvalue(L, math);
  lua_setfield(L, env, "math");

  charge_function(table, "move", &sandbox::cost_move);
  charge_function(table, "insert", &sandbox::cost_insert);
  charge_function(table, "remove", &sandbox::cost_remove);
  charge_function(table, "concat", &sandbox::cost_concat);
  charge_function(table, "unpack", &sandbox::cost_unpack);
  charge_function(table, "sort", &sandbox::cost_sort);
  lua_pushvalue(L, table);
  lua_setfield(L, env, "table");
  charge_function(utf8, "codepoint", &sandbox::cost_byte_range);
  for (const char* name : {"len", "offset", "codes"})
    charge_function(utf8, name, &sandbox::cost_scan_first);
  lua_pushvalue(L, utf8);
  lua_setfield(L, env, "utf8");

  lua_pushvalue(L, env);
  lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_pushliteral(L, "sandbox limit exceeded");
  abort_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_settop(L, 0);
}

}  // namespace cw::rules
