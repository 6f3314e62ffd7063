#!/usr/bin/env bash
# Times `causeway rules check` on a pack whose `requires` names N packs that are not
# loaded (loading was once quadratic in N), in two layouts: all names on
# one line, and one name per line. Prints a Markdown table: median wall s and median peak
# RSS over R runs per size and layout.
#
#   bench/requires_pack.sh [--causeway BIN] [--repeat R] [--timeout S] [--mem-mib M] [N...]
#
# Defaults: BIN build/cli/causeway, R 5, N 2000 8000 50000. A run is stopped after S
# seconds (default 30) or when it asks for more than M MiB of address space (default
# 4096; a quadratic build asks for tens of GiB at 50,000 names); the row then says so.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
causeway=$root/build/cli/causeway
repeat=5
limit=30
mem_mib=4096
sizes=()
while (($#)); do
  case $1 in
    --causeway) causeway=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --mem-mib) mem_mib=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) sizes+=("$1"); shift ;;
  esac
done
((${#sizes[@]})) || sizes=(2000 8000 50000)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pack N SEPARATOR > FILE
pack() {
  local n=$1 sep=$2 i
  printf 'pack big.one {\n  version "0.1.0"\n  requires dep.p0'
  for ((i = 1; i < n; i++)); do printf '%bdep.p%d' "$sep" "$i"; done
  printf '\n}\n'
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "| names | layout | wall s (median of $repeat) | peak RSS MiB (median) | errors reported |"
echo "| ---: | --- | ---: | ---: | ---: |"
for n in "${sizes[@]}"; do
  for layout in one-line per-line; do
    dir=$work/$layout-$n
    mkdir -p "$dir"
    if [[ $layout == one-line ]]; then pack "$n" ', ' >"$dir/pack.cw"; else pack "$n" ',\n    ' >"$dir/pack.cw"; fi
    walls=() rss=() errors=? stopped=
    for ((r = 0; r < repeat; r++)); do
      status=0
      ( ulimit -v $((mem_mib * 1024))
        exec /usr/bin/time -f '%e %M' -o "$work/time" timeout "$limit" \
          "$causeway" rules check --no-stdlib "$dir" >/dev/null 2>"$work/err" ) || status=$?
      if ((status == 124)) || grep -q 'bad_alloc\|Command terminated by signal' "$work/err" "$work/time" 2>/dev/null; then
        stopped="stopped: > $limit s or > $mem_mib MiB"
        break
      fi
      read -r wall kib < <(tail -n 1 "$work/time")  # after "Command exited with ... 1"
      walls+=("$wall")
      rss+=($((kib / 1024)))
      errors=$(grep -c ': error: ' "$work/err" || true)
    done
    if [[ -n $stopped ]]; then
      echo "| $n | $layout | $stopped | | |"
    else
      echo "| $n | $layout | $(printf '%s\n' "${walls[@]}" | median) | $(printf '%s\n' "${rss[@]}" | median) | $errors |"
    fi
  done
done
