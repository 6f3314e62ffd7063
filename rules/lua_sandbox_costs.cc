#include "rules/lua_sandbox_costs.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <optional>

namespace cw::rules::sandbox {
namespace {

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

}  // namespace

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

}  // namespace cw::rules::sandbox
