#!/usr/bin/env bash
# The derived cache's size against what it saves (docs/cache.md, "Size"). For each trace
# (the synthetic one of --events N, generated once as bench/run.sh does, and any --trace
# FILE, e.g. a recording), copied into a private folder so that its cache is beside it:
#
# 1. cw-bench-cache -n R on all of them: the events entry's size and load time, kept as
#    causeway keeps it (mapped) and zstd-compressed (decompressed on load), against
#    decoding the trace; in one process, side by side.
# 2. R times, for `causeway hangs TRACE` and `causeway debug TRACE --auto --hang auto`, each
#    a whole process timed with /usr/bin/time (wall s to its result, CPU s, peak RSS):
#    cold (no cache folder; it makes one, and the script waits for its saves before going
#    on), warm with the events entry and thread index (CAUSEWAY_CACHE_EVENTS_MIN=0: kept at
#    any size), and warm without them (both removed, CAUSEWAY_CACHE_EVENTS_MIN=1T: not
#    kept, so the run decodes the trace and indexes it; its graph still from the cache).
#    Then the size of each entry the cold runs left.
#
# Prints Markdown tables of medians.
#
#   bench/cache_size.sh [--events N] [--seed S] [--trace FILE]... [--repeat R]
#
# Defaults: N 19000000 (0: no synthetic trace), S 1, R 5.
# Environment: CW_BENCH_BUILD (build dir, default build-release: configured Release and
# built when it has no causeway), CW_BENCH_CACHE (synthetic trace cache, default
# ~/.cache/causeway-bench), CW_BENCH_JOBS (ninja -j, default 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CW_BENCH_BUILD:-$root/build-release}
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
events=19000000
seed=1
repeat=5
traces=()
while (($#)); do
  case $1 in
    --events) events=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --trace) traces+=("$(realpath "$2")"); shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cache_size.sh: unknown argument '$1' (--help)" >&2; exit 1 ;;
  esac
done

bench_build "$root" "$build"
nice ninja -C "$build" -j"${CW_BENCH_JOBS:-2}" cw-bench-cache >/dev/null
causeway=$build/cli/causeway
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")
build_type=${build_type:-RelWithDebInfo (the default)}
((events > 0)) && traces=("$(bench_trace "$root" "$build" "$events" "$seed")" "${traces[@]}")
((${#traces[@]})) || { echo "cache_size.sh: no trace (--events 0 and no --trace)" >&2; exit 1; }

work=$(mktemp -d)  # 0700, this user's: each copy's cache folder is made beside it
trap 'rm -rf "$work"' EXIT
copies=()
for t in "${traces[@]}"; do
  cp "$t" "$work/" && copies+=("$work/$(basename "$t")")
done

echo "## The derived cache's size"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, commit $(git -C "$root" rev-parse --short HEAD), $build_type build, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "### Loading the events entry, in one process (cw-bench-cache -n $repeat)"
echo
"$build/bench/cw-bench-cache" -n "$repeat" "${copies[@]}"
echo

declare -A walls cpus rss
# timed KEY -- CMD...: runs CMD (its stdout through a pipe: a save the command left to a
# copy of itself holds the pipe until it is done, so the next step finds its entries),
# records wall s, CPU s (user + system) and peak RSS.
timed() {
  local k=$1; shift 2
  if ! { /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$@" 2>"$work/err"; } | cat >/dev/null; then
    echo "cache_size.sh: failed: $*" >&2
    cat "$work/err" >&2
    exit 1
  fi
  local w m u s
  read -r w m u s < <(tail -1 "$work/time")
  walls[$k]+="$w "
  cpus[$k]+="$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}') "
  rss[$k]+="$m "
}

commands=(hangs debug)
for t in "${copies[@]}"; do
  for ((r = 1; r <= repeat; r++)); do
    echo "$(basename "$t"): repetition $r of $repeat ..." >&2
    for c in "${commands[@]}"; do
      args=("$c" "$t")
      [[ $c == debug ]] && args+=(--auto --hang auto)
      rm -rf "$t.cwcache"
      CAUSEWAY_CACHE_EVENTS_MIN=0 timed "$t|$c|cold" -- "$causeway" "${args[@]}"
      du -b "$t.cwcache"/* >"$work/sizes.$(basename "$t").$c"
      CAUSEWAY_CACHE_EVENTS_MIN=0 timed "$t|$c|kept" -- "$causeway" "${args[@]}"
      rm -f "$t.cwcache/trace.cwa" "$t.cwcache/threads.cwa"
      CAUSEWAY_CACHE_EVENTS_MIN=1T timed "$t|$c|none" -- "$causeway" "${args[@]}"
    done
  done
done

echo "### Whole commands (median of $repeat)"
echo
echo "| trace | command | run | wall s | min | max | CPU s | peak RSS MiB |"
echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"
for t in "${copies[@]}"; do
  for c in "${commands[@]}"; do
    for run in cold kept none; do
      k="$t|$c|$run"
      case $run in
        cold) what="cold (no cache)" ;;
        kept) what="warm, events entry mapped" ;;
        none) what="warm, no events entry (trace decoded)" ;;
      esac
      printf '| %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f |\n' "$(basename "$t")" "$c" "$what" \
        "$(median <<<"${walls[$k]}")" "$(minimum <<<"${walls[$k]}")" "$(maximum <<<"${walls[$k]}")" \
        "$(median <<<"${cpus[$k]}")" "$(awk -v k="$(median <<<"${rss[$k]}")" 'BEGIN {print k / 1024}')"
    done
  done
done
echo
echo "### The entries a cold \`causeway debug\` left (MiB; × the trace's size)"
echo
echo "| trace | trace MiB | trace.cwa | threads.cwa | graph | all | all without trace.cwa, threads.cwa |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for t in "${copies[@]}"; do
  awk -v name="$(basename "$t")" -v trace="$(stat -c %s "$t")" '
    function f(b) { return sprintf("%.1f (%.2f×)", b / 1048576, b / trace) }
    { n = split($2, p, "/"); e = p[n]; all += $1
      if (e == "trace.cwa") a = $1; else if (e == "threads.cwa") i = $1; else if (e ~ /^graph-/) g += $1 }
    END { printf "| %s | %.1f | %s | %s | %s | %s | %s |\n", name, trace / 1048576, f(a), f(i), f(g), f(all), f(all - a - i) }
  ' "$work/sizes.$(basename "$t").debug"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
