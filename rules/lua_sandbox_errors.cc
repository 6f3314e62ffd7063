// LuaSandbox's errors: where a run failed and what it said, as text a terminal can show.
#include <fmt/format.h>

#include "base/terminal_text.h"
#include "rules/lua_sandbox_impl.h"

namespace cw::rules {
namespace sandbox {
namespace {

// An error message longer than this is shown as an excerpt.
constexpr size_t kMaxMessageBytes = 300;

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

}  // namespace

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

}  // namespace sandbox

namespace {

using sandbox::error_object_text;
using sandbox::innermost_lua_location;
using sandbox::message_text;
using sandbox::strip_location;

}  // namespace

int LuaSandbox::Impl::panic(lua_State* L) {
  // Only reachable on a host-side bug: every script runs under lua_pcall.
  throw LuaError(fmt::format("error: unprotected Lua error in pack {}: {}", of(L).pack,
                             message_text(error_object_text(L, -1))));
}

// The message handler of the outermost call: the stack is still intact here.
int LuaSandbox::Impl::record_error(lua_State* L) {
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

// "FILE:LINE: error: SUBJECT WHAT", the location being where the run failed, else
// `fallback`.
std::string LuaSandbox::Impl::render_failure(std::string_view subject,
                                             const Location& fallback) const {
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

}  // namespace cw::rules
