#!/usr/bin/env bash
# The generated-topology property test (tests/topologies/README.md): generates N random
# topologies, records and diagnoses each with `causeway eval`, and prints the pass rate
# overall, per mechanism, shape and slow-stage kind, the victim-blamed count, the mismatch
# patterns and every miss with its seed:index.
#
# usage: tests/topologies/run.sh CAUSEWAY N [--seed S] [--load] [--keep DIR] [--min-rate R]
#                                [--only-mechanism M] [--node BIN] [--record-option OPT]...
#        tests/topologies/run.sh CAUSEWAY --regressions [--keep DIR] [--min-rate R] [--node BIN]
#                                [--record-option OPT]...
#
# --record-option OPT is given to every recording (eval --record-option): --record-option
# --calls=scheduler records the topologies as that recorder does.
# --keep DIR keeps the topologies (DIR/suite), the recordings (DIR/traces), eval's JSON
# and log, and the summary (DIR/summary.json); without it they go in a temp folder, the
# summary is kept as /tmp/cw-topologies-summary.json. Exit: 0 the rate is at least
# --min-rate (default 0), 3 below it, 1 usage, 2 the environment cannot (no root, no
# cw-topo-node, eval could not run).
set -uo pipefail
usage() {
  sed -n '7,10p' "$0" | sed 's/^# //' >&2
  exit 1
}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || usage
cw=$(realpath "$1") || usage
shift
count= seed= load= keep= min_rate=0 regressions= only= node=
record_options=()
if [ "$1" = --regressions ]; then regressions=1; else count=$1; fi
shift
while [ $# -gt 0 ]; do
  case $1 in
  --seed) seed=$2; shift 2 ;;
  --load) load=--load; shift ;;
  --keep) keep=$2; shift 2 ;;
  --min-rate) min_rate=$2; shift 2 ;;
  --only-mechanism) only=$2; shift 2 ;;
  --node) node=$2; shift 2 ;;
  --regressions) regressions=1; shift ;;
  --record-option) record_options+=("--record-option=$2"); shift 2 ;;
  *) usage ;;
  esac
done
if [ "$(id -u)" -ne 0 ]; then
  echo "tests/topologies/run.sh: recording needs root" >&2
  exit 2
fi
[ -n "$regressions" ] || [[ $count =~ ^[0-9]+$ ]] || usage
[ -n "$seed" ] || seed=$(python3 -c 'import random; print(random.randrange(1, 10**9))')
if [ -n "$keep" ]; then
  rm -rf "$keep"
  mkdir -p "$keep"
  out=$(realpath "$keep")
  summary=$out/summary.json
else
  out=$(mktemp -d /var/tmp/cw-topologies.XXXXXX)
  trap 'rm -rf "$out"' EXIT
  summary=/tmp/cw-topologies-summary.json
fi
gen=("$here/generate.py" ${node:+--node "$node"} $load ${only:+--only-mechanism "$only"})
if [ -n "$regressions" ]; then
  echo "regressions: $here/regressions.txt"
  n=0
  while read -r line; do
    line=${line%%#*}
    [ -n "${line// /}" ] || continue
    s=${line%%:*} i=${line##*:}
    "${gen[@]}" --seed "$s" --index "$i" --prefix "s$s-" --out "$out/suite" >/dev/null || exit 2
    n=$((n + 1))
  done <"$here/regressions.txt"
  [ $n -gt 0 ] || { echo "no regression case in $here/regressions.txt"; exit 0; }
else
  echo "seed $seed"
  echo "replay: tests/topologies/run.sh $cw $count --seed $seed${load:+ --load}${only:+ --only-mechanism $only}${record_options[*]:+ ${record_options[*]//--record-option=/--record-option }}"
  "${gen[@]}" --seed "$seed" --count "$count" --out "$out/suite" >/dev/null || exit 2
fi
# eval runs from the repository's root, as for the other suites (the scenario's command
# is an absolute path to its run.sh).
(cd "$src" && "$cw" eval --suite "$out/suite" --keep "$out/traces" "${record_options[@]}" --json) >"$out/eval.json" \
  2> >(tee "$out/eval.log" >&2)
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
  echo "FAIL: causeway eval did not run (exit $rc; log: $out/eval.log)"
  exit 2
fi
python3 "$here/summarize.py" "$out/suite" "$out/eval.json" "$summary" --min-rate "$min_rate"
