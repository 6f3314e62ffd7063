/* A Lua C module (`require "cwlag"`): cwlag.checksum(STRING), an FNV-1a hash, with the
 * injected lag of lag.h. */
#include <lauxlib.h>
#include <lua.h>
#include "lag.h"

__attribute__((noinline)) int cw_lua_checksum(lua_State* L) {
  size_t n = 0;
  const unsigned char* s = (const unsigned char*)luaL_checklstring(L, 1, &n);
  unsigned long long h = 14695981039346656037ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ s[i]) * 1099511628211ULL;
  cw_lag();
  lua_pushinteger(L, (lua_Integer)(h >> 1));
  return 1;
}

int luaopen_cwlag(lua_State* L) {
  static const luaL_Reg fns[] = {{"checksum", cw_lua_checksum}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
