#!/usr/bin/env bash
# What each of the recorder's kernel programs costs a run under pgbench -S, and what a change
# to them saves, from the kernel's own count of their run time (kernel.bpf_stats_enabled)
# rather than from the throughput, which on a VM drifts by more than the programs cost
# (bench/README.md, "The programs' own cost"). With --against, the two builds record at once,
# so that both see the same events on the same machine at the same speed: every tracepoint
# runs both programs, one after the other. The second finds the kernel's lines the first
# touched already in the cache and runs 25-40 % faster, so each round runs them in both
# orders and the ratio given is the one with that bias taken out.
set -euo pipefail

usage() {
  cat <<'EOF2'
usage: bench/overhead/programs.sh [options]
  --causeway PATH   the causeway binary (default $CAUSEWAY, else build/cli/causeway)
  --against PATH    a second binary (the change) measured against the first, side by side
  --seconds S       each pgbench run's length (default 15)
  --rounds N        rounds (default 2; with --against each round is two runs, both orders)
  --json FILE       also write the figures as JSON
Needs root, PostgreSQL and pgbench (tests/real/install.sh).
EOF2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
first=${CAUSEWAY:-$repo/build/cli/causeway}
second=""
seconds=15
rounds=2
json_out=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --causeway) first=$2; shift 2 ;;
    --against) second=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "programs: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
fail() { echo "programs: $*" >&2; exit 2; }
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 5 ]] || fail "--seconds needs 5 or more, got '$seconds'"
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 1 ]] || fail "--rounds needs 1 or more, got '$rounds'"
[[ -x $first ]] || fail "no causeway binary at '$first' (--causeway)"
[[ -z $second || -x $second ]] || fail "no causeway binary at '$second' (--against)"
[[ $(id -u) == 0 ]] || fail "needs root (the recorder, kernel.bpf_stats_enabled)"
command -v bpftool >/dev/null || fail "needs bpftool"

. "$repo/tests/real/lib.sh"
pgbench_database

stats_before=$(sysctl -n kernel.bpf_stats_enabled)
running_bin=() running_dir=()  # each recorder started and not stopped yet
finish() {
  local i
  for i in "${!running_bin[@]}"; do
    "${running_bin[$i]}" record stop --dir "${running_dir[$i]}" >/dev/null 2>&1 || true
  done
  sysctl -q kernel.bpf_stats_enabled="$stats_before" || true
  cleanup
}
trap finish EXIT

# One run: the binaries given record at once, in that order (each one's programs are those
# that appeared as it started); the run's folder goes to `dirs`.
dirs=()
measure() {
  local dir="$WORK/run${#dirs[@]}" i=0 bin
  mkdir "$dir"
  for bin in "$@"; do
    i=$((i + 1))
    bpftool -j prog show >"$dir/before$i.json"
    "$bin" record start --dir "$dir/recorder$i" >"$dir/start$i.log" 2>&1 ||
      die "record start failed ($bin): $(tail -3 "$dir/start$i.log")"
    running_bin+=("$bin")
    running_dir+=("$dir/recorder$i")
    bpftool -j prog show >"$dir/after$i.json"
  done
  sleep 1
  sysctl -q kernel.bpf_stats_enabled=1
  bpftool -j prog show >"$dir/stats0.json"
  "${pgbench[@]}" -S -c 4 -j 2 -T "$seconds" -n postgres >"$dir/pgbench.log" 2>&1 ||
    die "pgbench failed: $(tail -3 "$dir/pgbench.log")"
  bpftool -j prog show >"$dir/stats1.json"
  sysctl -q kernel.bpf_stats_enabled=0
  for ((i = $#; i >= 1; i--)); do
    "${!i}" record stop --dir "$dir/recorder$i" >"$dir/stop$i.log" 2>&1 ||
      die "record stop failed: $(tail -3 "$dir/stop$i.log")"
  done
  running_bin=() running_dir=()  # (a stop that failed above is tried again on the way out)
  dirs+=("$dir")
}

for ((r = 1; r <= rounds; r++)); do
  if [[ -n $second ]]; then
    echo "programs: round $r of $rounds: $seconds s each way" >&2
    measure "$first" "$second"
    measure "$second" "$first"
  else
    echo "programs: round $r of $rounds: $seconds s" >&2
    measure "$first"
  fi
done

python3 - "$seconds" "${second:+paired}" "${json_out:-}" "${dirs[@]}" <<'EOF2'
import json, math, os, re, statistics, sys
seconds, paired, json_out, dirs = float(sys.argv[1]), sys.argv[2] == "paired", sys.argv[3], sys.argv[4:]

def load(path):
    return {p["id"]: p for p in json.load(open(path))}

def run_figures(d):
    """Per recorder (1, 2), per program name: (runs, run time ns)."""
    n = len([f for f in os.listdir(d) if re.fullmatch(r"after\d+\.json", f)])
    owners = {}
    for i in range(1, n + 1):
        for pid in set(load(f"{d}/after{i}.json")) - set(load(f"{d}/before{i}.json")):
            owners[pid] = i
    s0, s1 = load(f"{d}/stats0.json"), load(f"{d}/stats1.json")
    figures = {i: {} for i in range(1, n + 1)}
    for pid, p in s1.items():
        if pid not in owners or pid not in s0 or "run_cnt" not in p:
            continue
        runs = p["run_cnt"] - s0[pid].get("run_cnt", 0)
        ns = p["run_time_ns"] - s0[pid].get("run_time_ns", 0)
        figures[owners[pid]][p.get("name", str(pid))] = (runs, ns)
    return figures

def per_run(f, name):
    runs, ns = f.get(name, (0, 0))
    return ns / runs if runs else None

# The programs that ran enough to matter: a thousand runs a second.
results = []
if not paired:
    rows = {}
    for d in dirs:
        for name, (runs, ns) in run_figures(d)[1].items():
            rows.setdefault(name, []).append((runs / seconds, ns / runs if runs else 0,
                                              100 * ns / seconds / 1e9 / os.cpu_count()))
    print(f"| program | runs a second | ns a run (median of {len(dirs)}) | share of the CPUs |")
    print("| --- | ---: | ---: | ---: |")
    for name, r in sorted(rows.items(), key=lambda kv: -statistics.median(x[2] for x in kv[1])):
        if statistics.median(x[0] for x in r) < 1000:
            continue
        e = {"program": name, "runs_per_second": statistics.median(x[0] for x in r),
             "ns_per_run": statistics.median(x[1] for x in r),
             "cpu_percent": statistics.median(x[2] for x in r)}
        results.append(e)
        print(f"| {name} | {e['runs_per_second']:,.0f} | {e['ns_per_run']:,.0f} | "
              f"{e['cpu_percent']:.2f} % |")
    total = sum(e["cpu_percent"] for e in results)
    print(f"\nthese together: {total:.2f} % of the machine's {os.cpu_count()} CPUs "
          "(each run's count includes the stats' own two clock reads)")
else:
    # Round r: dirs[2r] ran first then against; dirs[2r+1] the other way round. With k the
    # speed-up of running second and a, b the two builds' costs: (b2/a1) = k b/a and
    # (a2/b1) = k a/b, so b/a = sqrt((b2/a1) / (a2/b1)).
    rows = {}
    for r in range(0, len(dirs), 2):
        f_ab, f_ba = run_figures(dirs[r]), run_figures(dirs[r + 1])
        for name in f_ab[1]:
            a1, b2 = per_run(f_ab[1], name), per_run(f_ab[2], name)
            b1, a2 = per_run(f_ba[1], name), per_run(f_ba[2], name)
            if None in (a1, b2, b1, a2) or f_ab[1][name][0] < 1000 * seconds:
                continue
            rows.setdefault(name, []).append((f_ab[1][name][0] / seconds, a1, a2, b1, b2,
                                              math.sqrt((b2 / a1) / (a2 / b1)),
                                              math.sqrt((b2 / a1) * (a2 / b1))))
    print("| program | runs a second | ns a run, first build (first, second) | "
          "the change (first, second) | change / first build | second place / first |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, r in sorted(rows.items(), key=lambda kv: -kv[1][0][0] * kv[1][0][1]):
        med = [statistics.median(x[i] for x in r) for i in range(7)]
        ratios = ", ".join(f"{x[5]:.2f}" for x in r)
        e = {"program": name, "runs_per_second": med[0], "first_build_ns": [med[1], med[2]],
             "change_ns": [med[3], med[4]], "ratio": med[5],
             "ratio_per_round": [x[5] for x in r], "second_place_speedup": med[6]}
        results.append(e)
        print(f"| {name} | {med[0]:,.0f} | {med[1]:,.0f}, {med[2]:,.0f} | {med[3]:,.0f}, "
              f"{med[4]:,.0f} | **{med[5]:.2f}** ({ratios}) | {med[6]:.2f} |")
    print("\nratios are medians of the rounds (each round's in brackets): below 1 the change "
          "costs less")
if json_out:
    json.dump({"seconds": seconds, "runs": len(dirs), "paired": paired,
               "programs": results}, open(json_out, "w"), indent=2)
EOF2
