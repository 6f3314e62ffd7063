#include "rules/lua_sandbox.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <lua.hpp>
#include <optional>

#include "base/terminal_text.h"
#include "rules/lua_patterns.h"

namespace cw::rules {
namespace {

enum class Failure : uint8_t { None, Budget, Memory, Time };

struct Location {
  std::string file;
  int line = 0;
  bool known() const { return line > 0; }
};

// Lists nested deeper than this (or cyclic tables) are refused on the way in and out.
constexpr int kMaxListDepth = 16;
// A fixed seed: math.random gives the same sequence in every call of every run.
constexpr lua_Integer kRandomSeed = 0x5eed;
// The count hook fires at least this often, to look at the clock.
constexpr int kHookPeriod = 1000;
// Allocating (and so copying or collecting) this many bytes, or scanning this many bytes
// of a string in a library function, costs one instruction.
constexpr size_t kBytesPerInstruction = 1024;
// An error message longer than this is shown as an excerpt.
constexpr size_t kMaxMessageBytes = 300;

// An error message as a terminal may show it: control bytes escaped (a NUL no longer
// ends the text), an excerpt of a long one, and words for an empty one.
std::string message_text(std::string_view message) {
  if (message.empty()) return "(an empty error message)";
  std::string_view shown = message;
  if (shown.size() > kMaxMessageBytes) {
    size_t cut = kMaxMessageBytes;
    // Not inside a UTF-8 sequence, which would show as escaped bytes.
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xc0) == 0x80) --cut;
    shown = message.substr(0, cut);
  }
  std::string text = terminal_text(shown);
  if (shown.size() < message.size()) text += fmt::format("… ({} bytes)", message.size());
  return text;
}

std::chrono::nanoseconds thread_cpu_time() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

// Where the innermost Lua function of the stack is: a pack's chunk, since only those
// run in the state. Reads the stack only: safe from the allocator and from hooks.
Location innermost_lua_location(lua_State* L) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar); ++level) {
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 && ar.source[0] == '@') {
      return {ar.source + 1, ar.currentline};
    }
  }
  return {};
}

// Lua prefixes messages with "SHORT_SRC:LINE: "; the error we render names the line
// itself, so the prefix goes when it matches `short_src`.
std::string_view strip_location(std::string_view message, std::string_view short_src) {
  if (short_src.empty() || !message.starts_with(short_src)) return message;
  std::string_view rest = message.substr(short_src.size());
  if (!rest.starts_with(':')) return message;
  size_t digits = 1;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 1 || rest.substr(digits, 2) != ": ") return message;
  return rest.substr(digits + 2);
}

// Splits a syntax error "SHORT_SRC:LINE: MESSAGE" into its line and message.
std::optional<std::pair<int, std::string_view>> split_syntax_error(std::string_view message) {
  for (size_t colon = message.find(':'); colon != std::string_view::npos;
       colon = message.find(':', colon + 1)) {
    size_t end = colon + 1;
    int line = 0;
    while (end < message.size() && message[end] >= '0' && message[end] <= '9' && line < 1e8) {
      line = line * 10 + (message[end++] - '0');
    }
    if (end > colon + 1 && message.substr(end, 2) == ": ") {
      return std::pair{line, message.substr(end + 2)};
    }
  }
  return std::nullopt;
}

std::string error_object_text(lua_State* L, int index) {
  if (lua_type(L, index) == LUA_TSTRING) {
    size_t size = 0;
    const char* text = lua_tolstring(L, index, &size);
    return std::string(text, size);
  }
  return fmt::format("(error object is a {} value)", luaL_typename(L, index));
}

// Feeds lua_load `newlines` line breaks, then the code, so that Lua's line numbers are
// the file's without copying the code.
struct ChunkReader {
  size_t newlines;
  std::string_view code;
  bool code_given = false;

  static const char* read(lua_State*, void* data, size_t* size) {
    static const std::string kNewlines(4096, '\n');
    auto* self = static_cast<ChunkReader*>(data);
    if (self->newlines > 0) {
      *size = std::min(self->newlines, kNewlines.size());
      self->newlines -= *size;
      return kNewlines.data();
    }
    if (self->code_given || self->code.empty()) {
      *size = 0;
      return nullptr;
    }
    self->code_given = true;
    *size = self->code.size();
    return self->code.data();
  }
};

// ---- What a library function's loop will cost, from its arguments ----
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

using Cost = uint64_t (*)(lua_State* L);

// Elements from `first` to `last`, both included; saturates.
uint64_t span(lua_Integer first, lua_Integer last) {
  if (last < first) return 0;
  uint64_t count = static_cast<lua_Unsigned>(last) - static_cast<lua_Unsigned>(first);
  return count == UINT64_MAX ? count : count + 1;
}

uint64_t times(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

// The integer argument `arg`, or `fallback` when absent; nullopt for another type.
std::optional<lua_Integer> integer_arg(lua_State* L, int arg, lua_Integer fallback) {
  if (lua_isnoneornil(L, arg)) return fallback;
  int is_integer = 0;
  lua_Integer value = lua_tointegerx(L, arg, &is_integer);
  if (!is_integer) return std::nullopt;
  return value;
}

// `#value` as the table functions see it (a table's __len included); 0 for values they
// refuse.
lua_Integer length_arg(lua_State* L, int arg) {
  switch (lua_type(L, arg)) {
    case LUA_TSTRING: return static_cast<lua_Integer>(lua_rawlen(L, arg));
    case LUA_TTABLE:
      if (!lua_getmetatable(L, arg)) return static_cast<lua_Integer>(lua_rawlen(L, arg));
      lua_pop(L, 1);
      return luaL_len(L, arg);
    default: return 0;
  }
}

size_t string_arg_size(lua_State* L, int arg) {
  return lua_type(L, arg) == LUA_TSTRING ? lua_rawlen(L, arg) : 0;
}

// Lua's own limit on the values a function returns (LUAI_MAXSTACK): past it, unpack and
// byte raise "too many results" and cost nothing here.
constexpr uint64_t kMaxResults = 1'000'000;

uint64_t cost_move(lua_State* L) {  // table.move(a1, f, e, t [, a2])
  auto first = integer_arg(L, 2, 0), last = integer_arg(L, 3, 0);
  if (!first || !last) return 0;
  // Ranges the function refuses ("too many elements to move") cost nothing.
  if (*first <= 0 && *last >= LUA_MAXINTEGER + *first) return 0;
  return span(*first, *last);
}

uint64_t cost_insert(lua_State* L) {  // table.insert(t, [pos,] value)
  if (lua_gettop(L) != 3) return 0;
  auto position = integer_arg(L, 2, 0);
  lua_Integer size = length_arg(L, 1);
  if (!position || size >= LUA_MAXINTEGER || *position < 1 || *position > size + 1) return 0;
  return span(*position, size + 1);
}

uint64_t cost_remove(lua_State* L) {  // table.remove(t [, pos])
  lua_Integer size = length_arg(L, 1);
  auto position = integer_arg(L, 2, size);
  if (!position || *position < 1) return 0;
  return span(*position, size);
}

uint64_t cost_concat(lua_State* L) {  // table.concat(t [, sep [, i [, j]]])
  auto first = integer_arg(L, 3, 1);
  if (!first) return 0;
  auto last = lua_isnoneornil(L, 4) ? std::optional(length_arg(L, 1)) : integer_arg(L, 4, 0);
  return last ? span(*first, *last) : 0;
}

uint64_t cost_unpack(lua_State* L) {  // table.unpack(t [, i [, j]])
  auto first = integer_arg(L, 2, 1);
  if (!first) return 0;
  auto last = lua_isnoneornil(L, 3) ? std::optional(length_arg(L, 1)) : integer_arg(L, 3, 0);
  if (!last) return 0;
  uint64_t count = span(*first, *last);
  return count < kMaxResults ? count : 0;
}

uint64_t cost_sort(lua_State* L) {  // table.sort(t [, comp]): n log n comparisons
  lua_Integer size = length_arg(L, 1);
  if (size < 2 || size >= INT_MAX) return 0;  // the function refuses more ("array too big")
  uint64_t n = static_cast<uint64_t>(size);
  return times(n, std::bit_width(n));
}

// string.byte(s [, i [, j]]) and utf8.codepoint(s [, i [, j]]) push one value per byte
// of the range.
uint64_t cost_byte_range(lua_State* L) {
  auto size = static_cast<lua_Integer>(string_arg_size(L, 1));
  auto first = integer_arg(L, 2, 1);
  if (!first) return 0;
  auto last = integer_arg(L, 3, *first);
  if (!last) return 0;
  auto position = [size](lua_Integer at) -> lua_Integer {
    if (at >= 0) return std::min(at, size);
    return at < -size ? 0 : size + at + 1;
  };
  uint64_t count = span(std::max<lua_Integer>(position(*first), 1), position(*last));
  return count < kMaxResults ? count : 0;
}

// Functions that scan their first argument, a string: utf8.len, utf8.offset, utf8.codes,
// and string.pack, string.unpack and string.packsize, which read their format.
uint64_t cost_scan_first(lua_State* L) {
  return string_arg_size(L, 1) / kBytesPerInstruction;
}

uint64_t cost_tonumber(lua_State* L) {
  return string_arg_size(L, 1) / kBytesPerInstruction;
}

uint64_t cost_rawequal(lua_State* L) {  // two long strings are compared byte by byte
  return std::min(string_arg_size(L, 1), string_arg_size(L, 2)) / kBytesPerInstruction;
}

}  // namespace

struct LuaSandbox::Impl {
  std::string pack;
  LuaLimits limits;
  lua_State* L = nullptr;

  // Memory accounting for the whole state; the cap holds only while a chunk or a hook
  // runs, so that host-side bookkeeping never fails outside a protected call.
  size_t bytes_in_use = 0;
  bool enforcing = false;
  Location refusal_location;  // where the last refused allocation was asked for

  uint64_t instructions_left = 0;
  int hook_step = 0;
  size_t bytes_not_charged = 0;  // allocated bytes short of one instruction's worth

  // The CPU time limit: the thread's CPU clock at the start of the run, and when (by the
  // cheaper wall clock) to read it next. CPU time never runs ahead of wall time.
  std::chrono::nanoseconds cpu_at_start{};
  std::chrono::steady_clock::time_point next_clock_check;

  Failure failure = Failure::None;
  Location failure_location;
  Location error_location;  // of a runtime error that reached the top
  std::string error_message;

  // Serial of the current run; math.random reseeds itself once per run.
  uint64_t run_serial = 0;
  uint64_t random_seeded_serial = 0;
  int abort_ref = LUA_NOREF;

  static Impl& of(lua_State* L) { return **static_cast<Impl**>(lua_getextraspace(L)); }

  static void* allocate(void* ud, void* block, size_t old_size, size_t new_size) {
    auto& self = *static_cast<Impl*>(ud);
    size_t old_bytes = block ? old_size : 0;  // without a block, old_size is a type tag
    if (new_size == 0) {
      std::free(block);
      self.bytes_in_use -= old_bytes;
      return nullptr;
    }
    bool growing = self.enforcing && new_size > old_bytes;
    if (growing && self.failure != Failure::None) {
      // A broken run stops at its next allocation too, even inside a library function.
      return nullptr;
    }
    if (growing &&
        new_size - old_bytes >
            self.limits.memory_bytes - std::min(self.bytes_in_use, self.limits.memory_bytes)) {
      // Lua collects garbage and asks again; a memory error follows only if that fails.
      self.refusal_location = innermost_lua_location(self.L);
      return nullptr;
    }
    void* grown = std::realloc(block, new_size);
    if (!grown) return nullptr;
    self.bytes_in_use = self.bytes_in_use - old_bytes + new_size;
    if (growing) {
      // Copying and collecting cost what the bytes cost: `s = s .. s` on a long string is
      // one instruction. The hook raises the failure at the next instruction.
      self.bytes_not_charged += new_size - old_bytes;
      uint64_t cost = self.bytes_not_charged / kBytesPerInstruction;
      self.bytes_not_charged %= kBytesPerInstruction;
      if (!self.charge(cost)) self.fail(Failure::Budget, innermost_lua_location(self.L));
    }
    return grown;
  }

  // Takes `cost` instructions from the budget; false when that breaks it.
  bool charge(uint64_t cost) {
    if (cost < instructions_left) {
      instructions_left -= cost;
      return true;
    }
    instructions_left = 0;
    return false;
  }

  bool out_of_time() {
    auto now = std::chrono::steady_clock::now();
    if (now < next_clock_check) return false;
    auto used = thread_cpu_time() - cpu_at_start;
    if (used >= limits.cpu_time) return true;
    next_clock_check = now + (limits.cpu_time - used);
    return false;
  }

  static int panic(lua_State* L) {
    // Only reachable on a host-side bug: every script runs under lua_pcall.
    throw LuaError(fmt::format("error: unprotected Lua error in pack {}: {}", of(L).pack,
                               message_text(error_object_text(L, -1))));
  }

  // Marks the run failed; the hook then raises on every instruction so that nothing the
  // script does (pcall, xpcall, __close) gets past the failure.
  void fail(Failure kind, Location location) {
    if (failure != Failure::None) return;
    failure = kind;
    failure_location = std::move(location);
    lua_sethook(L, &count_hook, LUA_MASKCOUNT, 1);
  }

  [[noreturn]] void raise_abort() {
    lua_rawgeti(L, LUA_REGISTRYINDEX, abort_ref);
    lua_error(L);
    std::abort();  // lua_error does not return
  }

  static void count_hook(lua_State* L, lua_Debug*) {
    Impl& self = of(L);
    if (self.failure == Failure::None) {
      self.instructions_left -= std::min<uint64_t>(self.instructions_left, self.hook_step);
      if (self.instructions_left == 0) {
        self.fail(Failure::Budget, innermost_lua_location(L));
      } else if (self.out_of_time()) {
        self.fail(Failure::Time, innermost_lua_location(L));
      } else {
        self.arm_budget_step();
        return;
      }
    }
    self.raise_abort();
  }

  // Work done inside a library function (the pattern matcher's steps, the elements a
  // table function moves) counts as instructions.
  static void charge_steps(lua_State* L, uint64_t steps) {
    Impl& self = of(L);
    if (!self.enforcing) return;
    if (self.failure == Failure::None) {
      if (self.charge(steps)) return;
      self.fail(Failure::Budget, innermost_lua_location(L));
    }
    self.raise_abort();
  }

  void arm_budget_step() {
    hook_step = static_cast<int>(std::clamp<uint64_t>(instructions_left, 1, kHookPeriod));
    lua_sethook(L, &count_hook, LUA_MASKCOUNT, hook_step);
  }

  // The message handler of the outermost call: the stack is still intact here.
  static int record_error(lua_State* L) {
    Impl& self = of(L);
    if (self.failure == Failure::None && !self.error_location.known()) {
      self.error_location = innermost_lua_location(L);
      std::string message = error_object_text(L, 1);
      lua_Debug ar;
      std::string_view short_src;
      for (int level = 0; lua_getstack(L, level, &ar); ++level) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
          short_src = ar.short_src;
          break;
        }
      }
      self.error_message = message_text(strip_location(message, short_src));
    }
    return 1;
  }

  // pcall and xpcall as in lbaselib, except that a broken budget or memory cap is
  // raised again instead of being returned as an ordinary error.
  static int finish_pcall(lua_State* L, int status, int extra) {
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

  static int sandbox_pcall(lua_State* L) {
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    return finish_pcall(L, lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0), 0);
  }

  // xpcall's message handler, holding the pack's handler as its upvalue. A broken budget,
  // cap or time limit is raised from inside the count hook, and Lua runs a message
  // handler called from a hook with hooks off: the pack's handler would run unbounded.
  // It runs only for the pack's own errors, where the hook counts its instructions.
  static int guarded_handler(lua_State* L) {
    if (of(L).failure != Failure::None) return 1;  // the error object, as it is
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
  }

  static int sandbox_xpcall(lua_State* L) {
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
  static int charged_function(lua_State* L) {
    auto cost = reinterpret_cast<Cost>(lua_touserdata(L, lua_upvalueindex(1)));
    lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(2));
    charge_steps(L, cost(L));
    return original(L);
  }

  // Replaces `name` of the table at absolute index `library` by its charged version.
  void charge_function(int library, const char* name, Cost cost) {
    lua_pushlightuserdata(L, reinterpret_cast<void*>(cost));
    lua_getfield(L, library, name);
    lua_pushcclosure(L, &charged_function, 2);
    lua_setfield(L, library, name);
  }

  // Finalizers would run Lua code at collection time, outside any budget or call.
  static int sandbox_setmetatable(lua_State* L) {
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
  static int deterministic_random(lua_State* L) {
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

  void open() {
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

    charge_function(base, "tonumber", &cost_tonumber);
    charge_function(base, "rawequal", &cost_rawequal);
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
    charge_function(string, "byte", &cost_byte_range);
    for (const char* name : {"pack", "unpack", "packsize"}) {
      charge_function(string, name, &cost_scan_first);
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

    charge_function(table, "move", &cost_move);
    charge_function(table, "insert", &cost_insert);
    charge_function(table, "remove", &cost_remove);
    charge_function(table, "concat", &cost_concat);
    charge_function(table, "unpack", &cost_unpack);
    charge_function(table, "sort", &cost_sort);
    lua_pushvalue(L, table);
    lua_setfield(L, env, "table");
    charge_function(utf8, "codepoint", &cost_byte_range);
    for (const char* name : {"len", "offset", "codes"})
      charge_function(utf8, name, &cost_scan_first);
    lua_pushvalue(L, utf8);
    lua_setfield(L, env, "utf8");

    lua_pushvalue(L, env);
    lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    lua_pushliteral(L, "sandbox limit exceeded");
    abort_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, 0);
  }

  void begin_run() {
    failure = Failure::None;
    failure_location = {};
    refusal_location = {};
    error_location = {};
    error_message.clear();
    ++run_serial;
    instructions_left = limits.instructions;
    bytes_not_charged = 0;
    cpu_at_start = thread_cpu_time();
    next_clock_check = std::chrono::steady_clock::now() + limits.cpu_time;
    arm_budget_step();
    enforcing = true;
  }

  void end_run(int status) {
    enforcing = false;
    if (status == LUA_ERRMEM) fail(Failure::Memory, refusal_location);
    // Garbage the failed run left behind must not count against the next one.
    if (status != LUA_OK) lua_gc(L, LUA_GCCOLLECT);
  }

  // "FILE:LINE: error: SUBJECT WHAT", the location being where the run failed, else
  // `fallback`.
  std::string render_failure(std::string_view subject, const Location& fallback) const {
    const Location& at = failure != Failure::None ? failure_location : error_location;
    const Location& where = at.known() ? at : fallback;
    std::string prefix = where.known() ? fmt::format("{}:{}: ", where.file, where.line) : "";
    switch (failure) {
      case Failure::Budget:
        return fmt::format("{}error: {} exceeded its instruction budget of {} instructions", prefix,
                           subject, limits.instructions);
      case Failure::Memory:
        return fmt::format("{}error: {} ran out of memory (limit {} bytes)", prefix, subject,
                           limits.memory_bytes);
      case Failure::Time:
        return fmt::format("{}error: {} ran out of time (limit {} ms of CPU time)", prefix, subject,
                           limits.cpu_time.count());
      case Failure::None: break;
    }
    return fmt::format("{}error: {} failed: {}", prefix, subject, error_message);
  }
};

namespace {

struct CallRequest {
  std::span<const LuaValue> args;
};

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

// Runs inside lua_pcall with [request, function] and calls the function with the
// request's arguments, so that pushing them is under the memory cap and protected.
int call_with_arguments(lua_State* L) {
  const auto& request = *static_cast<const CallRequest*>(lua_touserdata(L, 1));
  int count = static_cast<int>(std::min<size_t>(request.args.size(), INT_MAX / 2));
  luaL_checkstack(L, count + LUA_MINSTACK, "too many hook arguments");
  for (int i = 0; i < count; ++i) push_value(L, request.args[i], 0);
  lua_call(L, count, 1);
  return 1;
}

// Converts the value at the top of the stack without calling metamethods; an error
// returns what was wrong ("a function", "a table that is not a list", ...). At most
// `values_left` list elements in all: a list's length is not its size (a table holding
// only the keys 1, 2, 4, ..., 2^61 can have a border at 2^61), and one list can be held
// many times over by another.
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

}  // namespace

LuaSandbox::LuaSandbox(std::string pack, LuaLimits limits) : impl_(std::make_unique<Impl>()) {
  impl_->pack = std::move(pack);
  impl_->limits = limits;
  impl_->open();
}

LuaSandbox::~LuaSandbox() {
  if (impl_->L) lua_close(impl_->L);
}

void LuaSandbox::load(std::string_view file, std::string_view code, uint32_t first_line) {
  Impl& impl = *impl_;
  lua_State* L = impl.L;
  first_line = std::max<uint32_t>(first_line, 1);
  std::string subject = fmt::format("lua block (pack {})", impl.pack);
  if (code.starts_with(LUA_SIGNATURE[0])) {
    throw LuaError(fmt::format(
        "{}:{}: error: {} is a precompiled binary chunk; only Lua source text is accepted", file,
        first_line, subject));
  }
  std::string chunk_name = fmt::format("@{}", file);
  lua_settop(L, 0);
  lua_pushcfunction(L, &Impl::record_error);
  impl.begin_run();
  ChunkReader reader{first_line - 1u, code};
  int status = lua_load(L, &ChunkReader::read, &reader, chunk_name.c_str(), "t");
  // A syntax error, or another error raised while compiling (a chunk nested past the C
  // stack's limit: "C stack overflow", a run-time error status): its message is on the
  // stack, never seen by the handler of a call. Running out of memory is said below.
  if (status != LUA_OK && status != LUA_ERRMEM) {
    impl.end_run(status);
    std::string message = error_object_text(L, -1);
    lua_settop(L, 0);
    auto split = split_syntax_error(message);
    throw LuaError(fmt::format("{}:{}: error: {} does not compile: {}", file,
                               split ? split->first : static_cast<int>(first_line), subject,
                               message_text(split ? split->second : std::string_view(message))));
  }
  if (status == LUA_OK) status = lua_pcall(L, 0, 0, 1);
  impl.end_run(status);
  lua_settop(L, 0);
  if (status != LUA_OK) {
    throw LuaError(impl.render_failure(subject, {std::string(file), static_cast<int>(first_line)}));
  }
}

bool LuaSandbox::has_function(std::string_view name) const {
  lua_State* L = impl_->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_pushlstring(L, name.data(), name.size());
  bool is_function = lua_rawget(L, -2) == LUA_TFUNCTION;
  lua_pop(L, 2);
  return is_function;
}

LuaValue LuaSandbox::call(std::string_view name, std::span<const LuaValue> args,
                          const LuaCallSite& site) {
  Impl& impl = *impl_;
  lua_State* L = impl.L;
  auto subject = [&] {
    return fmt::format("lua hook '{}' (pack {}, rule {})", name, site.pack, site.rule);
  };
  lua_settop(L, 0);
  lua_pushcfunction(L, &Impl::record_error);  // 1
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_pushlstring(L, name.data(), name.size());
  int type = lua_rawget(L, -2);  // 3: the hook
  if (type != LUA_TFUNCTION) {
    lua_settop(L, 0);
    if (type == LUA_TNIL) {
      throw LuaError(fmt::format("lua hook '{}' is not defined (pack {}, rule {})", name, site.pack,
                                 site.rule));
    }
    throw LuaError(fmt::format("lua hook '{}' is a {}, not a function (pack {}, rule {})", name,
                               lua_typename(L, type), site.pack, site.rule));
  }
  // Where the hook is defined, for errors that happen outside its code.
  auto definition = [&] {
    lua_Debug ar;
    lua_pushvalue(L, 3);
    lua_getinfo(L, ">S", &ar);
    return ar.source[0] == '@' ? Location{ar.source + 1, ar.linedefined} : Location{};
  };

  CallRequest request{args};
  lua_pushcfunction(L, &call_with_arguments);
  lua_pushlightuserdata(L, &request);
  lua_pushvalue(L, 3);
  impl.begin_run();
  int status = lua_pcall(L, 2, 1, 1);
  impl.end_run(status);
  if (status != LUA_OK) {
    std::string message = impl.render_failure(subject(), definition());
    lua_settop(L, 0);
    throw LuaError(message);
  }
  LuaValue result;
  // The host's copy of a value takes 64 bytes and more: it may take about as much memory
  // as the state.
  const uint64_t values_cap = impl.limits.memory_bytes / 64;
  uint64_t values_left = values_cap;
  auto wrong = to_value(L, 0, values_cap, values_left, result);
  if (wrong) {
    Location at = definition();
    lua_settop(L, 0);
    std::string prefix = at.known() ? fmt::format("{}:{}: ", at.file, at.line) : "";
    throw LuaError(fmt::format("{}error: {} returned {}", prefix, subject(), *wrong));
  }
  lua_settop(L, 0);
  return result;
}

}  // namespace cw::rules
