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
    "$root"/bench/session_model_internal.h \
    "$root"/bench/session_model_{names,threads,mechanisms,chrome,bus,pools}.cc \
    "$root"/bench/session_model_{interrupts,input,lifecycle}.cc \
    "$root"/bench/rng.h "$root"/bench/gen_trace.cc "$root"/trace/binary_format_writer.cc \
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

# bench_build ROOT BUILD: configures BUILD as a Release tree when it has none yet, and
# builds causeway and cw-gen-trace in it (ninja -j CW_BENCH_JOBS, default 2).
bench_build() {
  local root=$1 build=$2
  if [[ ! -f $build/build.ninja ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCW_WERROR=OFF >/dev/null
  fi
  nice ninja -C "$build" -j"${CW_BENCH_JOBS:-2}" causeway cw-gen-trace >/dev/null
}

# Medians, minima and maxima of the numbers on stdin (spaces or newlines between them).
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
minimum() { tr ' ' '\n' | sed '/^$/d' | sort -g | head -1; }
maximum() { tr ' ' '\n' | sed '/^$/d' | sort -g | tail -1; }
