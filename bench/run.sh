#!/usr/bin/env bash
# The benchmark (bench/README.md): builds Release, generates the Chromium-scale synthetic
# trace once (cached by its parameters and the generator's sources), times reading it,
# loading the packs and building the graph 3 times, then a whole non-interactive
# diagnosis and single search steps on that graph 3 times, then the cost per call of an
# inline hook, a uprobe and a watchpoint, and `causeway latency`'s inference and ranking,
# and prints Markdown tables.
#
#   bench/run.sh [--events N] [--seed S] [--repeat R] [--hang auto|TID@SECONDS]
#                [--only graph|debug|latency|hooks] [--hubs N] [--samples K] [options for both tools...]
#
# Environment: CW_BENCH_BUILD (build dir, default build-release), CW_BENCH_CACHE (trace
# cache, default ~/.cache/causeway-bench), CW_BENCH_JOBS (ninja -j, default 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CW_BENCH_BUILD:-$root/build-release}
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
events=19000000
seed=1
repeat=3
hang=auto
only=
extra=()        # to both tools (--rules, --no-stdlib, --json, ...)
debug_extra=()  # to cw-bench-debug only
while (($#)); do
  case $1 in
    --events) events=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --hang) hang=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --hubs|--samples) debug_extra+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done

# Warnings are not the benchmark's business: -Werror stays with the development builds.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCW_WERROR=OFF >/dev/null
case $only in
  hooks) targets=(cw-bench-hooks) ;;
  graph|debug) targets=(cw-gen-trace cw-bench-graph cw-bench-debug) ;;
  latency) targets=(cw-gen-trace cw-bench-latency) ;;
  *) targets=(cw-gen-trace cw-bench-graph cw-bench-debug cw-bench-hooks cw-bench-latency) ;;
esac
ninja -C "$build" -j"${CW_BENCH_JOBS:-2}" "${targets[@]}" >/dev/null

# A trace is reused only when made by the same generator with the same parameters.
trace=
[[ $only == hooks ]] || trace=$(bench_trace "$root" "$build" "$events" "$seed")

machine() {
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, commit $(git -C "$root" rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

if [[ -z $only || $only == graph ]]; then
  echo "## causeway graph benchmark"
  echo
  machine
  echo
  echo "\`cw-bench-graph $trace --repeat $repeat${extra[*]:+ ${extra[*]}}\`"
  echo
  "$build/bench/cw-bench-graph" "$trace" --repeat "$repeat" --markdown "${extra[@]}"
  echo
fi

if [[ -z $only || $only == debug ]]; then
  echo "## causeway diagnosis benchmark"
  echo
  machine
  echo
  echo "\`cw-bench-debug $trace --repeat $repeat --hang $hang${extra[*]:+ ${extra[*]}}${debug_extra[*]:+ ${debug_extra[*]}}\`"
  echo
  "$build/bench/cw-bench-debug" "$trace" --repeat "$repeat" --hang "$hang" "${extra[@]}" \
    "${debug_extra[@]}"
  echo
  echo "(load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
fi

if [[ -z $only || $only == latency ]]; then
  echo
  echo "## causeway latency benchmark"
  echo
  machine
  echo
  echo "\`cw-bench-latency $trace --repeat $repeat\`"
  echo
  "$build/bench/cw-bench-latency" "$trace" --repeat "$repeat"
  echo
  echo "(load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
fi

if [[ -z $only || $only == hooks ]]; then
  echo
  echo "## causeway hook benchmark"
  echo
  machine
  echo
  echo "\`cw-bench-hooks\`"
  echo
  "$build/bench/cw-bench-hooks"
  echo
  echo "(load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
fi
