#include "rules/lua_sandbox.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

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

TEST_CASE("lua: xpcall's message handler runs under the budget") {
  LuaSandbox lua("my.pack", {.instructions = 10'000});
  lua.load("pack.cw",
           "function on_error()\n"
           "  xpcall(error, function() while true do end end)\n"
           "end\n"
           "function on_budget()\n"
           "  xpcall(function() while true do end end, function() while true do end end)\n"
           "end\n"
           "function handled()\n"
           "  return select(2, xpcall(error, function(m) return 'handled ' .. m end, 'x', 0))\n"
           "end\n",
           1);
  CHECK(call_error(lua, "on_error") ==
        "pack.cw:2: error: lua hook 'on_error' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 10000 instructions");
  CHECK(call_error(lua, "on_budget") ==
        "pack.cw:5: error: lua hook 'on_budget' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 10000 instructions");
  CHECK(call(lua, "handled") == LuaValue::string("handled x"));
}

TEST_CASE("lua: library functions are charged for the elements they loop over") {
  // A budget a tenth of the default: every hook below breaks it all the same, and `copies`
  // fills 25 MB of fresh 1 MB blocks on the way instead of 250 (under AddressSanitizer,
  // whose quarantine keeps freed blocks from being reused, 250 took more than the 2 s CPU
  // limit on a VM whose fresh memory costs the host's time).
  LuaSandbox lua("my.pack", {.instructions = 100'000});
  lua.load(
      "pack.cw",
      "function move() table.move({}, 1, math.maxinteger - 2, 2) end\n"
      "function insert_front()\n"
      "  local t = {}\n"
      "  for i = 1, 100000 do table.insert(t, 1, i) end\n"
      "end\n"
      "function remove_front()\n"
      "  local t = {}\n"
      "  for i = 1, 5000 do t[i] = i end\n"
      "  for i = 1, 5000 do table.remove(t, 1) end\n"
      "end\n"
      "function concat_all()\n"
      "  local t = {}\n"
      "  for i = 1, 10000 do t[i] = '' end\n"
      "  for i = 1, 100 do table.concat(t) end\n"
      "end\n"
      "function bytes()\n"
      "  local s = string.rep('x', 500000)\n"
      "  for i = 1, 100 do string.byte(s, 1, -1) end\n"
      "end\n"
      "function scan()\n"
      "  local s = string.rep('x', 10000000)\n"
      "  for i = 1, 1000 do utf8.len(s) end\n"
      "end\n"
      // Integer keys put in free slots of the hash part: #t is 2^61.
      "function sparse_length()\n"
      "  local t, k = {}, 1\n"
      "  for i = 1, 129 do t['k' .. i] = i end for i = 1, 62 do t[k] = i; k = k * 2 end\n"
      "  table.insert(t, 1, 0)\n"
      "end\n"
      "function copies()\n"
      "  local s = string.rep('x', 1000000)\n"
      "  for i = 1, 2000 do local t = s .. i end\n"
      "end\n"
      "function small()\n"
      "  local t = {3, 1, 2}\n"
      "  table.insert(t, 1, 0); table.remove(t, 2); table.sort(t)\n"
      "  local moved = table.move(t, 1, 3, 2, {})\n"
      "  return table.concat(t, ',') .. ' ' .. #moved .. ' ' .. select('#', table.unpack(t)) ..\n"
      "         ' ' .. string.byte('abc', -1) .. ' ' .. utf8.len('héllo')\n"
      "end\n"
      "function out_of_bounds() table.insert({}, -(1 << 62), 1) end\n",
      1);
  auto budget = [](std::string_view hook, int line) {
    return fmt::format(
        "pack.cw:{}: error: lua hook '{}' (pack my.pack, rule my.pack/slow) exceeded its "
        "instruction budget of 100000 instructions",
        line, hook);
  };
  CHECK(call_error(lua, "move") == budget("move", 1));
  CHECK(call_error(lua, "insert_front") == budget("insert_front", 4));
  CHECK(call_error(lua, "remove_front") == budget("remove_front", 9));
  CHECK(call_error(lua, "concat_all") == budget("concat_all", 14));
  CHECK(call_error(lua, "bytes") == budget("bytes", 18));
  CHECK(call_error(lua, "scan") == budget("scan", 22));
  CHECK(call_error(lua, "sparse_length") == budget("sparse_length", 27));
  // Copying costs what its bytes cost: each `..` here copies 1 MB.
  CHECK(call_error(lua, "copies") == budget("copies", 31));
  // Ordinary use costs little, and errors are the library's own.
  CHECK(call(lua, "small") == LuaValue::string("0,1,2 4 3 99 5"));
  CHECK(call_error(lua, "out_of_bounds") ==
        "pack.cw:40: error: lua hook 'out_of_bounds' (pack my.pack, rule my.pack/slow) failed: "
        "bad argument #2 to 'insert' (position out of bounds)");
}

TEST_CASE("lua: the CPU time limit stops work the budget cannot see") {
  using namespace std::chrono_literals;
  LuaSandbox lua("my.pack", {.instructions = 1'000'000'000'000, .cpu_time = 100ms});
  // Each `==` compares 8 MB byte by byte in one instruction.
  lua.load("pack.cw",
           "function compare()\n"
           "  local a, b = string.rep('x', 8000000), string.rep('x', 8000000)\n"
           "  while true do local same = a == b end\n"
           "end\n"
           "function fine() return 1 end\n",
           1);
  CHECK(call_error(lua, "compare") ==
        "pack.cw:3: error: lua hook 'compare' (pack my.pack, rule my.pack/slow) ran out of time "
        "(limit 100 ms of CPU time)");
  CHECK(call(lua, "fine") == LuaValue::integer(1));
  CHECK(load_error(lua, "while true do end", 7) ==
        "pack.cw:7: error: lua block (pack my.pack) ran out of time (limit 100 ms of CPU time)");
}

TEST_CASE("lua: error messages are bounded, escaped and never empty") {
  LuaSandbox lua("my.pack");
  lua.load("pack.cw",
           "function huge() error(string.rep('x', 10 * 1024 * 1024) .. 'end', 0) end\n"
           "function nul() error('before\\0after\\27[2J') end\n"
           "function empty() error('') end\n"
           "function wide() error('a' .. string.rep('\\u{e9}', 1000), 0) end\n",
           1);
  CHECK(call_error(lua, "huge") ==
        "pack.cw:1: error: lua hook 'huge' (pack my.pack, rule my.pack/slow) failed: " +
            std::string(300, 'x') + "… (10485763 bytes)");
  CHECK(call_error(lua, "nul") ==
        "pack.cw:2: error: lua hook 'nul' (pack my.pack, rule my.pack/slow) failed: "
        "before\\x00after\\x1b[2J");
  CHECK(call_error(lua, "empty") ==
        "pack.cw:3: error: lua hook 'empty' (pack my.pack, rule my.pack/slow) failed: (an empty "
        "error message)");
  // An excerpt ends between characters, not inside one.
  std::string wide = "a";
  for (int i = 0; i < 149; ++i) wide += "\u00e9";
  CHECK(call_error(lua, "wide") ==
        "pack.cw:4: error: lua hook 'wide' (pack my.pack, rule my.pack/slow) failed: " + wide +
            "… (2001 bytes)");
  const std::string unfinished = "x = '" + std::string(1'000'000, 'a') + "\n";
  CHECK(load_error(lua, unfinished, 9) ==
        "pack.cw:9: error: lua block (pack my.pack) does not compile: unfinished string near '" +
            std::string("'") + std::string(275, 'a') + "… (1000026 bytes)");
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

TEST_CASE("lua: a returned list is bounded by what the state could hold") {
  LuaSandbox lua("my.pack");
  lua.load("pack.cw",
           // Integer keys put in free slots of the hash part: #t is 2^61.
           "function sparse()\n"
           "  local t, k = {}, 1\n"
           "  for i = 1, 129 do t['k' .. i] = i end for i = 1, 62 do t[k] = i; k = k * 2 end\n"
           "  for i = 1, 129 do t['k' .. i] = nil end\n"
           "  return t\n"
           "end\n"
           "function shared()\n"
           "  local list = {}\n"
           "  for i = 1, 1000 do list[i] = i end\n"
           "  for level = 1, 3 do\n"
           "    local up = {}\n"
           "    for i = 1, 1000 do up[i] = list end\n"
           "    list = up\n"
           "  end\n"
           "  return list\n"
           "end\n",
           1);
  CHECK(call_error(lua, "sparse") ==
        "pack.cw:1: error: lua hook 'sparse' (pack my.pack, rule my.pack/slow) returned lists "
        "of more than 524288 values in all");
  CHECK(call_error(lua, "shared") ==
        "pack.cw:7: error: lua hook 'shared' (pack my.pack, rule my.pack/slow) returned lists "
        "of more than 524288 values in all");
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
