#include "rules/lua_sandbox.h"

#include <fmt/format.h>

#include <algorithm>
#include <lua.hpp>

#include "rules/lua_sandbox_impl.h"
#include "rules/lua_sandbox_values.h"

namespace cw::rules {
namespace {

using sandbox::call_with_arguments;
using sandbox::CallRequest;
using sandbox::error_object_text;
using sandbox::Location;
using sandbox::message_text;
using sandbox::split_syntax_error;
using sandbox::to_value;

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
