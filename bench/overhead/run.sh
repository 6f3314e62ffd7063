#!/usr/bin/env bash
# Always-on recording overhead on real workloads (bench/README.md, "Always-on overhead"):
# a local PostgreSQL under pgbench (select-only and read-write), a C build with make -j,
# redis-benchmark against a local redis-server, small reads and writes (dd with 512-byte
# blocks: the worst case for a cost paid per system call) and round trips over unix sockets
# (pingpong.c: the per-event cost of a server's request and reply, with little noise), each run bare, under the always-on
# recorder (`causeway record start`, the whole machine, default options: calls from the
# scheduler, waits held until they last 1 ms), under it with `--call-graph dwarf`, with
# `--calls syscalls` (the syscall programs), with `--calls scheduler` (every wait), and under
# `perf record -a` of the same kernel events, in an order
# that rotates every round. Prints the medians, the loss against bare (of the medians, and
# the median of each round's loss against that round's bare run) and, for causeway,
# the events and ring bytes written per second and the events lost.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/overhead/run.sh [options]
  --causeway PATH    the causeway binary (default $CAUSEWAY, else build/cli/causeway)
  --rounds N         rounds; each runs every workload under every configuration once, in
                     an order that rotates (default 5, at least 5 for a result)
  --seconds S        length of each pgbench run (default 8)
  --workloads LIST   comma-separated, of pgbench-select, pgbench-rw, pgbench-cpu, make, redis,
                     syscalls, unix-pingpong (default all)
  --configs LIST     comma-separated, of bare, causeway (record start's defaults),
                     causeway-dwarf, causeway-syscalls (--calls syscalls), causeway-scheduler
                     (--calls scheduler: every wait), causeway-held (--calls scheduler
                     --min-wait 1ms, the defaults spelled out), causeway-pipes (the defaults
                     and --pipe-bytes), causeway-opts (the defaults and --start-options),
                     perf (default all)
  --start-options S  record start's options in the causeway-opts configuration (split at
                     spaces): a setting against the defaults, in the same rounds
  --quick            short runs (2 s, a small build, fewer requests): checks the script,
                     measures nothing
  --json FILE        also write the summary as JSON
  --raw FILE         also write every measurement as TSV
Needs root (the recorder and perf -a), PostgreSQL, redis, gcc, make and perf installed.
EOF
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
causeway=${CAUSEWAY:-$repo/build/cli/causeway}
rounds=5
seconds=8
workloads=pgbench-select,pgbench-rw,pgbench-cpu,make,redis,syscalls,unix-pingpong
configs=bare,causeway,causeway-dwarf,causeway-syscalls,causeway-scheduler,causeway-held,perf
quick=0
start_options=""
json_out=""
raw_out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --causeway) causeway=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --start-options) start_options=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --json) json_out=$2; shift 2 ;;
    --raw) raw_out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "overhead: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
fail() { echo "overhead: $*" >&2; exit 2; }
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] || fail "--rounds needs a positive count, got '$rounds'"
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 1 ]] || fail "--seconds needs a positive count, got '$seconds'"
IFS=, read -r -a workload_list <<<"$workloads"
IFS=, read -r -a config_list <<<"$configs"
for w in "${workload_list[@]}"; do
  [[ $w =~ ^(pgbench-select|pgbench-rw|pgbench-cpu|make|redis|syscalls|unix-pingpong)$ ]] ||
    fail "unknown workload '$w'"
done
for c in "${config_list[@]}"; do
  [[ $c =~ ^(bare|causeway|causeway-dwarf|causeway-syscalls|causeway-scheduler|causeway-held|causeway-pipes|causeway-opts|perf)$ ]] ||
    fail "unknown configuration '$c'"
done
[[ $(id -u) == 0 ]] || fail "needs root (the recorder and perf record -a)"
if [[ " ${config_list[*]} " == *" causeway"* ]]; then
  "$causeway" record start --help >/dev/null 2>&1 || fail "'$causeway' has no 'record start'"
fi
if [[ " ${config_list[*]} " == *" perf "* ]]; then
  command -v perf >/dev/null || fail "perf is not installed (apt-get install linux-perf)"
fi
if (( quick )); then seconds=2; fi

# The servers, their folders and their clean-up (tests/real/lib.sh: a temp dir, servers
# killed on exit, PostgreSQL as its own user).
. "$repo/tests/real/lib.sh"
for w in "${workload_list[@]}"; do
  case $w in
    pgbench-*) need pgbench ;;
    make) need make gcc ;;
    redis) need redis-server redis-benchmark ;;
    syscalls) need dd ;;
    unix-pingpong) need gcc ;;
  esac
done

if [[ " ${workload_list[*]} " == *" pgbench-"* ]]; then
  pgbench_database
fi
if [[ " ${workload_list[*]} " == *" redis "* ]]; then
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    >"$WORK/redis.log" 2>&1 &
  PIDS+=($!)
  wait_port "$redis_port" redis-server "$WORK/redis.log"
fi
if [[ " ${workload_list[*]} " == *" unix-pingpong "* ]]; then
  gcc -O2 -o "$WORK/pingpong" "$repo/bench/overhead/pingpong.c" 2>"$WORK/pingpong.log" ||
    die "building pingpong.c failed: $(tail -3 "$WORK/pingpong.log")"
fi
if [[ " ${workload_list[*]} " == *" make "* ]]; then
  # Forty C files of some substance (a few hundred ms of cc1 each at -O2) and a Makefile.
  files=$(( quick ? 8 : 40 ))
  mkdir -p "$WORK/build"
  for i in $(seq "$files"); do
    {
      echo "#include <stdio.h>"
      echo "#include <string.h>"
      for f in $(seq 40); do
        echo "static int f${f}(const char* s, int n) { int h = $i; for (int k = 0; k < n; k++) h = h * 31 + s[k % (int)strlen(s)] + $f; return h; }"
      done
      echo "int unit$i(void) { int t = 0;"
      for f in $(seq 40); do echo "  t ^= f${f}(\"unit$i\", $f);"; done
      echo "  return t; }"
    } >"$WORK/build/unit$i.c"
  done
  objs=$(for i in $(seq "$files"); do printf 'unit%s.o ' "$i"; done)
  printf 'CFLAGS = -O2\nall: %s\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c $< -o $@\nclean:\n\trm -f *.o\n' \
    "$objs" >"$WORK/build/Makefile"
fi

# The kernel events causeway's programs attach to, for perf to record the same.
perf_events=(-e sched:sched_switch -e sched:sched_waking -e sched:sched_wakeup_new
  -e sched:sched_process_fork -e sched:sched_process_exec -e sched:sched_process_exit
  -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -e irq:irq_handler_entry
  -e irq:irq_handler_exit -e irq:softirq_entry -e irq:softirq_exit
  -e signal:signal_generate -e signal:signal_deliver -e task:task_rename)

recorder_dir="$WORK/recorder"
perf_pid=""

# The recorder's counts from its status file (written every second, and at the stop):
# "EVENTS RING_BYTES LOST".
recorder_counts() {
  "$causeway" record status --dir "$recorder_dir" --json 2>/dev/null | python3 -c '
import json, sys
try:
    s = json.load(sys.stdin)
    print(s["events"], s["ring"]["bytes"], s["lost_events"])
except Exception:
    print("- - -")'
}

# tracer_start CONFIG / tracer_stop CONFIG: the recording around one measurement.
# tracer_stop prints "EVENTS RING_BYTES LOST" for what the workload added (causeway), or
# "- BYTES -" (perf's file).
tracer_start() {
  case $1 in
    bare) ;;
    causeway | causeway-dwarf | causeway-syscalls | causeway-scheduler | causeway-held | causeway-pipes | causeway-opts)
      rm -rf "$recorder_dir"
      local extra=()
      [[ $1 == causeway-dwarf ]] && extra=(--call-graph dwarf)
      [[ $1 == causeway-syscalls ]] && extra=(--calls syscalls)
      [[ $1 == causeway-scheduler ]] && extra=(--calls scheduler)
      [[ $1 == causeway-held ]] && extra=(--calls scheduler --min-wait 1ms)
      [[ $1 == causeway-pipes ]] && extra=(--pipe-bytes)
      # shellcheck disable=SC2206 # split at spaces, as documented
      [[ $1 == causeway-opts ]] && extra=($start_options)
      "$causeway" record start --dir "$recorder_dir" "${extra[@]}" >"$WORK/start.log" 2>&1 ||
        die "record start failed: $(cat "$WORK/start.log")"
      sleep 1.5 # attached, and its status written, before the workload starts
      recorder_counts >"$WORK/counts0"
      ;;
    perf)
      perf record -a -B -o "$WORK/perf.data" "${perf_events[@]}" >"$WORK/perf.log" 2>&1 &
      perf_pid=$!
      sleep 1.5
      ;;
  esac
}

tracer_stop() {
  case $1 in
    bare) echo "- - -" ;;
    causeway | causeway-dwarf | causeway-syscalls | causeway-scheduler | causeway-held | causeway-pipes | causeway-opts)
      "$causeway" record stop --dir "$recorder_dir" >"$WORK/stop.log" 2>&1 ||
        die "record stop failed: $(cat "$WORK/stop.log")"
      local e0 b0 l0 e1 b1 l1
      read -r e0 b0 l0 <"$WORK/counts0"
      read -r e1 b1 l1 < <(recorder_counts)
      if [[ $e0 == - || $e1 == - ]]; then echo "- - -"; else echo "$((e1 - e0)) $((b1 - b0)) $l1"; fi
      rm -rf "$recorder_dir"
      ;;
    perf)
      kill -INT "$perf_pid" 2>/dev/null || true
      wait "$perf_pid" 2>/dev/null || true
      echo "- $(stat -c %s "$WORK/perf.data" 2>/dev/null || echo -) -"
      rm -f "$WORK/perf.data"
      ;;
  esac
}

# measure WORKLOAD: runs it once and prints "VALUE SECONDS" (VALUE: transactions or
# requests per second, or the build's seconds; SECONDS: how long the workload ran).
measure() {
  local start end value
  start=$(date +%s.%N)
  case $1 in
    pgbench-select | pgbench-rw)
      local mode=()
      [[ $1 == pgbench-select ]] && mode=(-S)
      "${pgbench[@]}" "${mode[@]}" -c 4 -j 2 -T "$seconds" -n postgres >"$WORK/out" 2>&1 ||
        die "pgbench failed: $(tail -3 "$WORK/out")"
      value=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$WORK/out" | head -1)
      ;;
    pgbench-cpu)
      # A fixed rate below what the machine can do: the figure is the machine's CPU time
      # per transaction (user, system and interrupts; not the time the host stole), which
      # the host's load moves far less than a saturated run's throughput.
      local b0 b1
      b0=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat)
      "${pgbench[@]}" -S -c 4 -j 2 -T "$seconds" -R 8000 -n postgres >"$WORK/out" 2>&1 ||
        die "pgbench failed: $(tail -3 "$WORK/out")"
      b1=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat)
      local txns
      txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/out")
      [[ -n $txns && $txns -gt 0 ]] || die "pgbench processed nothing: $(tail -3 "$WORK/out")"
      value=$(echo "scale=2; ($b1 - $b0) * 1000000 / $(getconf CLK_TCK) / $txns" | bc)
      ;;
    make)
      make -s -C "$WORK/build" clean
      local t0
      t0=$(date +%s.%N)
      make -s -C "$WORK/build" -j2 >"$WORK/out" 2>&1 || die "make failed: $(tail -3 "$WORK/out")"
      value=$(echo "$(date +%s.%N) - $t0" | bc)
      ;;
    redis)
      local n=$(( quick ? 20000 : 200000 ))
      redis-benchmark -h 127.0.0.1 -p "$redis_port" -q -c 8 -n "$n" -t get,set --csv \
        >"$WORK/out" 2>&1 || die "redis-benchmark failed: $(tail -3 "$WORK/out")"
      # "test","rps",...: the mean of GET's and SET's requests per second
      value=$(awk -F, 'NR > 1 { gsub(/"/, ""); s += $2; n++ } END { if (n) printf "%.1f", s / n }' \
        "$WORK/out")
      ;;
    syscalls)
      # Two million reads and two million writes of 512 bytes, /dev/zero to /dev/null: no
      # wait, no wake-up, nothing a diagnosis needs; what a recorder costs here it costs
      # every call on the machine.
      local blocks=$(( quick ? 200000 : 2000000 ))
      local t0
      t0=$(date +%s.%N)
      dd if=/dev/zero of=/dev/null bs=512 count="$blocks" 2>"$WORK/out" ||
        die "dd failed: $(tail -3 "$WORK/out")"
      value=$(echo "$(date +%s.%N) - $t0" | bc)
      ;;
    unix-pingpong)
      # Four client/server pairs (pgbench's -c 4) for the run's length: round trips a second.
      "$WORK/pingpong" 4 "$seconds" >"$WORK/out" 2>&1 || die "pingpong failed: $(tail -3 "$WORK/out")"
      value=$(head -1 "$WORK/out")
      ;;
  esac
  end=$(date +%s.%N)
  [[ -n $value ]] || die "$1: no figure in its output: $(tail -3 "$WORK/out")"
  echo "$value $(echo "$end - $start" | bc)"
}

raw="$WORK/raw.tsv"
printf 'round\tworkload\tconfig\tvalue\tseconds\tevents\tring_bytes\tlost\n' >"$raw"
ncfg=${#config_list[@]}
for round in $(seq "$rounds"); do
  for w in "${workload_list[@]}"; do
    for k in $(seq 0 $((ncfg - 1))); do
      c=${config_list[$(( (k + round - 1) % ncfg ))]}
      echo "overhead: round $round/$rounds, $w under $c" >&2
      tracer_start "$c"
      measure "$w" >"$WORK/measured"
      tracer_stop "$c" >"$WORK/counts"
      read -r value secs <"$WORK/measured"
      read -r events bytes lost <"$WORK/counts"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$w" "$c" "$value" "$secs" "$events" \
        "$bytes" "$lost" >>"$raw"
    done
  done
done
[[ -z $raw_out ]] || cp "$raw" "$raw_out"

python3 - "$raw" "$rounds" "${json_out:-}" <<'EOF'
import csv, json, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
rounds, json_out = int(sys.argv[2]), sys.argv[3]
higher_better = {"pgbench-select": True, "pgbench-rw": True, "pgbench-cpu": False,
                 "redis": True, "make": False, "syscalls": False, "unix-pingpong": True}
unit = {"pgbench-select": "tps", "pgbench-rw": "tps", "pgbench-cpu": "us/txn",
        "redis": "requests/s", "make": "s", "syscalls": "s", "unix-pingpong": "round trips/s"}
def num(x):
    try: return float(x)
    except ValueError: return None
summary = []
for w in dict.fromkeys(r["workload"] for r in rows):
    by = {}
    for r in rows:
        if r["workload"] == w: by.setdefault(r["config"], []).append(r)
    bare = statistics.median(num(r["value"]) for r in by["bare"]) if "bare" in by else None
    for c, rs in by.items():
        med = statistics.median(num(r["value"]) for r in rs)
        entry = {"workload": w, "config": c, "unit": unit[w], "median": med,
                 "values": [num(r["value"]) for r in rs]}
        if bare and c != "bare":
            entry["cost_percent"] = (100 * (1 - med / bare) if higher_better[w]
                                     else 100 * (med / bare - 1))
            # Each round against the bare run of the same round: on a machine whose speed
            # drifts over minutes (a VM's neighbours), the median of these paired costs moves
            # less than the cost of the two medians, and their quartiles show the spread.
            bare_of = {r["round"]: num(r["value"]) for r in by.get("bare", [])}
            paired = sorted(
                100 * (1 - num(r["value"]) / bare_of[r["round"]]) if higher_better[w]
                else 100 * (num(r["value"]) / bare_of[r["round"]] - 1)
                for r in rs if bare_of.get(r["round"]))
            if paired:
                entry["paired_cost_percent"] = statistics.median(paired)
                if len(paired) >= 4:
                    q = statistics.quantiles(paired, n=4)
                    entry["paired_cost_quartiles"] = [q[0], q[2]]
        ev = [num(r["events"]) / num(r["seconds"]) for r in rs if num(r["events"]) is not None]
        by_ = [num(r["ring_bytes"]) / num(r["seconds"]) for r in rs
               if num(r["ring_bytes"]) is not None]
        lost = [num(r["lost"]) for r in rs if num(r["lost"]) is not None]
        if ev: entry["events_per_s"] = statistics.median(ev)
        if by_: entry["bytes_per_s"] = statistics.median(by_)
        if lost: entry["lost"] = sum(lost)
        summary.append(entry)
print(f"| workload | configuration | median ({rounds} rounds) | cost vs bare | paired cost (quartiles) | events/s | bytes/s written | events lost |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for e in summary:
    cost = f"{e['cost_percent']:+.1f} %" if "cost_percent" in e else "—"
    paired = "—"
    if "paired_cost_percent" in e:
        paired = f"{e['paired_cost_percent']:+.1f} %"
        if "paired_cost_quartiles" in e:
            lo, hi = e["paired_cost_quartiles"]
            paired += f" ({lo:+.1f} .. {hi:+.1f})"
    ev = f"{e['events_per_s']:,.0f}" if "events_per_s" in e else "—"
    bps = f"{e['bytes_per_s'] / 1e6:,.2f} MB/s" if "bytes_per_s" in e else "—"
    lost = f"{e['lost']:,.0f}" if "lost" in e else "—"
    print(f"| {e['workload']} | {e['config']} | {e['median']:,.2f} {e['unit']} | {cost} | {paired} | {ev} | {bps} | {lost} |")
if json_out:
    json.dump({"rounds": rounds, "results": summary}, open(json_out, "w"), indent=2)
EOF
