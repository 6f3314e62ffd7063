#!/usr/bin/env bash
# Exports each recorded seed scenario (the traces the `scenarios` test keeps in
# BUILD/scenario-traces) as Perfetto, Chrome JSON and DOT, and reads each file back:
# cw-export-check must find no problem, the Perfetto file must hold a slice per graph
# vertex (`graph --json`), and both files the same threads, slices and flows. The hang,
# the scenario's pack and its symptom are those of tests/scenarios/NAME/scenario.json,
# with no --min-hang threshold as `causeway eval` diagnoses them; questions take the
# best-scored option, and the DOT marks a root cause when `debug` finds one so.
#
# usage: scenarios.sh BIN_DIR TRACE_DIR    (BIN_DIR holds causeway and cw-export-check)
# Exit 0 all good, 1 a failure (each one said), 77 no trace in TRACE_DIR.
set -u
bin=$(cd "$1" && pwd)
dir=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
export PATH="$bin:$PATH"
shopt -s nullglob
traces=("$dir"/*.cwt)
if [ ${#traces[@]} -eq 0 ]; then
  echo "skip: no scenario traces in $dir (causeway eval --keep $dir records them)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
  echo "FAIL $1: $2"
  failed=1
  this_failed=1
}

for trace in "${traces[@]}"; do
  name=$(basename "$trace" .cwt)
  this_failed=0
  spec="$root/tests/scenarios/$name/scenario.json"
  packs=()
  hang=auto
  if [ -f "$spec" ]; then
    pack=$(jq -r '.pack // empty' "$spec")
    [ -n "$pack" ] && packs=(--rules "$root/tests/scenarios/$name/$pack")
    hang=$(jq -r '.hang // "auto"' "$spec")
  fi
  for format in perfetto chrome dot; do
    out="$tmp/$name.$format"
    if ! causeway export "$trace" --no-cache --all-processes "${packs[@]}" --hang "$hang" --min-hang 0 \
      --format "$format" -o "$out" 2>"$tmp/err"; then
      fail "$name" "export --format $format: $(cat "$tmp/err")"
      continue
    fi
    [ "$format" = dot ] && continue
    if ! cw-export-check "$out" >"$tmp/$name.$format.json" 2>"$tmp/err"; then
      fail "$name" "$format read back: $(head -5 "$tmp/err")"
    fi
  done
  [ -f "$tmp/$name.perfetto.json" ] && [ -f "$tmp/$name.chrome.json" ] || continue
  graph=$(causeway graph "$trace" --no-cache "${packs[@]}" --json | jq .graph.vertices)
  p=$(jq -c '[.threads, .slices, .flows]' "$tmp/$name.perfetto.json")
  c=$(jq -c '[.threads, .slices, .flows]' "$tmp/$name.chrome.json")
  [ "$p" = "$c" ] || fail "$name" "perfetto has [threads, slices, flows] $p, chrome $c"
  slices=$(jq .slices "$tmp/$name.perfetto.json")
  [ "$slices" = "$graph" ] || fail "$name" "perfetto has $slices slices, the graph $graph vertices"
  # The DOT marks a root cause exactly when `debug` finds one with the same symptom and the
  # same (best-scored) answers: some recordings of a scenario need its own answers, which
  # `eval` gives and this does not, to reach the root cause.
  causes=$(causeway debug "$trace" --no-cache "${packs[@]}" --hang "$hang" --min-hang 0 --auto \
    --json 2>/dev/null | jq '.root_causes | length')
  marked=$(grep -c 'root cause' "$tmp/$name.dot")
  if [ "${causes:-0}" -gt 0 ] && [ "$marked" = 0 ]; then
    fail "$name" "debug finds $causes root cause(s); the DOT marks none"
  elif [ "${causes:-0}" = 0 ] && [ "$marked" != 0 ]; then
    fail "$name" "debug finds no root cause; the DOT marks $marked"
  fi
  [ $this_failed = 0 ] && echo "ok $name: $(cat "$tmp/$name.perfetto.json")"
done
exit $failed
