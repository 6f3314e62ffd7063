#!/usr/bin/env bash
# The "≥ 6× perf script" target: how many trace events per second `causeway graph` turns
# into a graph, against how many `perf script` decodes, on this machine, side by side.
#
#   bench/perf_script_ratio.sh [--events N] [--seed S] [--repeat R] [--loops L]
#
# perf's side: a shell loop of L pipelines (`echo x | cat`, default 3000) recorded by
# `perf record` with the scheduler and system call tracepoints causeway's recorder also
# takes (sched_switch, sched_wakeup, sys_enter, sys_exit), the command only (not the
# whole machine, so the count does not depend on what else runs); then R times
# `perf script > /dev/null`. causeway's side: R times `causeway graph` (stdlib packs) on
# the synthetic trace of N events (default 19000000, seed 1; generated and cached as
# bench/rule_edit_loop.sh does). The two alternate, run by run. Prints each side's median
# events/s and their ratio. perf record runs with -N: perf 6.1's build-id cache aborts on
# some machines.
# Environment: CW_BENCH_BUILD (build dir, default build-release), CW_BENCH_CACHE.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CW_BENCH_BUILD:-$root/build-release}
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
events=19000000
seed=1
repeat=5
loops=3000
while (($#)); do
  case $1 in
    --events) events=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --loops) loops=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "perf_script_ratio.sh: unknown argument '$1' (--help)" >&2; exit 1 ;;
  esac
done
command -v perf >/dev/null || { echo "perf_script_ratio.sh: needs perf (apt-get install linux-perf)" >&2; exit 2; }

bench_build "$root" "$build"
causeway=$build/cli/causeway

trace=$(bench_trace "$root" "$build" "$events" "$seed")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
perf record -N -q -o "$work/perf.data" -e sched:sched_switch -e sched:sched_wakeup \
  -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit \
  -- bash -c "for i in \$(seq $loops); do echo x | cat >/dev/null; done" >/dev/null 2>&1
perf_events=$(perf script -i "$work/perf.data" 2>/dev/null | wc -l)
((perf_events > 0)) || { echo "perf_script_ratio.sh: perf recorded no events" >&2; exit 2; }

timed() { /usr/bin/time -f '%e' -o "$work/t" "$@" >/dev/null 2>&1; cat "$work/t"; }

perf_s=() cw_s=()
for ((r = 0; r < repeat; ++r)); do
  perf_s+=("$(timed perf script -i "$work/perf.data")")
  cw_s+=("$(timed "$causeway" graph --no-cache "$trace")")
done
pm=$(median <<<"${perf_s[*]}")
cm=$(median <<<"${cw_s[*]}")

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), commit $(git -C "$root" rev-parse --short HEAD), load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tool | events | wall s (median of $repeat) | min | max | M events/s |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
row() {
  local name=$1 n=$2 m=$3; shift 3
  local sorted; sorted=$(printf '%s\n' "$@" | sort -g)
  printf '| %s | %d | %.2f | %.2f | %.2f | %.2f |\n' "$name" "$n" "$m" "$(head -1 <<<"$sorted")" \
    "$(tail -1 <<<"$sorted")" "$(awk -v n="$n" -v s="$m" 'BEGIN {print n / s / 1e6}')"
}
row "\`perf script\` ($loops pipelines, perf record)" "$perf_events" "$pm" "${perf_s[@]}"
row "\`causeway graph\` (synthetic, seed $seed)" "$events" "$cm" "${cw_s[@]}"
echo
awk -v pe="$perf_events" -v ps="$pm" -v ce="$events" -v cs="$cm" 'BEGIN {
  r = (ce / cs) / (pe / ps)
  verdict = (r >= 6) ? "met" : "missed"
  printf "causeway graph / perf script: %.1f× the events per second (target ≥ 6×: %s)\n", r, verdict
}'
