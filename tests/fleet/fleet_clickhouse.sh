#!/usr/bin/env bash
# ctest's `fleet-clickhouse`: a fleet of hosts diagnosed into SQLite and ClickHouse at once,
# and every common query answered alike by both (docs/fleet.md). The fleet is the real
# suite's committed recordings as if each of HOSTS hosts had recorded them (hard links in
# a folder per host, `--host-from-folder`): 35 × 29 = 1,015 traces. A ClickHouse server is
# started on loopback for the test (tests/fleet/clickhouse.sh); without clickhouse-server
# installed the test is skipped (exit 77).
#
# usage: tests/fleet/fleet_clickhouse.sh CAUSEWAY [HOSTS]
set -euo pipefail
cw=$(realpath "${1:?usage: fleet_clickhouse.sh CAUSEWAY [HOSTS]}")
hosts=${2:-29}
src=$(cd "$(dirname "$0")/../.." && pwd)
if [[ ! -x /usr/sbin/clickhouse-server ]]; then
  echo "skipped: clickhouse-server is not installed (apt-get install clickhouse-server)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/fleet/clickhouse.sh"
clickhouse_start "$tmp/clickhouse"
ch="clickhouse://127.0.0.1:${CLICKHOUSE_URL##*:}"

mkdir -p "$tmp/hosts"
for ((h = 1; h <= hosts; h++)); do
  cp -al "$src/tests/real/traces" "$tmp/hosts/host-$(printf %02d "$h")"
done
traces=$(find "$tmp/hosts" -name '*.cwt' | wc -l)
echo "fleet: $traces traces on $hosts hosts"

# Each trace's cache would be written beside each of its links: off.
"$cw" fleet diagnose "$tmp/hosts" --host-from-folder --no-cache -o "$tmp/hangs.db" -o "$ch" \
  --json >"$tmp/batch.json"
jq -r '"diagnosed: \(.traces) traces, \(.hangs) hangs, \(.failed) failed, \(.seconds | floor) s on \(.workers) workers"' "$tmp/batch.json"
fail=0
[[ $(jq .traces "$tmp/batch.json") == "$traces" ]] || { echo "FAIL: not every trace was taken"; fail=1; }
[[ $(jq .failed "$tmp/batch.json") == 0 ]] || { echo "FAIL: traces failed"; jq .failures "$tmp/batch.json"; fail=1; }
rows_sqlite=$("$cw" fleet query "$tmp/hangs.db" "SELECT count(*) AS n FROM hangs" --json | jq -r '.[0].n')
rows_ch=$("$cw" fleet query "$ch" "SELECT count(*) AS n FROM hangs" --json | jq -r '.[0].n')
echo "rows: SQLite $rows_sqlite, ClickHouse $rows_ch"
[[ $rows_sqlite == "$(jq .hangs "$tmp/batch.json")" && $rows_ch == "$rows_sqlite" ]] ||
  { echo "FAIL: the stores hold other rows than the batch made"; fail=1; }
[[ $rows_sqlite -ge 1000 ]] || { echo "FAIL: fewer than 1,000 hangs"; fail=1; }

# Every common query, whole, from both.
for by in signature version host day; do
  "$cw" fleet top "$tmp/hangs.db" --by "$by" -n 100000 --json >"$tmp/sqlite-$by.json"
  "$cw" fleet top "$ch" --by "$by" -n 100000 --json >"$tmp/clickhouse-$by.json"
  if cmp -s "$tmp/sqlite-$by.json" "$tmp/clickhouse-$by.json"; then
    echo "top --by $by: $(jq '.rows | length' "$tmp/sqlite-$by.json") rows, the same from both"
  else
    echo "FAIL: top --by $by differs between SQLite and ClickHouse:"
    diff "$tmp/sqlite-$by.json" "$tmp/clickhouse-$by.json" | head -20
    fail=1
  fi
done
# The same bug on every host is one signature seen on every host.
hosts_per_signature=$(jq -r '[.rows[].hosts] | unique | join(",")' "$tmp/sqlite-signature.json")
[[ $hosts_per_signature == "$hosts" ]] ||
  { echo "FAIL: a signature was seen on $hosts_per_signature hosts, not on all $hosts"; fail=1; }
# A row read back whole: text with quotes and tabs survives both stores alike.
q="SELECT host, trace, signature, signature_text, path, queries FROM hangs ORDER BY host, trace LIMIT 50"
"$cw" fleet query "$tmp/hangs.db" "$q" --json >"$tmp/sqlite-rows.json"
"$cw" fleet query "$ch" "$q" --json >"$tmp/clickhouse-rows.json"
cmp -s "$tmp/sqlite-rows.json" "$tmp/clickhouse-rows.json" ||
  { echo "FAIL: rows read back differ"; diff "$tmp/sqlite-rows.json" "$tmp/clickhouse-rows.json" | head; fail=1; }
exit $fail
