#!/usr/bin/env bash
# Every recorded trace converts to the text form and back without losing anything: binary
# -> text -> binary -> text gives the same text twice, and `graph --json` is the same for
# the recording and for its text form. Recordings re-declare a process at every exec and
# rename (the tables are histories); the text form writes those as `update` records.
#
# usage: tests/convert_roundtrip.sh CAUSEWAY DIR...   (each DIR's *.cwt; at least one)
# Exit 77 (skipped) when a DIR does not exist.
set -uo pipefail
cw=$(realpath "${1:?usage: convert_roundtrip.sh CAUSEWAY DIR...}")
shift
[ $# -gt 0 ] || { echo "usage: convert_roundtrip.sh CAUSEWAY DIR..."; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CAUSEWAY_CACHE=off
n=0 failed=0
for dir in "$@"; do
  if [ ! -d "$dir" ]; then
    # The suite that records into it was skipped (no root) or did not run.
    echo "skipped: $dir does not exist (no suite recorded into it)"
    exit 77
  fi
  for trace in "$dir"/*.cwt; do
    [ -e "$trace" ] || continue
    n=$((n + 1))
    name=$(basename "$trace" .cwt)
    why=
    if ! "$cw" convert "$trace" --to text -o "$tmp/$name.trace" 2>"$tmp/err"; then
      why="binary -> text: $(cat "$tmp/err")"
    elif ! "$cw" convert "$tmp/$name.trace" --to binary -o "$tmp/$name.cwt" 2>"$tmp/err"; then
      why="text -> binary: $(cat "$tmp/err")"
    elif ! "$cw" convert "$tmp/$name.cwt" --to text -o "$tmp/$name.again.trace" 2>"$tmp/err"; then
      why="binary again -> text: $(cat "$tmp/err")"
    elif ! cmp -s "$tmp/$name.trace" "$tmp/$name.again.trace"; then
      why="the text differs after a round trip: $(diff "$tmp/$name.trace" "$tmp/$name.again.trace" | head -5)"
    elif ! "$cw" graph "$trace" --json >"$tmp/a.json" 2>"$tmp/err"; then
      why="graph of the recording: $(cat "$tmp/err")"
    elif ! "$cw" graph "$tmp/$name.trace" --json >"$tmp/b.json" 2>"$tmp/err"; then
      why="graph of the text form: $(cat "$tmp/err")"
    elif ! cmp -s "$tmp/a.json" "$tmp/b.json"; then
      why="graph --json differs: $(diff "$tmp/a.json" "$tmp/b.json" | head -5)"
    fi
    if [ -n "$why" ]; then
      echo "FAIL $trace: $why"
      failed=$((failed + 1))
    else
      echo "ok   $trace"
    fi
  done
done
if [ $n -eq 0 ]; then
  echo "FAIL: no recorded trace (*.cwt) in $*"
  exit 1
fi
echo "$((n - failed)) of $n recorded traces round-trip"
[ $failed -eq 0 ]
