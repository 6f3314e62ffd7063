#include "rules/lua_sandbox.h"

#include <doctest/doctest.h>

#include <lua.hpp>
#include <string>
#include <vector>

namespace cw::rules {
namespace {

const LuaCallSite kSite{"my.pack", "my.pack/slow"};

// Calls hook `name` and returns the LuaError's text, or "" when the call succeeded.
std::string call_error(LuaSandbox& lua, std::string_view name, std::vector<LuaValue> args = {}) {
  try {
    lua.call(name, args, kSite);
  } catch (const LuaError& error) {
    return error.what();
  }
  return "";
}

std::string load_error(LuaSandbox& lua, std::string_view code, uint32_t first_line = 1) {
  try {
    lua.load("pack.cw", code, first_line);
  } catch (const LuaError& error) {
    return error.what();
  }
  return "";
}

LuaValue call(LuaSandbox& lua, std::string_view name, std::vector<LuaValue> args = {}) {
  return lua.call(name, args, kSite);
}

// A real precompiled chunk, made by an unsandboxed state.
std::string bytecode_of(const char* source) {
  lua_State* L = luaL_newstate();
  REQUIRE(luaL_loadstring(L, source) == LUA_OK);
  std::string bytes;
  lua_dump(
      L,
      [](lua_State*, const void* data, size_t size, void* out) {
        static_cast<std::string*>(out)->append(static_cast<const char*>(data), size);
        return 0;
      },
      &bytes, 0);
  lua_close(L);
  return bytes;
}

TEST_CASE("lua: scripts cannot reach files, processes, loaders or the debug library") {
  LuaSandbox lua("my.pack");
  lua.load("pack.cw",
           "function missing()\n"
           "  return {type(io), type(os), type(require), type(dofile), type(loadfile),\n"
           "          type(load), type(loadstring), type(debug), type(package),\n"
           "          type(collectgarbage), type(coroutine), type(string.dump), type(_G)}\n"
           "end\n"
           "function open() return io.open('/etc/passwd') end\n"
           "function run() return os.execute('true') end\n"
           "function dump() return string.dump(open) end\n"
           "function load_text() return load('return 1')() end\n",
           10);
  LuaValue nil = LuaValue::string("nil");
  CHECK(call(lua, "missing") ==
        LuaValue::from_list({nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}));
  CHECK(call_error(lua, "open") ==
        "pack.cw:15: error: lua hook 'open' (pack my.pack, rule my.pack/slow) failed: attempt "
        "to index a nil value (global 'io')");
  CHECK(call_error(lua, "run") ==
        "pack.cw:16: error: lua hook 'run' (pack my.pack, rule my.pack/slow) failed: attempt "
        "to index a nil value (global 'os')");
  CHECK(call_error(lua, "dump") ==
        "pack.cw:17: error: lua hook 'dump' (pack my.pack, rule my.pack/slow) failed: attempt "
        "to call a nil value (field 'dump')");
  CHECK(call_error(lua, "load_text") ==
        "pack.cw:18: error: lua hook 'load_text' (pack my.pack, rule my.pack/slow) failed: "
        "attempt to call a nil value (global 'load')");
}

TEST_CASE("lua: the whitelisted basic functions and libraries are there") {
  LuaSandbox lua("my.pack");
  lua.load("pack.cw",
           "function present()\n"
           "  local names = {}\n"
           "  for name, value in pairs(_ENV) do names[#names + 1] = name end\n"
           "  table.sort(names)\n"
           "  return table.concat(names, ' ')\n"
           "end\n"
           "function use(s)\n"
           "  print('goes nowhere')\n"
           "  return select('#', 1, 2) + tonumber('40') + utf8.len('é') + math.max(-1, 0) +\n"
           "         #string.upper(s) + rawlen({1}) + (rawequal(s, s) and 1 or 0)\n"
           "end\n",
           1);
  CHECK(call(lua, "present") ==
        LuaValue::string("assert error getmetatable ipairs math next pairs pcall present print "
                         "rawequal rawget rawlen rawset select setmetatable string table "
                         "tonumber tostring type use utf8 xpcall"));
  CHECK(call(lua, "use", {LuaValue::string("ab")}) ==
        LuaValue::integer(2 + 40 + 1 + 0 + 2 + 1 + 1));
}

TEST_CASE("lua: a binary chunk is refused") {
  LuaSandbox lua("my.pack");
  std::string bytes = bytecode_of("function evil() return 1 end");
  CHECK(load_error(lua, bytes, 7) ==
        "pack.cw:7: error: lua block (pack my.pack) is a precompiled binary chunk; only Lua "
        "source text is accepted");
  CHECK_FALSE(lua.has_function("evil"));
}

TEST_CASE("lua: scripts cannot reach or change the strings' metatable") {
  LuaSandbox lua("my.pack");
  lua.load("pack.cw",
           "function metatable() return getmetatable('') end\n"
           "function index() return getmetatable('').__index end\n"
           "function method_dump() return ('x').dump end\n"
           "function replace() return setmetatable('', {}) end\n"
           "function via_methods() string.upper = nil; return ('x'):upper() end\n",
           1);
  CHECK(call(lua, "metatable") == LuaValue::boolean(false));
  CHECK(call_error(lua, "index") ==
        "pack.cw:2: error: lua hook 'index' (pack my.pack, rule my.pack/slow) failed: attempt to "
        "index a boolean value");
  CHECK(call(lua, "method_dump") == LuaValue::nil());
  CHECK(call_error(lua, "replace") ==
        "pack.cw:4: error: lua hook 'replace' (pack my.pack, rule my.pack/slow) failed: bad "
        "argument #1 to 'setmetatable' (table expected, got string)");
  // Methods are the pack's own string table: changing it only affects this pack.
  CHECK(call_error(lua, "via_methods") ==
        "pack.cw:5: error: lua hook 'via_methods' (pack my.pack, rule my.pack/slow) failed: "
        "attempt to call a nil value (method 'upper')");
}

TEST_CASE("lua: finalizers are refused") {
  LuaSandbox lua("my.pack");
  CHECK(load_error(lua, "setmetatable({}, {__gc = function() while true do end end})", 3) ==
        "pack.cw:3: error: lua block (pack my.pack) failed: __gc metamethods are not available "
        "in the sandbox");
}

TEST_CASE("lua: a chunk nested too deeply to compile says why, not an empty reason") {
  LuaSandbox lua("my.pack");
  const std::string code = "local x = " + std::string(100000, '(') + "1" + std::string(100000, ')');
  const std::string error = load_error(lua, code, 3);
  const std::string said = "pack.cw:3: error: lua block (pack my.pack) does not compile: ";
  REQUIRE(error.rfind(said, 0) == 0);
  CHECK(error.size() > said.size());
}

TEST_CASE("lua: an endless loop is stopped by the instruction budget") {
  LuaSandbox lua("my.pack", {.instructions = 10'000});
  lua.load("pack.cw",
           "function spin()\n"
           "  local n = 0\n"
           "  while true do n = n + 1 end\n"
           "end\n"
           "function fine(x) return x + 1 end\n",
           20);
  CHECK(call_error(lua, "spin") ==
        "pack.cw:22: error: lua hook 'spin' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 10000 instructions");
  // The budget is per call: the state is usable and the next call gets a fresh budget.
  CHECK(call(lua, "fine", {LuaValue::integer(1)}) == LuaValue::integer(2));
  CHECK(call_error(lua, "spin") ==
        "pack.cw:22: error: lua hook 'spin' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 10000 instructions");
}

TEST_CASE("lua: pcall, xpcall and __close cannot swallow a broken budget") {
  LuaSandbox lua("my.pack", {.instructions = 10'000});
  lua.load(
      "pack.cw",
      "function retry()\n"
      "  while true do\n"
      "    pcall(function() while true do end end)\n"
      "  end\n"
      "end\n"
      "function handled()\n"
      "  while true do\n"
      "    xpcall(function() while true do end end, function() return 'ok' end)\n"
      "  end\n"
      "end\n"
      "function closing()\n"
      "  local guard <close> = setmetatable({}, {__close = function() while true do end end})\n"
      "  while true do end\n"
      "end\n"
      "function after() return 'usable' end\n",
      1);
  CHECK(call_error(lua, "retry") ==
        "pack.cw:3: error: lua hook 'retry' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 10000 instructions");
  CHECK(call_error(lua, "handled") ==
        "pack.cw:8: error: lua hook 'handled' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 10000 instructions");
  CHECK(call_error(lua, "closing") ==
        "pack.cw:13: error: lua hook 'closing' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 10000 instructions");
  CHECK(call(lua, "after") == LuaValue::string("usable"));
}

TEST_CASE("lua: a pattern that backtracks for ever is stopped by the instruction budget") {
  LuaSandbox lua("my.pack", {.instructions = 100'000});
  lua.load("pack.cw",
           "function backtrack(s)\n"
           "  return string.find(s, string.rep('a*', 30) .. 'b')\n"
           "end\n",
           1);
  CHECK(call_error(lua, "backtrack", {LuaValue::string(std::string(40, 'a'))}) ==
        "pack.cw:2: error: lua hook 'backtrack' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 100000 instructions");
  CHECK(call(lua, "backtrack", {LuaValue::string("aab")}) == LuaValue::integer(1));
}

TEST_CASE("lua: a chunk that loops forever is stopped while loading") {
  LuaSandbox lua("my.pack", {.instructions = 10'000});
  CHECK(load_error(lua, "local x = 1\nwhile true do x = x + 1 end\n", 5) ==
        "pack.cw:6: error: lua block (pack my.pack) exceeded its instruction budget of 10000 "
        "instructions");
}

TEST_CASE("lua: memory growth is stopped by the cap, also inside pcall") {
  LuaSandbox lua("my.pack", {.instructions = 100'000'000, .memory_bytes = 1u << 20});
  lua.load("pack.cw",
           "function strings()\n"
           "  local s = 'x'\n"
           "  while true do s = s .. s end\n"
           "end\n"
           "function tables()\n"
           "  local t = {}\n"
           "  for i = 1, 1e9 do t[i] = i end\n"
           "end\n"
           "function caught()\n"
           "  local ok = pcall(string.rep, 'x', 1 << 30)\n"
           "  return 'survived'\n"
           "end\n"
           "function caught_table()\n"
           "  local ok = pcall(function() local t = {} for i = 1, 1e9 do t[i] = {} end end)\n"
           "  return 'survived'\n"
           "end\n"
           "function small() return #string.rep('x', 1000) end\n",
           1);
  std::string limit = "ran out of memory (limit 1048576 bytes)";
  CHECK(call_error(lua, "strings") ==
        "pack.cw:3: error: lua hook 'strings' (pack my.pack, rule my.pack/slow) " + limit);
  CHECK(call_error(lua, "tables") ==
        "pack.cw:7: error: lua hook 'tables' (pack my.pack, rule my.pack/slow) " + limit);
  CHECK(call_error(lua, "caught") ==
        "pack.cw:10: error: lua hook 'caught' (pack my.pack, rule my.pack/slow) " + limit);
  CHECK(call_error(lua, "caught_table") ==
        "pack.cw:14: error: lua hook 'caught_table' (pack my.pack, rule my.pack/slow) " + limit);
  // The garbage of failed calls is collected: the state is usable.
  CHECK(call(lua, "small") == LuaValue::integer(1000));
}

TEST_CASE("lua: a runtime error names the file line, once") {
  LuaSandbox lua("my.pack");
  lua.load("rules/slow.cw",
           "local function helper(x)\n"
           "  return x.field\n"
           "end\n"
           "function indexes() return helper(nil) end\n"
           "function raises() error('no score for ' .. 'thread 7') end\n"
           "function raises_table() error({code = 1}) end\n"
           "function raises_bare() error('bare', 0) end\n",
           40);
  CHECK(call_error(lua, "indexes") ==
        "rules/slow.cw:41: error: lua hook 'indexes' (pack my.pack, rule my.pack/slow) failed: "
        "attempt to index a nil value (local 'x')");
  CHECK(call_error(lua, "raises") ==
        "rules/slow.cw:44: error: lua hook 'raises' (pack my.pack, rule my.pack/slow) failed: no "
        "score for thread 7");
  CHECK(call_error(lua, "raises_table") ==
        "rules/slow.cw:45: error: lua hook 'raises_table' (pack my.pack, rule my.pack/slow) "
        "failed: (error object is a table value)");
  CHECK(call_error(lua, "raises_bare") ==
        "rules/slow.cw:46: error: lua hook 'raises_bare' (pack my.pack, rule my.pack/slow) "
        "failed: bare");
}

TEST_CASE("lua: load errors name the file line") {
  LuaSandbox lua("my.pack");
  CHECK(load_error(lua, "function f()\n  return 1 +\nend\n", 30) ==
        "pack.cw:32: error: lua block (pack my.pack) does not compile: unexpected symbol near "
        "'end'");
  CHECK(load_error(lua, "x = 1\nerror('at load')\n", 100000) ==
        "pack.cw:100001: error: lua block (pack my.pack) failed: at load");
  CHECK(load_error(lua, "x = 1", 1) == "");
}

TEST_CASE("lua: an undefined hook, or a global that is not a function") {
  LuaSandbox lua("my.pack");
  lua.load("pack.cw", "weight = 3", 1);
  CHECK_FALSE(lua.has_function("score"));
  CHECK_FALSE(lua.has_function("weight"));
  CHECK(call_error(lua, "score") ==
        "lua hook 'score' is not defined (pack my.pack, rule my.pack/slow)");
  CHECK(call_error(lua, "weight") ==
        "lua hook 'weight' is a number, not a function (pack my.pack, rule my.pack/slow)");
}

TEST_CASE("lua: values round-trip") {
  LuaSandbox lua("my.pack");
  lua.load("pack.cw",
           "function same(x) return x end\n"
           "function first() return 1, 2 end\n"
           "function nothing() end\n"
           "function kinds(...) local out = {} for i = 1, select('#', ...) do\n"
           "  out[i] = math.type((select(i, ...))) or type((select(i, ...))) end return out end\n",
           1);
  std::vector<LuaValue> values = {
      LuaValue::nil(),
      LuaValue::boolean(true),
      LuaValue::boolean(false),
      LuaValue::integer(-9'007'199'254'740'993),
      LuaValue::number(2.5),
      LuaValue::string(std::string("a\0b", 3)),
      LuaValue::from_list({}),
      LuaValue::from_list({LuaValue::string("futex_wait"), LuaValue::string("main")}),
      LuaValue::from_list({LuaValue::integer(1), LuaValue::from_list({LuaValue::number(0.5)})}),
  };
  for (const LuaValue& value : values) CHECK(call(lua, "same", {value}) == value);
  CHECK(call(lua, "first") == LuaValue::integer(1));
  CHECK(call(lua, "nothing") == LuaValue::nil());
  CHECK(call(lua, "kinds",
             {LuaValue::integer(1), LuaValue::number(1), LuaValue::string("1"),
              LuaValue::boolean(true), LuaValue::from_list({})}) ==
        LuaValue::from_list({LuaValue::string("integer"), LuaValue::string("float"),
                             LuaValue::string("string"), LuaValue::string("boolean"),
                             LuaValue::string("table")}));
}

TEST_CASE("lua: values that are not plain data are refused on return") {
  LuaSandbox lua("my.pack");
  lua.load("pack.cw",
           "function fn() return print end\n"
           "function map() return {a = 1} end\n"
           "function holding()\n"
           "  return {1, function() end}\n"
           "end\n"
           "function cycle() local t = {} t[1] = t return t end\n",
           1);
  CHECK(call_error(lua, "fn") ==
        "pack.cw:1: error: lua hook 'fn' (pack my.pack, rule my.pack/slow) returned a function");
  CHECK(call_error(lua, "map") ==
        "pack.cw:2: error: lua hook 'map' (pack my.pack, rule my.pack/slow) returned a table "
        "that is not a list");
  CHECK(call_error(lua, "holding") ==
        "pack.cw:3: error: lua hook 'holding' (pack my.pack, rule my.pack/slow) returned a list "
        "holding a function");
  CHECK(call_error(lua, "cycle") ==
        "pack.cw:6: error: lua hook 'cycle' (pack my.pack, rule my.pack/slow) returned lists "
        "nested deeper than 16");
}

TEST_CASE("lua: two packs do not share globals") {
  LuaSandbox first("first.pack");
  LuaSandbox second("second.pack");
  first.load("first.cw", "shared = 'first'\nfunction get() return shared end\nstring.x = 1", 1);
  second.load("second.cw",
              "function get() return shared end\n"
              "function probe() return string.x end",
              1);
  CHECK(first.call("get", {}, kSite) == LuaValue::string("first"));
  CHECK(second.call("get", {}, kSite) == LuaValue::nil());
  CHECK(second.call("probe", {}, kSite) == LuaValue::nil());
  CHECK_FALSE(second.has_function("shared"));
}

TEST_CASE("lua: globals persist across calls and loads of one pack") {
  LuaSandbox lua("my.pack");
  lua.load("a.cw", "count = 0\nfunction bump() count = count + 1 return count end", 1);
  lua.load("b.cw", "function twice() bump() return bump() end", 1);
  CHECK(call(lua, "bump") == LuaValue::integer(1));
  CHECK(call(lua, "twice") == LuaValue::integer(3));
}

TEST_CASE("lua: math.random gives the same numbers in every call and every pack") {
  LuaSandbox first("first.pack");
  LuaSandbox second("second.pack");
  const char* code =
      "function draw() return {math.random(1000000), math.random(1000000)} end\n"
      "function reseed() return math.randomseed end";
  first.load("pack.cw", code, 1);
  second.load("pack.cw", code, 1);
  LuaValue drawn = first.call("draw", {}, kSite);
  CHECK(first.call("draw", {}, kSite) == drawn);
  CHECK(second.call("draw", {}, kSite) == drawn);
  CHECK(first.call("reseed", {}, kSite) == LuaValue::nil());
}

}  // namespace
}  // namespace cw::rules
