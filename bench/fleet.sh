#!/usr/bin/env bash
# A fleet's figures (docs/fleet.md; bench/README.md, "Fleet"): the real suite's committed
# recordings as HOSTS hosts' (hard links, a folder per host), diagnosed by `fleet diagnose`
# into SQLite and a loopback ClickHouse at once; the batch's throughput on this machine's
# CPUs; then each `fleet top` query ROUNDS times from each store, median and worst.
#
# usage: bench/fleet.sh CAUSEWAY [HOSTS] [ROUNDS]     (needs clickhouse-server)
set -euo pipefail
cw=$(realpath "${1:?usage: bench/fleet.sh CAUSEWAY [HOSTS] [ROUNDS]}")
hosts=${2:-29}
rounds=${3:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
[[ -x /usr/sbin/clickhouse-server ]] || { echo "needs clickhouse-server" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/fleet/clickhouse.sh"
clickhouse_start "$tmp/clickhouse"
ch="clickhouse://127.0.0.1:${CLICKHOUSE_URL##*:}"
mkdir -p "$tmp/hosts"
for ((h = 1; h <= hosts; h++)); do cp -al "$src/tests/real/traces" "$tmp/hosts/h$h"; done

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs"
for store in sqlite both; do
  rm -f "$tmp/hangs.db"
  stores=(-o "$tmp/hangs.db")
  [[ $store == both ]] && stores+=(-o "$ch")
  "$cw" fleet diagnose "$tmp/hosts" --host-from-folder --no-cache "${stores[@]}" --json \
    >"$tmp/batch.json"
  jq -r --arg s "$store" '"diagnose into \($s): \(.traces) traces, \(.hangs) hangs in \(.seconds * 10 | round / 10) s: \(.traces / .seconds * 10 | round / 10) traces/s on \(.workers) workers"' "$tmp/batch.json"
done
# A trace the cache already holds (a second run over the same files): what a host that
# re-diagnoses its ring after adding a pack pays.
"$cw" fleet diagnose "$src/tests/real/traces" -o "$tmp/warm.db" --json >/dev/null
"$cw" fleet diagnose "$src/tests/real/traces" -o "$tmp/warm.db" --json |
  jq -r '"diagnose again, cache warm: \(.traces) traces in \(.seconds * 100 | round / 100) s"'
rm -rf "$src"/tests/real/traces/*.cwcache

median_ms() { sort -n | awk '{ v[NR] = $1 } END { printf "%.1f ms median, %.1f ms worst", v[int((NR + 1) / 2)], v[NR] }'; }
for by in signature version host day; do
  for store in "$tmp/hangs.db" "$ch"; do
    for ((r = 0; r < rounds; r++)); do
      s=$(date +%s%N)
      "$cw" fleet top "$store" --by "$by" >/dev/null
      echo $(( ($(date +%s%N) - s) / 1000 ))
    done | awk '{ print $1 / 1000 }' | median_ms >"$tmp/t"
    name=SQLite; [[ $store == "$ch" ]] && name=ClickHouse
    echo "fleet top --by $by from $name ($rounds runs, the whole command): $(cat "$tmp/t")"
  done
done
