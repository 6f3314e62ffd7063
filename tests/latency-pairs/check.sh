#!/usr/bin/env bash
# ctest's `latency-pairs`: every base/slow pair (README.md) recorded and ranked once by
# `causeway eval --latency`, passing when p_min = 1 (the first-ranked context holds the
# function a fix would touch) on at least 80 % of them and every pair ran. The table is
# printed either way. Needs root (recording) and apt (the programs): as another user it is
# skipped (exit 77).
#
# usage: tests/latency-pairs/check.sh CAUSEWAY KEEP_DIR
set -uo pipefail
cw=$(realpath "${1:?usage: check.sh CAUSEWAY KEEP_DIR}")
keep=${2:?usage: check.sh CAUSEWAY KEEP_DIR}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: the latency pairs record, which needs root"
  exit 77
fi
"$here/../real/install.sh" "$here" || { echo "FAIL: cannot install the pairs' programs"; exit 1; }
rm -rf "$keep"
"$cw" eval --latency --suite "$here" --keep "$keep"
rc=$?
# 0: all ranked their truth somewhere; 3: some did not, or failed (judged below).
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
  echo "FAIL: the latency pairs did not run (exit $rc)"
  exit 1
fi
result=$("$cw" eval --latency --suite "$here" --from "$keep" --json 2>/dev/null)
top=$(jq -r '.p_min_1 // 0' <<<"$result")
total=$(jq -r '.total // 0' <<<"$result")
failed=$(jq -r '[.pairs[] | select(.error != null) | .name] | join(", ")' <<<"$result")
echo "latency pairs: p_min = 1 on $top of $total (recordings in $keep)"
if [ -n "$failed" ]; then
  echo "FAIL: these pairs did not run: $failed"
  exit 1
fi
# Without --keep the recordings go to a private temp dir, which the PostgreSQL pairs' server
# (run as the postgres user) must still reach.
nokeep=$("$cw" eval --latency --suite "$here" 03 --json 2>/dev/null | jq -r '.pairs[0].error // "none"')
if [ "$nokeep" != none ]; then
  echo "FAIL: pair 03 without --keep: $nokeep"
  exit 1
fi
if [ "$total" -lt 8 ] || [ $((top * 10)) -lt $((total * 8)) ]; then
  echo "FAIL: p_min = 1 on fewer than 80 % of the pairs"
  exit 1
fi
