#!/usr/bin/env bash
# ctest's `latency-pairs`: every base/slow pair (README.md) recorded and ranked three times
# by `causeway eval --latency`, passing when each pair's median p_min is 1 (the first-ranked
# context holds the function a fix would touch) on at least 80 % of them and every pair
# ran every time. A ranking is a timing measurement: one recording of a server with
# background processes (the PostgreSQL pairs) moves its truth between ranks 1 and 6 from
# run to run, so each pair is judged by the median of three. The tables are printed
# either way. Needs root (recording) and apt (the programs): as another user it is skipped
# (exit 77).
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
rounds=3
for round in $(seq $rounds); do
  "$cw" eval --latency --suite "$here" --keep "$keep/$round"
  rc=$?
  # 0: all ranked their truth somewhere; 3: some did not, or failed (judged below).
  if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
    echo "FAIL: the latency pairs did not run (exit $rc)"
    exit 1
  fi
  "$cw" eval --latency --suite "$here" --from "$keep/$round" --json 2>/dev/null >"$keep/$round.json"
done
# Per pair: its p_min in each round (null: the truth was not ranked), the median (a
# missing rank counts as worst), and whether a round failed to run.
result=$(jq -s '[.[].pairs] | transpose | map({
    name: .[0].name,
    p_min: map(.p_min),
    error: (map(select(.error != null) | .error) | first),
    median: (map(.p_min // 1000000) | sort | .[(length / 2 | floor)])
  })' "$keep"/[0-9]*.json)
jq -r '.[] | "\(.name): p_min \(.p_min | map(. // "—") | join(", ")) (median \(if .median == 1000000 then "—" else .median end))"' <<<"$result"
top=$(jq '[.[] | select(.median == 1)] | length' <<<"$result")
total=$(jq 'length' <<<"$result")
failed=$(jq -r '[.[] | select(.error != null) | .name] | join(", ")' <<<"$result")
echo "latency pairs: median p_min = 1 on $top of $total over $rounds rounds (recordings in $keep)"
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
  echo "FAIL: median p_min = 1 on fewer than 80 % of the pairs"
  exit 1
fi
