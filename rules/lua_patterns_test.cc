#include "rules/lua_patterns.h"

#include <doctest/doctest.h>

#include <lua.hpp>
#include <string>

namespace cw::rules {
namespace {

uint64_t charged = 0;
void count_steps(lua_State*, uint64_t steps) {
  charged += steps;
}

// Runs `code` in a state with the counted pattern functions; returns its string result
// or the error message.
std::string run(const char* code) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "string");
  install_counted_patterns(L, lua_gettop(L), &count_steps);
  lua_pop(L, 1);
  std::string result;
  if (luaL_dostring(L, code) != LUA_OK || lua_type(L, -1) == LUA_TSTRING) {
    result = lua_tostring(L, -1);
  }
  lua_close(L);
  return result;
}

TEST_CASE("lua patterns: find, match, gmatch and gsub behave as in Lua 5.4") {
  CHECK(run("return table.concat({string.find('hello world', 'o w')}, ',')") == "5,7");
  CHECK(run("return table.concat({string.find('a.b', '.', 1, true)}, ',')") == "2,2");
  CHECK(run("return table.concat({('  key = v  '):match('^%s*(%w+)%s*=%s*(.-)%s*$')}, ',')") ==
        "key,v");
  CHECK(run("return table.concat({string.match('f(a(b)c)d', '()%b()()')}, ',')") == "2,9");
  CHECK(run("local r = {} for k, v in ('x=1, y=22'):gmatch('(%w+)=(%w+)') do r[#r+1] = k..v "
            "end return table.concat(r, ' ')") == "x1 y22");
  CHECK(run("return (string.gsub('THE (quick) fox', '%f[%a]%a+', function(w) return #w end))") ==
        "3 (5) 3");
  CHECK(run("return string.gsub('abc', 'b*', '-') .. '|' .. select(2, string.gsub('abc', 'b*', "
            "'-'))") == "-a-c-|3");
  CHECK(run("return (string.gsub('hello', '(l)(l)', '%2%1%%'))") == "hell%o");
  CHECK(run("string.gsub('x', 'x', '%9')") ==
        "[string \"string.gsub('x', 'x', '%9')\"]:1: invalid capture index %9");
  CHECK(run("string.find('x', '[a')") ==
        "[string \"string.find('x', '[a')\"]:1: malformed pattern (missing ']')");
}

TEST_CASE("lua patterns: backtracking steps are charged") {
  charged = 0;
  CHECK(run("return tostring(string.find(string.rep('a', 12), string.rep('a*', 12) .. 'b'))") ==
        "nil");
  CHECK(charged > 100'000);
  charged = 0;
  CHECK(run("return string.match('abc', 'b')") == "b");
  CHECK(charged < 20);
}

}  // namespace
}  // namespace cw::rules
