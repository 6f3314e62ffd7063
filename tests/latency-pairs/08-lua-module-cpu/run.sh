#!/usr/bin/env bash
# lua5.4 with a C module that is slow in the slow run.
. "$(dirname "$0")/../lib.sh"
need lua5.4
case "$MODE" in
  prepare) build_plugin cwlag_lua.c "$PAIR_DIR/cwlag.so" -I/usr/include/lua5.4 ;;
  base | slow)
    [ "$MODE" = slow ] && export CW_LAG=spin:${CW_LAG_SPIN:-2500}
    LUA_CPATH="$PAIR_DIR/?.so" lua5.4 -e '
      local cwlag = require "cwlag"
      local tally, total = {}, 0
      for i = 1, 150000 do
        local s = string.format("%08d:user%d:%d", i, i % 313, i * 7919 % 100003)
        local user, n = s:match("^%d+:(user%d+):(%d+)$")
        tally[user] = (tally[user] or 0) + tonumber(n)
        total = total ~ cwlag.checksum(s)
      end
      local users = 0
      for _ in pairs(tally) do users = users + 1 end
      print(users, total)' >"$WORK/out" || die "lua5.4 failed" ;;
esac
