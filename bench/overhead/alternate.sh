#!/usr/bin/env bash
# The always-on recorder's cost under pgbench -S, measured within one run (bench/README.md,
# "Alternating within a run"). On a VM the machine's speed drifts by more than the recorder
# costs from one minute to the next, and run.sh's rounds, each a start and a stop of the
# recorder a minute apart, spread their paired costs over ±10 points. Here one recorder runs
# throughout (`record start`, the defaults) and attaches and detaches its hot programs every
# few seconds ($CAUSEWAY_BENCH_ALTERNATE, recorder/bench_alternation.h) while one long
# pgbench run reports its throughput every second; each stretch is compared with the
# stretches with none of them attached on either side of it. The recorder's own process runs
# throughout, so its CPU is not in these figures: it is reported beside them.
set -euo pipefail

usage() {
  cat <<'EOF2'
usage: bench/overhead/alternate.sh [options]
  --causeway PATH   the causeway binary (default $CAUSEWAY, else build/cli/causeway)
  --seconds S       the pgbench run's length (default 480)
  --period P        each stretch's length in seconds (default 4)
  --states LIST     the stretches' states in turn, of all (every program), scheduler (not
                    the socket programs), sockets (not the scheduler's), none (default
                    all,scheduler,none)
  --skip S          seconds after each switch left out of its stretch (default 1)
  --json FILE       also write the summary as JSON
Needs root and PostgreSQL (tests/real/install.sh).
EOF2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
causeway=${CAUSEWAY:-$repo/build/cli/causeway}
seconds=480
period=4
states=all,scheduler,none
skip=1
json_out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --causeway) causeway=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --period) period=$2; shift 2 ;;
    --states) states=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "alternate: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
fail() { echo "alternate: $*" >&2; exit 2; }
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 30 ]] || fail "--seconds needs 30 or more, got '$seconds'"
[[ $period =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "--period needs a number of seconds, got '$period'"
[[ $skip =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "--skip needs a number of seconds, got '$skip'"
[[ $states == *none* ]] || fail "--states needs 'none' among them: the stretches are compared with it"
[[ $(id -u) == 0 ]] || fail "needs root (the recorder)"

. "$repo/tests/real/lib.sh"
pgbench_database

recorder_dir="$WORK/recorder"
CAUSEWAY_BENCH_ALTERNATE="$period:$states" "$causeway" record start --dir "$recorder_dir" \
  >"$WORK/start.log" 2>&1 || die "record start failed: $(cat "$WORK/start.log")"
sleep 2
read -r recorder_pid _ <"$recorder_dir/recorder.pid" || die "the recorder wrote no pid file"  # "PID START"
# The recorder's user and system ticks; a recorder gone is an error, not 0 % of the CPU.
ticks() {
  awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null ||
    die "the recorder (pid $1) is not running: $(tail -3 "$recorder_dir/recorder.log")"
}
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
r0=$(ticks "$recorder_pid"); m0=$(machine_ticks)
echo "alternate: pgbench -S for $seconds s, the programs switched every $period s ($states)" >&2
"${pgbench[@]}" -S -c 4 -j 2 -T "$seconds" -P 1 --progress-timestamp -n postgres \
  >"$WORK/out" 2>"$WORK/progress" || die "pgbench failed: $(tail -3 "$WORK/out")"
r1=$(ticks "$recorder_pid"); m1=$(machine_ticks)
"$causeway" record stop --dir "$recorder_dir" >"$WORK/stop.log" 2>&1 ||
  die "record stop failed: $(cat "$WORK/stop.log")"
grep 'bench alternation:' "$recorder_dir/recorder.log" >"$WORK/switches" ||
  die "the recorder logged no switch: $(tail -3 "$recorder_dir/recorder.log")"

python3 - "$WORK/progress" "$WORK/switches" "$skip" "$((r1 - r0))" "$((m1 - m0))" \
  "${json_out:-}" <<'EOF2'
import json, re, statistics, sys
progress, switches, skip = sys.argv[1], sys.argv[2], float(sys.argv[3])
recorder_ticks, machine_ticks, json_out = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
# pgbench's reports: the second ending at each timestamp
tps = [(float(m.group(1)), float(m.group(2))) for m in
       (re.match(r"progress: ([\d.]+) s, ([\d.]+) tps", l) for l in open(progress)) if m]
switch = [(float(w[-2]), w[-1]) for w in (l.split() for l in open(switches))]
# A stretch: the seconds wholly inside it, `skip` after its switch left out.
stretches = []
for i, (at, state) in enumerate(switch):
    until = switch[i + 1][0] if i + 1 < len(switch) else float("inf")
    values = [v for end, v in tps if end - 1 >= at + skip and end <= until]
    if values:
        stretches.append((state, statistics.mean(values)))
costs = {}
for i, (state, value) in enumerate(stretches):
    if state == "none":
        continue
    before = next((v for s, v in reversed(stretches[:i]) if s == "none"), None)
    after = next((v for s, v in stretches[i + 1:] if s == "none"), None)
    if before is None or after is None:
        continue
    costs.setdefault(state, []).append(100 * (1 - value / ((before + after) / 2)))
if not costs:
    sys.exit("alternate: too few stretches to compare (a longer --seconds?)")
bare = [v for s, v in stretches if s == "none"]
print(f"| state | stretches | cost against the stretches beside it: median | mean | quartiles |")
print("| --- | ---: | ---: | ---: | ---: |")
summary = []
for state, c in costs.items():
    q = statistics.quantiles(c, n=4) if len(c) >= 4 else [float("nan")] * 3
    e = {"state": state, "stretches": len(c), "median_cost_percent": statistics.median(c),
         "mean_cost_percent": statistics.mean(c), "quartiles": [q[0], q[2]]}
    summary.append(e)
    print(f"| {state} | {len(c)} | {e['median_cost_percent']:+.1f} % | {e['mean_cost_percent']:+.1f} % "
          f"| {q[0]:+.1f} .. {q[2]:+.1f} |")
share = 100 * recorder_ticks / machine_ticks if machine_ticks else float("nan")
print(f"\nbare stretches: median {statistics.median(bare):,.0f} tps (from {min(bare):,.0f} to "
      f"{max(bare):,.0f}); the recorder's own process: {share:.2f} % of the machine's CPU "
      "(not in the costs above)")
if json_out:
    json.dump({"results": summary, "bare_tps_median": statistics.median(bare),
               "recorder_cpu_percent": share}, open(json_out, "w"), indent=2)
EOF2
