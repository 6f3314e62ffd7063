#!/usr/bin/env bash
# The generated-topology property test at scale (tests/topologies/README.md): N topologies
# (default 300; a random seed unless --seed, printed with its replay line), half idle and
# half under --load (two CPU hogs and a disk writer beside each), recorded and diagnosed.
# It prints each half's rates per mechanism, shape and slow stage and every miss; it
# appends nothing anywhere (copy what matters into bench/RESULTS.md by hand).
#
# usage: sudo bench/topologies.sh [CAUSEWAY] [--count N] [--seed S] [--keep DIR]
#   CAUSEWAY defaults to build/cli/causeway; cw-topo-node to build/tests/topologies/.
# Takes about 10 s a topology (the recorder's start and stop dominate).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cw=$src/build/cli/causeway
count=300 seed= keep=
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then cw=$1; shift; fi
while [ $# -gt 0 ]; do
  case $1 in
  --count) count=$2; shift 2 ;;
  --seed) seed=$2; shift 2 ;;
  --keep) keep=$2; shift 2 ;;
  *) sed -n 8,9p "$0" >&2; exit 1 ;;
  esac
done
[ -n "$seed" ] || seed=$(python3 -c 'import random; print(random.randrange(1, 10**9))')
idle=$((count - count / 2))
echo "bench/topologies.sh: $count topologies, seed $seed ($idle idle, $((count / 2)) under load)"
echo "replay: sudo bench/topologies.sh $cw --count $count --seed $seed"
rc=0
"$src/tests/topologies/run.sh" "$cw" "$idle" --seed "$seed" ${keep:+--keep "$keep/idle"} || rc=$?
# The loaded half uses the next seed: other topologies, not the idle ones again.
"$src/tests/topologies/run.sh" "$cw" $((count / 2)) --seed $((seed + 1)) --load \
  ${keep:+--keep "$keep/load"} || rc=$?
exit $rc
