#!/usr/bin/env bash
# Recording overhead (DESIGN.md §10): the wall time of syscall-heavy workloads run bare,
# under `causeway record` and under `perf record` of the same tracepoints, alternated per
# repetition in one run; prints medians and ratios (bench/README.md, "Recording overhead").
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/record/overhead.sh [options]
  --causeway PATH   the causeway binary (default $CAUSEWAY, else build/cli/causeway)
  --programs DIR    where the cw-prog-* programs are (default $PROGRAMS, else
                    build-programs/tests/programs, built there when missing)
  --repeat N        alternated repetitions per workload (default 5, at least 5 for a result)
  --no-causeway     measure baseline and perf only (e.g. before `causeway record` exists)
  --no-perf         measure baseline and causeway only
  --quick           workloads a tenth of the size (to check the script, not to measure)
  --pin CPUS        run the workloads under `taskset -c CPUS` (inside the tracer), e.g. 1
  --json FILE       also write the summary as JSON
  --raw FILE        also write every measurement (TSV: rep workload config ms)
EOF
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
causeway=${CAUSEWAY:-$repo/build/cli/causeway}
programs=${PROGRAMS:-$repo/build-programs/tests/programs}
repeat=5
use_causeway=1
use_perf=1
scale=1
json_out=""
raw_out=""
pin=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --causeway) causeway=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-causeway) use_causeway=0; shift ;;
    --no-perf) use_perf=0; shift ;;
    --quick) scale=10; shift ;;
    --pin) pin=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --raw) raw_out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "overhead.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ $repeat =~ ^[0-9]+$ && $repeat -ge 1 ]] || { echo "overhead.sh: --repeat needs a positive count, got '$repeat'" >&2; exit 2; }

# The tracepoints causeway attaches (kernel/causeway.bpf.c), for perf to record the same.
tracepoints=(sched:sched_switch sched:sched_waking sched:sched_wakeup_new
  sched:sched_process_fork sched:sched_process_exec sched:sched_process_exit
  raw_syscalls:sys_enter raw_syscalls:sys_exit irq:irq_handler_entry irq:irq_handler_exit
  irq:softirq_entry irq:softirq_exit signal:signal_generate signal:signal_deliver)

if [[ ! -x $programs/cw-prog-pingpong || ! -x $programs/cw-prog-mutex ]]; then
  echo "building the test programs in $repo/build-programs" >&2
  cmake -S "$repo" -B "$repo/build-programs" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$repo/build-programs" -j2 cw-prog-pingpong cw-prog-mutex >/dev/null
  programs=$repo/build-programs/tests/programs
fi
# CLI11 answers `record --help` with the top-level help when there is no such subcommand.
if [[ $use_causeway == 1 ]] && ! "$causeway" --help 2>/dev/null | grep -qE '^ +record( |$)'; then
  echo "overhead.sh: '$causeway' has no 'record' subcommand (pass --causeway PATH, or --no-causeway)" >&2
  exit 2
fi
if [[ $use_perf == 1 ]] && ! command -v perf >/dev/null; then
  echo "overhead.sh: perf is not installed (apt-get install linux-perf, or --no-perf)" >&2
  exit 2
fi

# Workloads: name and command. The programs print their own wall time (-t: elapsed_ns=N,
# tracer start-up excluded); dd prints its copy time on stderr ("copied, S s").
pingpong_rounds=$((200000 / scale))
mutex_increments=$((2000000 / scale))
dd_blocks=$((2000000 / scale))
workload_names=("pingpong $pingpong_rounds" "mutex 4x$mutex_increments" "dd bs=512 count=$dd_blocks")
workload_commands=(
  "$programs/cw-prog-pingpong -t $pingpong_rounds"
  "$programs/cw-prog-mutex -t 4 $mutex_increments"
  "dd if=/dev/zero of=/dev/null bs=512 count=$dd_blocks"
)

configs=(baseline)
[[ $use_causeway == 1 ]] && configs+=(causeway)
[[ $use_perf == 1 ]] && configs+=(perf)

work=$(mktemp -d /tmp/cw-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT
samples=$work/samples.tsv
: >"$samples"

# Runs one workload under one configuration; appends "rep workload config ms output_bytes
# lost" to the samples. `lost` is what the tracer reported it dropped (perf: lost samples).
run_one() {
  local rep=$1 index=$2 config=$3
  local -a command
  read -r -a command <<<"${workload_commands[$index]}"
  local -a wrapper=()
  local output=""
  # taskset execs the workload, so its start-up is outside the workload's own timing.
  [[ -n $pin ]] && command=(taskset -c "$pin" "${command[@]}")
  case $config in
    causeway) output=$work/trace.cwt; wrapper=("$causeway" record -o "$output" --) ;;
    perf)
      output=$work/perf.data
      wrapper=(perf record -a -o "$output")
      for tracepoint in "${tracepoints[@]}"; do wrapper+=(-e "$tracepoint"); done
      wrapper+=(--)
      ;;
  esac
  local status=0
  "${wrapper[@]}" "${command[@]}" >"$work/stdout" 2>"$work/stderr" || status=$?
  if [[ $status != 0 ]]; then
    echo "overhead.sh: '${workload_names[$index]}' under $config exited $status:" >&2
    cat "$work/stderr" >&2
    exit 1
  fi
  local ns
  if [[ ${workload_names[$index]} == dd* ]]; then
    # "1024000000 bytes (1.0 GB, 977 MiB) copied, 0.687501 s, 1.5 GB/s"
    ns=$(sed -n 's/.* copied, \([0-9.e+-]*\) s,.*/\1/p' "$work/stderr" | awk '{printf "%.0f", $1 * 1e9}')
  else
    ns=$(sed -n 's/^elapsed_ns=\([0-9]*\)$/\1/p' "$work/stdout")
  fi
  if [[ -z $ns ]]; then
    echo "overhead.sh: no elapsed time from '${workload_names[$index]}' under $config; its output:" >&2
    cat "$work/stdout" "$work/stderr" >&2
    exit 1
  fi
  local bytes=0 lost=0
  if [[ -n $output && -f $output ]]; then bytes=$(stat -c %s "$output"); fi
  case $config in
    # "Processed 8132 events and lost 3 chunks!" / "[ perf record: ... (N samples) ]"
    perf) lost=$(sed -n 's/.*lost \([0-9]*\) chunks.*/\1/p; s/.*Lost \([0-9]*\) .*/\1/p' "$work/stderr" |
      awk '{sum += $1} END {print sum + 0}') ;;
    causeway) lost=$(grep -oiE '[0-9]+ (events|records) (were )?lost|lost:? [0-9]+' "$work/stderr" |
      grep -oE '[0-9]+' | awk '{sum += $1} END {print sum + 0}') ;;
  esac
  cp "$work/stderr" "$work/stderr.$config.last"
  rm -f "$output"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "${workload_names[$index]}" "$config" \
    "$((ns / 1000))" "$bytes" "$lost" >>"$samples"
  printf '  rep %d  %-28s %-9s %9.1f ms\n' "$rep" "${workload_names[$index]}" "$config" \
    "$(awk "BEGIN {print $ns / 1e6}")" >&2
}

echo "# recording overhead: ${#workload_names[@]} workloads x ${configs[*]} x $repeat repetitions" >&2
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)${pin:+, workloads pinned to CPUs $pin}" >&2
# One unmeasured run of each workload: page cache, CPU frequency, lazy binding.
for index in "${!workload_names[@]}"; do
  read -r -a command <<<"${workload_commands[$index]}"
  "${command[@]}" >/dev/null 2>&1
done
for ((rep = 1; rep <= repeat; ++rep)); do
  for index in "${!workload_names[@]}"; do
    # Rotate which configuration goes first, so none always runs right after another.
    count=${#configs[@]}
    for ((k = 0; k < count; ++k)); do
      run_one "$rep" "$index" "${configs[$(((k + rep - 1) % count))]}"
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# load after: $load_after" >&2
[[ -n $raw_out ]] && cp "$samples" "$raw_out"

python3 - "$samples" "$json_out" "$repeat" <<'EOF'
import json, statistics, sys
samples_path, json_path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = {}  # (workload, config) -> list of (us, bytes, lost)
order = []
for line in open(samples_path):
    rep, workload, config, us, size, lost = line.rstrip("\n").split("\t")
    if workload not in order:
        order.append(workload)
    runs.setdefault((workload, config), []).append((int(us), int(size), int(lost)))

def median_ms(workload, config):
    values = runs.get((workload, config))
    return statistics.median(v[0] for v in values) / 1000 if values else None

def fmt(value, spec):
    return "–" if value is None else format(value, spec)

summary = []
print("| workload | baseline ms | causeway ms | perf ms | causeway overhead % | perf overhead % | causeway/perf |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for workload in order:
    base, cw, perf = (median_ms(workload, c) for c in ("baseline", "causeway", "perf"))
    cw_over = (cw / base - 1) * 100 if cw is not None else None
    perf_over = (perf / base - 1) * 100 if perf is not None else None
    ratio = cw / perf if cw is not None and perf is not None else None
    print(f"| {workload} | {fmt(base, '.1f')} | {fmt(cw, '.1f')} | {fmt(perf, '.1f')} | "
          f"{fmt(cw_over, '+.1f')} | {fmt(perf_over, '+.1f')} | {fmt(ratio, '.3f')} |")
    entry = {"workload": workload, "repetitions": repeat, "baseline_ms": base,
             "causeway_ms": cw, "perf_ms": perf, "causeway_overhead_percent": cw_over,
             "perf_overhead_percent": perf_over, "causeway_over_perf": ratio, "configs": {}}
    for config in ("baseline", "causeway", "perf"):
        values = runs.get((workload, config))
        if values:
            entry["configs"][config] = {
                "ms": [v[0] / 1000 for v in values],
                "output_mib_median": statistics.median(v[1] for v in values) / 2**20,
                "lost_median": statistics.median(v[2] for v in values)}
    summary.append(entry)

print()
print("| workload | config | min ms | median ms | max ms | output MiB (median) | lost (median) |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for entry in summary:
    for config, data in entry["configs"].items():
        ms = data["ms"]
        print(f"| {entry['workload']} | {config} | {min(ms):.1f} | {statistics.median(ms):.1f} | "
              f"{max(ms):.1f} | {data['output_mib_median']:.1f} | {data['lost_median']:g} |")
if json_path:
    with open(json_path, "w") as out:
        json.dump(summary, out, indent=2)
EOF
