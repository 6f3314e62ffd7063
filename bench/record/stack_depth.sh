#!/usr/bin/env bash
# How deep causeway's own user stacks are, frame pointers against DWARF unwinding, and what
# each costs (docs/latency.md, "Stacks from causeway's recorder"; bench/RESULTS.md):
# Debian's /usr/bin/python3 running a CPU loop that also makes syscalls, and gzip -6 of
# 20 MB, each run bare, under `causeway record --call-graph fp --sample HZ` and under
# `--call-graph dwarf --sample HZ`, alternated per repetition. Prints, per workload and
# mode, the median wall time of the program itself (from inside the recorded shell, so the
# recorder's start-up is not counted), the trace size, the share of sample stacks whose
# outermost frames reach the thread's start and their mean depth. Needs root.
set -euo pipefail
trap 'echo "stack_depth.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR

usage() {
  cat <<'EOF'
usage: bench/record/stack_depth.sh [options]
  --causeway PATH   the causeway binary (default $CAUSEWAY, else build/cli/causeway)
  --repeat N        alternated repetitions (default 5)
  --hz HZ           cpu-clock samples per second (default 999)
  --bytes N         stack bytes copied in dwarf mode (default 8192)
  --keep DIR        keep the traces of the last repetition in DIR
  --filtered        record only the program (--pid of an idle process, to which the
                    command is added), not the whole machine as `record -- CMD` does
EOF
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
causeway=${CAUSEWAY:-$repo/build/cli/causeway}
repeat=5
hz=999
bytes=8192
keep=""
filtered=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --causeway) causeway=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --hz) hz=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --filtered) filtered=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "stack_depth.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
pid_args=()
idle=""
if [[ $filtered == 1 ]]; then
  # An idle process to name with --pid: the recording is then filtered to it and the
  # command (and the command's children).
  sleep 100000 &
  idle=$!
  # First, as --pid=P: a --pid right before `--` takes the `--` as the end of its list
  # (CLI11), and the command's own options would then be read as causeway's.
  pid_args=("--pid=$idle")
fi
trap 'rm -rf "$work"; [[ -n $idle ]] && kill $idle 2>/dev/null; true' EXIT
# 20 MB that gzip -6 has work to do on: text with repeats, not random bytes.
python3 - "$work/input" <<'EOF'
import random, sys
random.seed(15)
words = [''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(random.randint(2, 9)))
         for _ in range(5000)]
with open(sys.argv[1], 'w') as f:
    n = 0
    while n < 20 * 1024 * 1024:
        line = ' '.join(random.choice(words) for _ in range(12)) + '\n'
        f.write(line)
        n += len(line)
EOF
cat >"$work/loop.py" <<'EOF'
import os
x = 0
for i in range(4_000_000):
    x += i * i % 7
    if i % 2000 == 0:
        os.stat('/')
        os.getppid()
EOF

declare -A cmd comm
cmd[python3]="/usr/bin/python3 $work/loop.py"
comm[python3]=python3
cmd[gzip]="/usr/bin/gzip -6 -c $work/input"
comm[gzip]=gzip
workloads=(python3 gzip)
modes=(bare fp dwarf)

# The program's own wall time in ms, from inside the (recorded) shell.
timed() {  # $1 workload, $2 ms file
  echo "s=\$EPOCHREALTIME; ${cmd[$1]} >/dev/null; e=\$EPOCHREALTIME; echo \$(( (\${e/./} - \${s/./}) / 1000 )) > $2"
}

declare -A times
for ((rep = 1; rep <= repeat; rep++)); do
  for w in "${workloads[@]}"; do
    for m in "${modes[@]}"; do
      ms="$work/ms"
      case $m in
        bare) bash -c "$(timed "$w" "$ms")" ;;
        fp | dwarf)
          graph=fp
          [[ $m == dwarf ]] && graph="dwarf,$bytes"
          "$causeway" record "${pid_args[@]}" -o "$work/$w-$m.cwt" --call-graph "$graph" --sample "$hz" \
            -- bash -c "$(timed "$w" "$ms")" 2>"$work/$w-$m.err" >/dev/null
          if grep -q 'no cpu-clock samples' "$work/$w-$m.err"; then
            grep 'no cpu-clock samples' "$work/$w-$m.err" >&2
            exit 1
          fi ;;
      esac
      times[$w-$m]+="$(cat "$ms") "
      echo "rep $rep $w $m $(cat "$ms") ms" >&2
    done
  done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Samples of the workload's process in the text form: the share whose stack (outermost
# first) reaches the thread's start, and the mean number of frames.
depth() {  # $1 trace, $2 comm
  "$causeway" convert "$1" -o "$work/t.txt" >/dev/null 2>&1
  # Two passes: the thread table first (a thread's last name wins: bash execs the program).
  awk -v comm="$2" '
    FNR == NR { if ($1 == "thread") for (i = 3; i <= NF; i++) if ($i ~ /^comm=/) name[$2] = substr($i, 6); next }
    $3 == "sample" && name[$2] == comm {
      n++; s = ""
      at = index($0, " stack=")  # the last field; quoted when a frame holds a space
      if (at) s = substr($0, at + 7)
      gsub(/"/, "", s)
      k = s == "" ? 0 : split(s, f, ";"); d += k
      for (j = 1; j <= k && j <= 3; j++) {
        fn = f[j]; sub(/@0x[0-9a-f]+$/, "", fn)
        if (fn ~ /^(main|__libc_start_call_main|__libc_start_main.*|_start|start_thread|clone3?)$/) { start++; break }
      }
    }
    END { if (n) printf "%d %.1f %.1f\n", n, 100 * start / n, d / n; else print "0 0 0" }' "$work/t.txt" "$work/t.txt"
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, kernel $(uname -r)"
echo "samples at $hz Hz, dwarf copies $bytes bytes; medians of $repeat runs (ms of the program's own wall time); $([[ $filtered == 1 ]] && echo "recording filtered to the program" || echo "recording the whole machine")"
printf '%-8s %-6s %10s %10s %9s %9s %10s\n' workload mode median_ms trace_KB samples reach_% depth
for w in "${workloads[@]}"; do
  for m in "${modes[@]}"; do
    med=$(echo "${times[$w-$m]}" | median)
    if [[ $m == bare ]]; then
      printf '%-8s %-6s %10s %10s %9s %9s %10s\n' "$w" "$m" "$med" - - - -
    else
      size=$(( $(stat -c %s "$work/$w-$m.cwt") / 1024 ))
      read -r n reach mean < <(depth "$work/$w-$m.cwt" "${comm[$w]}")
      printf '%-8s %-6s %10s %10s %9s %9s %10s\n' "$w" "$m" "$med" "$size" "$n" "$reach" "$mean"
    fi
  done
done
if [[ -n $keep ]]; then
  mkdir -p "$keep"
  cp "$work"/*.cwt "$keep"/
fi
