#!/usr/bin/env bash
# python3 calling a C library through ctypes; the library is slow in the slow run.
. "$(dirname "$0")/../lib.sh"
need /usr/bin/python3
case "$MODE" in
  prepare) build_plugin cwlag_py.c "$PAIR_DIR/libcwlag.so" ;;
  base | slow)
    [ "$MODE" = slow ] && export CW_LAG=spin:${CW_LAG_SPIN:-6000}
    /usr/bin/python3 "$PLUGINS/tally.py" "$PAIR_DIR/libcwlag.so" 1 >"$WORK/out" ||
      die "python3 failed" ;;
esac
