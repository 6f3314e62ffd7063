#include "rules/lua_sandbox.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <lua.hpp>
#include <optional>

#include "rules/lua_patterns.h"

namespace cw::rules {
namespace {

enum class Failure : uint8_t { None, Budget, Memory };

struct Location {
  std::string file;
  int line = 0;
  bool known() const { return line > 0; }
};

// Lists nested deeper than this (or cyclic tables) are refused on the way in and out.
constexpr int kMaxListDepth = 16;
// A fixed seed: math.random gives the same sequence in every call of every run.
constexpr lua_Integer kRandomSeed = 0x5eed;

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
    if (self.enforcing && new_size > old_bytes &&
        new_size - old_bytes >
            self.limits.memory_bytes - std::min(self.bytes_in_use, self.limits.memory_bytes)) {
      // Lua collects garbage and asks again; a memory error follows only if that fails.
      self.refusal_location = innermost_lua_location(self.L);
      return nullptr;
    }
    void* grown = std::realloc(block, new_size);
    if (grown) self.bytes_in_use = self.bytes_in_use - old_bytes + new_size;
    return grown;
  }

  static int panic(lua_State* L) {
    // Only reachable on a host-side bug: every script runs under lua_pcall.
    throw LuaError(fmt::format("error: unprotected Lua error in pack {}: {}", of(L).pack,
                               error_object_text(L, -1)));
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
      if (self.instructions_left > 0) {
        self.arm_budget_step();
        return;
      }
      self.fail(Failure::Budget, innermost_lua_location(L));
    }
    self.raise_abort();
  }

  // The pattern matcher's steps count as instructions.
  static void charge_steps(lua_State* L, uint64_t steps) {
    Impl& self = of(L);
    if (!self.enforcing) return;
    if (self.failure == Failure::None) {
      if (steps < self.instructions_left) {
        self.instructions_left -= steps;
        return;
      }
      self.fail(Failure::Budget, innermost_lua_location(L));
    }
    self.raise_abort();
  }

  void arm_budget_step() {
    hook_step = static_cast<int>(std::clamp<uint64_t>(instructions_left, 1, INT_MAX));
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
      self.error_message = std::string(strip_location(message, short_src));
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

  static int sandbox_xpcall(lua_State* L) {
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);
    return finish_pcall(L, lua_pcall(L, n - 2, LUA_MULTRET, 2), 2);
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

    lua_pushvalue(L, table);
    lua_setfield(L, env, "table");
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
// returns what was wrong ("a function", "a table that is not a list", ...).
std::optional<std::string> to_value(lua_State* L, int depth, LuaValue& out) {
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
  out = LuaValue::from_list({});
  out.list.resize(size);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_Integer key = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
    if (key < 1 || static_cast<lua_Unsigned>(key) > size) {
      lua_pop(L, 2);
      return std::string("a table that is not a list");
    }
    if (auto wrong = to_value(L, depth + 1, out.list[key - 1])) {
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
                               split ? split->second : std::string_view(message)));
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
  auto wrong = to_value(L, 0, result);
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
