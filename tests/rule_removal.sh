#!/usr/bin/env bash
# Every rule of a tested pack must be needed by one of its tests: deleting any single
# rule must make `causeway rules test` fail (a test that still passes without its rule
# tests nothing). Rules are found as top-level blocks `KIND ID {` ... `}` in canonical
# layout (causeway rules fmt), KIND one of the kinds the graph build applies, as
# `causeway rules kinds --json` lists them (holder rules act when recording and answer
# rules when diagnosing: a pack test's graph cannot show them).
#
# usage: rule_removal.sh CAUSEWAY STDLIB_DIR PACK_FILE...
set -u
cw=$1 stdlib=$(cd "$2" && pwd); shift 2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
kinds=$("$cw" rules kinds --json | jq -r '[.kinds[] | select(.builds_graph) | .keyword] | join("|")')
if [ -z "$kinds" ]; then echo "no rule kinds from '$cw rules kinds --json'"; exit 1; fi
checked=0 survived=0
for file in "$@"; do
  dir=$(dirname "$file")
  mapfile -t starts < <(grep -nE "^($kinds) [A-Za-z0-9_.-]+ \\{" "$file" | cut -d: -f1)
  for start in "${starts[@]}"; do
    rule=$(sed -n "${start}p" "$file" | awk '{print $1 " " $2}')
    end=$(awk -v s="$start" 'NR > s && /^}/ { print NR; exit }' "$file")
    # A copy of the pack (its folder, or the single file) with the rule deleted.
    rm -rf "$tmp/pack"; mkdir "$tmp/pack"
    if [ -f "$dir/pack.cw" ]; then cp -r "$dir"/. "$tmp/pack/"; target="$tmp/pack"
    else target="$tmp/pack/$(basename "$file")"; fi
    sed "${start},${end}d" "$file" >"$tmp/pack/$(basename "$file")"
    # The other stdlib packs resolve `requires`; they come through CAUSEWAY_RULES_PATH so
    # that only the mutated pack's tests run and no pack is loaded twice.
    deps=$(find "$stdlib" -mindepth 1 -maxdepth 1 -type d ! -path "$(cd "$dir" && pwd)" | sort | paste -sd:)
    checked=$((checked + 1))
    if CAUSEWAY_RULES_PATH="$deps" "$cw" rules test --no-stdlib "$target" >"$tmp/out" 2>&1; then
      echo "SURVIVED: removing '$rule' ($file:$start) leaves every test passing:"
      tail -n 5 "$tmp/out" | sed 's/^/  /'
      survived=$((survived + 1))
    elif grep -q "is already loaded\|duplicate pack" "$tmp/out"; then
      echo "BROKEN: removing '$rule' failed for another reason:"; cat "$tmp/out"
      survived=$((survived + 1))
    fi
  done
done
echo "$((checked - survived)) passed, $survived failed"
[ "$survived" -eq 0 ] && [ "$checked" -gt 0 ]
