# shellcheck shell=bash
# Sourced by the bench scripts: the synthetic trace they measure, generated once per
# generator, event count and seed into CW_BENCH_CACHE (default ~/.cache/causeway-bench).
# The file name carries a hash of the generator's sources and of the trace writer, so a
# changed generator or format makes a new trace.

bench_cache=${CW_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/causeway-bench}

# bench_trace ROOT BUILD EVENTS SEED: prints the trace's path, generating it first with
# BUILD's cw-gen-trace when it is not there yet.
bench_trace() {
  local root=$1 build=$2 events=$3 seed=$4 generator trace
  generator=$(cat "$root"/bench/{event_queue,event_builder,population,session_model}.{h,cc} \
    "$root"/bench/rng.h "$root"/bench/gen_trace.cc "$root"/trace/binary_format.cc \
    | sha256sum | cut -c1-12)
  trace=$bench_cache/chromium-$events-seed$seed-$generator.cwt
  if [[ ! -f $trace ]]; then
    mkdir -p "$bench_cache"
    echo "generating $trace ..." >&2
    "$build/bench/cw-gen-trace" -o "$trace.tmp" --events "$events" --seed "$seed" >&2
    mv "$trace.tmp" "$trace"
  fi
  echo "$trace"
}
