#!/usr/bin/env bash
# ctest's `topologies`: 40 generated topologies with a random seed (printed, with the line
# that replays it), recorded and diagnosed (tests/topologies/run.sh), then the regression
# cases of regressions.txt. It prints the pass rates and every miss; it fails when either
# rate is below MIN_RATE (ctest passes 0.75). Needs root: as another user it is skipped
# (exit 77).
#
# usage: tests/topologies/check.sh CAUSEWAY NODE_BIN KEEP_DIR [MIN_RATE]
set -uo pipefail
cw=${1:?usage: check.sh CAUSEWAY NODE_BIN KEEP_DIR [MIN_RATE]}
node=${2:?usage: check.sh CAUSEWAY NODE_BIN KEEP_DIR [MIN_RATE]}
keep=${3:?usage: check.sh CAUSEWAY NODE_BIN KEEP_DIR [MIN_RATE]}
min_rate=${4:-0}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: the topology test records, which needs root"
  exit 77
fi
"$here/run.sh" "$cw" 40 --node "$node" --keep "$keep/random" --min-rate "$min_rate"
rc=$?
"$here/run.sh" "$cw" --regressions --node "$node" --keep "$keep/regressions" --min-rate "$min_rate"
rc2=$?
[ $rc -eq 0 ] && [ $rc2 -eq 0 ]
