#!/usr/bin/env bash
# Two causeway binaries side by side on the step a rule edit costs most: add a split rule
# no run has seen, then `debug --auto`. Each binary has its own copy of the trace and of
# the derived cache its cold run made (a binary's entries are its own: the engine key),
# restored and synced before each round; the binaries alternate. Prints each round's wall
# seconds and peak RSS, whether the two reports are equal, and each binary's median per
# phase (from CAUSEWAY_TIMINGS: how long after the one before each began). With --cold,
# each round is the first `debug --auto` of the trace instead (its cache removed, the pack
# without the rule).
#
#   bench/add_rule_side_by_side.sh OLD NEW [--events N] [--seed S] [--rounds R] [--cold]
#
# OLD and NEW are causeway binaries; both load the standard packs of CW_BENCH_BUILD's
# share/causeway/rules unless CAUSEWAY_STDLIB names others. Defaults: N 19000000, S 1,
# R 7. Environment as bench/rule_edit_loop.sh (CW_BENCH_BUILD makes the trace).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CW_BENCH_BUILD:-$root/build-release}
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
events=19000000
seed=1
rounds=7
step=add
bins=()
while (($#)); do
  case $1 in
    --events) events=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --cold) step=cold; shift ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "add_rule_side_by_side.sh: unknown argument '$1' (--help)" >&2; exit 1 ;;
    *) bins+=("$(realpath "$1")"); shift ;;
  esac
done
if ((${#bins[@]} != 2)); then
  echo "add_rule_side_by_side.sh: give two causeway binaries, OLD and NEW (--help)" >&2
  exit 1
fi
for b in "${bins[@]}"; do
  [[ -x $b ]] || { echo "add_rule_side_by_side.sh: $b: not an executable" >&2; exit 1; }
done

bench_build "$root" "$build"
export CAUSEWAY_STDLIB=${CAUSEWAY_STDLIB:-$build/share/causeway/rules}
trace=$(bench_trace "$root" "$build" "$events" "$seed")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
header='pack bench.edit {
  version "0.1.0"
  requires linux.kernel
}
'
names=(old new)
# Waits for the background saves of the runs before (copies of `causeway debug`).
settle() { while pgrep -f -- "^${bins[0]} debug |^${bins[1]} debug " >/dev/null; do sleep 0.02; done; }

for i in 0 1; do
  d=$work/${names[i]}
  mkdir -p "$d/edit"
  cp "$trace" "$d/t.cwt"
  printf '%s' "$header" >"$d/edit/pack.cw"
  echo "cold run of ${names[i]} (${bins[i]}) ..." >&2
  "${bins[i]}" debug "$d/t.cwt" --rules "$d/edit" --auto --hang auto >"$d/cold.out" 2>/dev/null
  settle
  cp -a "$d/t.cwt.cwcache" "$d/cold.cwcache"
done

wall=() kb=()
echo "| round | old wall s | new wall s | old peak MiB | new peak MiB | reports |"
echo "| ---: | ---: | ---: | ---: | ---: | --- |"
for ((r = 1; r <= rounds; r++)); do
  row="| $r"
  for i in 0 1; do
    d=$work/${names[i]}
    settle
    rm -rf "$d/t.cwt.cwcache"
    if [[ $step == cold ]]; then
      printf '%s' "$header" >"$d/edit/pack.cw"
    else
      cp -a "$d/cold.cwcache" "$d/t.cwt.cwcache"
      # The rule of bench/rule_edit_loop.sh, which no run has seen: the cache is the cold
      # run's again (its matches have none of it).
      printf '%s\nsplit recvmsg.idle%d {\n  at syscall_enter\n  where name == "recvmsg"\n  neighbour weak\n  loop\n}\n' \
        "$header" "$r" >"$d/edit/pack.cw"
    fi
    sync
    sleep 1
    /usr/bin/time -f '%e %M' -o "$d/time" env CAUSEWAY_TIMINGS=1 "${bins[i]}" debug "$d/t.cwt" \
      --rules "$d/edit" --auto --hang auto >"$d/add.$r.out" 2>"$d/add.$r.err"
    read -r 'wall[i]' 'kb[i]' < <(tail -1 "$d/time")
  done
  same=differ
  cmp -s "$work/old/add.$r.out" "$work/new/add.$r.out" && same=equal
  echo "$row | ${wall[0]} | ${wall[1]} | $((kb[0] / 1024)) | $((kb[1] / 1024)) | $same |"
done

# Each phase ends where CAUSEWAY_TIMINGS says the next begins: PATTERN|LABEL, in order. A
# phase a run does not say (a small trace's events are not kept) is left out and its
# time counts in the next one's.
if [[ $step == cold ]]; then
  phases=('t.cwt: done|reading the trace' 'building graph: links|the scan'
    'building graph: segments|links and peers cuts' 'building graph: graph|segments and edges'
    'building graph: done|csr' 'diagnosing: search|the thread index, finding the hang'
    'diagnosing: done|the search and the report')
else
  phases=('events mapped|reading the trace' 'rebuilding the cuts|packs and the base graph'
    'thread index mapped|the matches and the thread index'
    'building graph: segments|the new rule, the replay, the peers cuts'
    'building graph: graph|segments and edges' 'building graph: done|csr'
    'candidate threads ranked|finding the hang' 'diagnosing: done|the search and the report')
fi
for i in 0 1; do
  for ((r = 1; r <= rounds; r++)); do
    printf '%s\n' "${phases[@]}" | awk -F'|' -v err="$work/${names[i]}/add.$r.err" '
      { want[NR] = $1; label[NR] = $2; n = NR }
      END {
        while ((getline line < err) > 0) {
          if (line !~ /causeway: timing:/) continue
          split(line, f, " "); t = f[3] + 0
          for (k = 1; k <= n; k++) if (!(k in at) && index(line, want[k])) at[k] = t
        }
        prev = 0
        for (k = 1; k <= n; k++) if (k in at) { printf "%s\t%.3f\n", label[k], at[k] - prev; prev = at[k] }
      }'
  done >"$work/${names[i]}/phases"
done
echo
echo "| phase (median of $rounds) | old | new |"
echo "| --- | ---: | ---: |"
for p in "${phases[@]}"; do
  label=${p#*|}
  row="| $label"
  for i in 0 1; do
    times=$(awk -F'\t' -v l="$label" '$1 == l {print $2}' "$work/${names[i]}/phases")
    if [[ -z $times ]]; then row+=" | —"; else row+=" | $(median <<<"$times") s"; fi
  done
  echo "$row |"
done
