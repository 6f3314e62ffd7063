#!/usr/bin/env bash
# Recording overhead (DESIGN.md §10): the wall time of syscall-heavy workloads run bare,
# under `causeway record` and under `perf record` of the same tracepoints, alternated per
# repetition in one run; prints medians and ratios (bench/README.md, "Recording overhead").
set -euo pipefail
trap 'echo "overhead.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR

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
  irq:softirq_entry irq:softirq_exit signal:signal_generate signal:signal_deliver
  task:task_rename)

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

# Runs one workload under one configuration; appends "rep workload config wall_us cpu_us
# output_bytes events lost" to the samples: the events the tracer wrote and those it
# dropped because its buffers were full.
run_one() {
  local rep=$1 index=$2 config=$3
  local -a command
  read -r -a command <<<"${workload_commands[$index]}"
  local -a wrapper=()
  local output=""
  # taskset execs the workload, so its start-up is outside the workload's own timing.
  [[ -n $pin ]] && command=(taskset -c "$pin" "${command[@]}")
  # The workload's CPU time (its processes' user + system, in ms): unlike wall time, it
  # does not count waiting for a CPU that other work on the machine holds.
  command=(bash -c 'TIMEFORMAT="cw_cpu %3U %3S"; time "$@"' cpu-time "${command[@]}")
  case $config in
    causeway) output=$work/trace.cwt; wrapper=("$causeway" record -o "$output" --) ;;
    perf)
      output=$work/perf.data
      # -B: perf 6.1's build-id pass after the run crashes on large files ("stack smashing
      # detected"); it runs after the workload, so leaving it out changes no timing.
      wrapper=(perf record -a -B -o "$output")
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
  local cpu_us
  cpu_us=$(sed -n 's/^cw_cpu \([0-9.]*\) \([0-9.]*\)$/\1 \2/p' "$work/stderr" |
    awk '{printf "%.0f", ($1 + $2) * 1e6}')
  [[ -n $cpu_us ]] || { echo "overhead.sh: no CPU time from '${workload_names[$index]}' under $config" >&2; exit 1; }
  local bytes=0 events=0 lost=0
  if [[ -n $output && -f $output ]]; then bytes=$(stat -c %s "$output"); fi
  case $config in
    # perf's per-event stats: "raw_syscalls:sys_enter stats:" then "SAMPLE events: N" and
    # "LOST_SAMPLES events: N" (the aggregated section before them counts records instead).
    perf)
      read -r events lost < <(perf report -i "$output" --stats 2>/dev/null | awk '
        / stats:$/ { per_event = 1 }
        per_event && $1 == "SAMPLE" { events += $3 }
        per_event && $1 == "LOST_SAMPLES" { lost += $3 }
        END { print events + 0, lost + 0 }')
      ;;
    # "causeway: wrote T: 3847193 events, 86062 events LOST (kernel buffer full: ...)"
    causeway)
      events=$(sed -n 's/.*: wrote .*: \([0-9]*\) events.*/\1/p' "$work/stderr" | head -1)
      lost=$(sed -n 's/.* \([0-9]*\) events LOST.*/\1/p' "$work/stderr" | head -1)
      ;;
  esac
  cp "$work/stderr" "$work/stderr.$config.last"
  rm -f "$output"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "${workload_names[$index]}" "$config" \
    "$((ns / 1000))" "$cpu_us" "$bytes" "${events:-0}" "${lost:-0}" >>"$samples"
  printf '  rep %d  %-28s %-9s %9.1f ms wall %9.1f ms CPU\n' "$rep" "${workload_names[$index]}" \
    "$config" "$(awk "BEGIN {print $ns / 1e6}")" "$(awk "BEGIN {print $cpu_us / 1e3}")" >&2
}

echo "# recording overhead: ${#workload_names[@]} workloads x ${configs[*]} x $repeat repetitions" >&2
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# load before: $load_before${pin:+, workloads pinned to CPUs $pin}" >&2
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

python3 - "$samples" "$json_out" "$repeat" "$load_before" "$load_after" <<'EOF'
import json, statistics, sys
samples_path, json_path = sys.argv[1], sys.argv[2]
repeat, load_before, load_after = int(sys.argv[3]), sys.argv[4], sys.argv[5]
configs = ("baseline", "causeway", "perf")
runs = {}  # (workload, config) -> list of (wall ms, cpu ms, output bytes, events, lost)
order = []
for line in open(samples_path):
    rep, workload, config, wall_us, cpu_us, size, events, lost = line.rstrip("\n").split("\t")
    if workload not in order:
        order.append(workload)
    runs.setdefault((workload, config), []).append(
        (int(wall_us) / 1000, int(cpu_us) / 1000, int(size), int(events), int(lost)))

def median(workload, config, column):
    values = runs.get((workload, config))
    return statistics.median(v[column] for v in values) if values else None

def fmt(value, spec):
    return "–" if value is None else format(value, spec)

def overhead(value, base):
    return None if value is None or not base else (value / base - 1) * 100

summary = []
for workload in order:
    entry = {"workload": workload, "repetitions": repeat}
    for column, unit in ((0, "wall"), (1, "cpu")):
        base, cw, perf = (median(workload, c, column) for c in configs)
        entry[unit] = {
            "baseline_ms": base, "causeway_ms": cw, "perf_ms": perf,
            "causeway_overhead_percent": overhead(cw, base),
            "perf_overhead_percent": overhead(perf, base),
            "causeway_over_perf": cw / perf if cw is not None and perf else None}
    entry["runs"] = {
        config: [{"wall_ms": v[0], "cpu_ms": v[1], "output_bytes": v[2], "events": v[3],
                  "lost": v[4]}
                 for v in runs[(workload, config)]]
        for config in configs if (workload, config) in runs}
    summary.append(entry)

for unit, title in (("wall", "wall time of the workload"),
                    ("cpu", "CPU time of the workload (user + system)")):
    print(f"Medians of {repeat} alternated runs, {title}:")
    print()
    print("| workload | baseline ms | causeway ms | perf ms | causeway overhead % "
          "| perf overhead % | causeway/perf |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for entry in summary:
        e = entry[unit]
        print(f"| {entry['workload']} | {fmt(e['baseline_ms'], '.1f')} | "
              f"{fmt(e['causeway_ms'], '.1f')} | {fmt(e['perf_ms'], '.1f')} | "
              f"{fmt(e['causeway_overhead_percent'], '+.1f')} | "
              f"{fmt(e['perf_overhead_percent'], '+.1f')} | {fmt(e['causeway_over_perf'], '.3f')} |")
    print()

print("Spread of the wall time, and the tracer's output: events written and events lost "
      "(buffers full), medians:")
print()
print("| workload | config | min ms | median ms | max ms | output MiB | events | lost | lost % |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for entry in summary:
    for config, values in entry["runs"].items():
        wall = [v["wall_ms"] for v in values]
        size = statistics.median(v["output_bytes"] for v in values) / 2**20
        events = statistics.median(v["events"] for v in values)
        lost = statistics.median(v["lost"] for v in values)
        share = "–" if config == "baseline" else f"{100 * lost / max(1, events + lost):.1f}"
        print(f"| {entry['workload']} | {config} | {min(wall):.1f} | "
              f"{statistics.median(wall):.1f} | {max(wall):.1f} | {size:.1f} | {events:.0f} | "
              f"{lost:.0f} | {share} |")
print()
print(f"Load average (1/5/15 min) before: {load_before}; after: {load_after}.")
if json_path:
    with open(json_path, "w") as out:
        json.dump({"load_before": load_before, "load_after": load_after,
                   "workloads": summary}, out, indent=2)
EOF
