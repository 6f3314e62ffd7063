#!/usr/bin/env bash
# python3 calling a C library through ctypes; the library waits in the slow run.
. "$(dirname "$0")/../lib.sh"
need /usr/bin/python3
case "$MODE" in
  prepare) build_plugin cwlag_py.c "$PAIR_DIR/libcwlag.so" ;;
  base | slow)
    [ "$MODE" = slow ] && export CW_LAG=sleep:2000
    /usr/bin/python3 - "$PAIR_DIR/libcwlag.so" >"$WORK/out" <<'PY' || die "python3 failed"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.cw_checksum.restype = ctypes.c_uint64
lib.cw_checksum.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
counts = {}
total = 0
for i in range(60000):
    record = f"{i:08d},user{i % 313},{i * 7919 % 100003},ok".encode()
    fields = record.split(b",")
    counts[fields[1]] = counts.get(fields[1], 0) + int(fields[2])
    if i % 100 == 0:
        total ^= lib.cw_checksum(record, len(record))
print(len(counts), total)
PY
    ;;
esac
