#!/bin/sh
# Graph build identity check: the graph a build makes must be byte-identical
# to a reference binary's. Saves `graph --json --edges` and its --dot (every segment and
# edge, in order), and `debug --auto --json` for traces named in DEBUG, from REF once into
# OUT, then compares NEW's output with them.
#
#   bench/graph_identity.sh REF_CAUSEWAY NEW_CAUSEWAY OUT TRACE...
#   DEBUG="TRACE..." bench/graph_identity.sh ...   also compares debug --auto --json
# Exit status: 0 identical, 1 a difference (named on stderr).
set -u
ref=$1 new=$2 out=$3
shift 3
mkdir -p "$out"
status=0
run() {  # NAME BINARY ARGS...: output into $out/NAME.<ref|new>
  name=$1 bin=$2 which=$3
  shift 3
  if [ "$1" = graph ]; then
    "$bin" "$@" --dot "$out/$name.$which.dot" >"$out/$name.$which" 2>"$out/$name.$which.err"
  else
    "$bin" "$@" >"$out/$name.$which" 2>"$out/$name.$which.err"
  fi
  echo "exit $?" >>"$out/$name.$which"
}
compare() {  # NAME ARGS...
  name=$1
  shift
  [ -s "$out/$name.ref" ] || run "$name" "$ref" ref "$@"
  run "$name" "$new" new "$@"
  if cmp -s "$out/$name.ref" "$out/$name.new" &&
    { [ ! -e "$out/$name.ref.dot" ] || cmp -s "$out/$name.ref.dot" "$out/$name.new.dot"; }; then
    echo "same      $name"
  else
    echo "DIFFERENT $name" >&2
    status=1
  fi
}
for t in "$@"; do
  compare "graph-$(basename "$t")" graph "$t" --json --edges
done
for t in ${DEBUG:-}; do
  compare "debug-$(basename "$t")" debug "$t" --auto --json
done
exit $status
