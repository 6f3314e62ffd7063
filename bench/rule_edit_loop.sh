#!/usr/bin/env bash
# The rule edit loop: what a user pays to see the diagnosis again after
# writing a rule. On the synthetic trace (generated once, cached as bench/run.sh does),
# R times: a cold `causeway debug --auto` with a pack of no rules and no derived cache
# beside the trace (docs/cache.md: the run makes it); add a rule to the pack, debug;
# change the rule, debug; remove it, debug (the cold run's graph, from the cache); debug
# again with nothing changed. Each step is one `causeway` process, timed end to end
# (process start to report) with /usr/bin/time: wall seconds and peak RSS; it starts once
# the copies of the run before that save its graph have ended (a user edits a rule for
# longer), and the time waited for them is shown apart. Then R times
# each: `causeway graph` with no cache beside the trace (the first graph, in events/s) and `cat` of the trace
# (the floor of reading it). Then the same edits under one `causeway debug --watch
# --json`, each timed from saving the pack to its report. Prints Markdown tables of
# medians, the targets (re-run ≤ 1 s, first graph ≥ 5 M events/s, first debug ≤ 5 s, peak
# RSS ≤ 1.5 GiB) as met or missed, and whether the report after the
# removal equals the cold one.
#
#   bench/rule_edit_loop.sh [--events N] [--seed S] [--repeat R] [--hang auto|TID@SECONDS]
#                           [--flush]
#
# --flush: each step also waits for the kernel to have written every file left in the
# page cache (`sync`, in the time waited). The copy that saves a graph writes the run's
# large entries out itself (docs/cache.md); before it did, the step right after the saves
# was slower and varied more on the VM of bench/RESULTS.md.
#
# Defaults: N 1000000 (--events 19000000 for full scale), S 1, R 5, --hang auto.
# Environment: CW_BENCH_BUILD (build dir, default build-release: configured Release and
# built when it has no causeway), CW_BENCH_CACHE (trace cache, default
# ~/.cache/causeway-bench), CW_BENCH_JOBS (ninja -j, default 2).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${CW_BENCH_BUILD:-$root/build-release}
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
events=1000000
seed=1
repeat=5
hang=auto
flush=no
while (($#)); do
  case $1 in
    --events) events=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --hang) hang=$2; shift 2 ;;
    --flush) flush=yes; shift ;;
    -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "rule_edit_loop.sh: unknown argument '$1' (--help)" >&2; exit 1 ;;
  esac
done

bench_build "$root" "$build"
causeway=$build/cli/causeway
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")
build_type=${build_type:-RelWithDebInfo (the default)}

trace=$(bench_trace "$root" "$build" "$events" "$seed")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pack=$work/edit/pack.cw
mkdir -p "$work/edit" "$work/reports"

# The pack before and after the edits. The rule says a thread's wait in recvmsg is its
# loop's idle wait, not a hang (a `split ... loop`, as a user writes for a server): it
# changes where threads' segments are cut and which threads are loop threads, and so can
# change the hang --hang auto picks (it does at 1 M events). The change narrows it to descriptors other than 6 (the synthetic
# shell's socket): another cut, another report.
header='pack bench.edit {
  version "0.1.0"
  requires linux.kernel
}
'
added='
split recvmsg.idle {
  at syscall_enter
  where name == "recvmsg"
  neighbour weak
  loop
}
'
changed='
split recvmsg.idle {
  at syscall_enter
  where name == "recvmsg" and fd != 6
  neighbour weak
  loop
}
'

steps=(cold add change remove again)
declare -A walls rss cpus

# timed STEP REPORT -- CMD...: runs CMD with its output in REPORT, records wall s, peak RSS
# and CPU s (user + system: on a shared machine wall time also counts waiting for a CPU).
timed() {
  local step=$1 out=$2; shift 3
  if ! /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$@" >"$out" 2>"$work/err"; then
    echo "rule_edit_loop.sh: step '$step' failed: $*" >&2
    cat "$work/err" >&2
    exit 1
  fi
  local w m u k
  read -r w m u k < <(tail -1 "$work/time")
  cpus[$step]+="$(awk -v u="$u" -v k="$k" 'BEGIN {print u + k}') "
  walls[$step]+="$w "
  rss[$step]+="$m "
}


# A run saves what it built in a copy of itself after its report (docs/cache.md): the
# cold run's 2 GB take ~0.7 s more. A user writes the rule for longer than that, so each
# step starts when the copies of the run before have ended (what they saved is the
# cache the step meets); the time waited for them is shown apart.
declare -A waits
settle() {  # STEP [PID]: waits for the background saves (this build's debug and graph runs, or PID's children)
  local step=$1 t0=$EPOCHREALTIME
  if [[ -n ${2:-} ]]; then
    while pgrep -P "$2" >/dev/null; do sleep 0.02; done
  else
    while pgrep -f -- "^$causeway (debug|graph) " >/dev/null; do sleep 0.02; done
  fi
  if [[ $flush == yes ]]; then sync; fi
  waits[$step]+="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}') "
}

debug=("$causeway" debug "$trace" --rules "$work/edit" --auto --hang "$hang")
same=yes add_differs=no change_differs=no
for ((r = 1; r <= repeat; r++)); do
  echo "repetition $r of $repeat ..." >&2
  printf '%s' "$header" >"$pack"
  # Cold: no derived cache beside the trace (docs/cache.md); this run makes it.
  rm -rf "$trace.cwcache"
  timed cold "$work/reports/cold.$r" -- "${debug[@]}"
  printf '%s%s' "$header" "$added" >"$pack"
  settle add
  timed add "$work/reports/add.$r" -- "${debug[@]}"
  printf '%s%s' "$header" "$changed" >"$pack"
  settle change
  timed change "$work/reports/change.$r" -- "${debug[@]}"
  printf '%s' "$header" >"$pack"
  settle remove
  timed remove "$work/reports/remove.$r" -- "${debug[@]}"
  settle again
  timed again "$work/reports/again.$r" -- "${debug[@]}"
  cmp -s "$work/reports/cold.$r" "$work/reports/again.$r" || same=no
  cmp -s "$work/reports/cold.$r" "$work/reports/remove.$r" || same=no
  cmp -s "$work/reports/cold.$r" "$work/reports/add.$r" || add_differs=yes
  cmp -s "$work/reports/add.$r" "$work/reports/change.$r" || change_differs=yes
done
for ((r = 1; r <= repeat; r++)); do
  settle graph  # (the last run's save, still writing into the folder removed here)
  rm -rf "$trace.cwcache"  # the first graph of the trace
  timed graph "$work/reports/graph" -- "$causeway" graph "$trace"
  timed cat "$work/reports/cat" -- cat "$trace"
done

# The same edits under one `causeway debug --watch --json` (docs/diagnosis.md): the trace is
# read once; each edit is timed from writing the pack to its JSON line, the 100 ms the
# watch lets a burst of saves settle included. The lines come through a FIFO, so the
# script wakes when one is written (polling a file cost ~0.2 s a step on this machine).
# The first line is the cold run.
printf '%s' "$header" >"$pack"
settle graph  # (the last graph run's save)
rm -rf "$trace.cwcache"
mkfifo "$work/watch.fifo"
t0=$EPOCHREALTIME
"$causeway" debug "$trace" --rules "$work/edit" --hang "$hang" --watch --json \
  >"$work/watch.fifo" 2>"$work/watch.err" &
wpid=$!
exec 3<"$work/watch.fifo"
declare -A watch_walls
next_line() {  # waits for the watch's next line, appends it to watch.out
  local line
  if ! IFS= read -r line <&3; then
    echo "rule_edit_loop.sh: the --watch run ended:" >&2
    cat "$work/watch.err" >&2
    exit 1
  fi
  printf '%s\n' "$line" >>"$work/watch.out"
}
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}'; }
next_line
watch_walls[cold]=$(since "$t0")
watch_same=yes
for ((r = 1; r <= repeat; r++)); do
  for step in add change remove; do
    # Each repetition's added and changed packs differ by a comment (another pack text:
    # another graph key), so every add and change builds a graph, as the first did; the
    # removal finds the first run's graph.
    case $step in
      add) content="$header# repetition $r"$'\n'"$added" ;;
      change) content="$header# repetition $r"$'\n'"$changed" ;;
      remove) content=$header ;;
    esac
    settle "watch $step" "$wpid"
    t0=$EPOCHREALTIME
    printf '%s' "$content" >"$pack"
    next_line
    watch_walls[$step]+="$(since "$t0") "
  done
  # The report after the removal, as the first one (the run's number and files aside).
  cmp -s <(sed -n 1p "$work/watch.out" | jq -S 'del(.watch)') \
    <(tail -1 "$work/watch.out" | jq -S 'del(.watch)') || watch_same=no
done
watch_rss=$(awk '/^VmHWM/ {print $2}' "/proc/$wpid/status")
kill -INT "$wpid"
watch_status=0
wait "$wpid" || watch_status=$?
exec 3<&-

echo "## Rule edit loop"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, commit $(git -C "$root" rev-parse --short HEAD), $build_type build, load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "\`bench/rule_edit_loop.sh --events $events --seed $seed --repeat $repeat --hang $hang$([[ $flush == yes ]] && echo ' --flush')\`: $(basename "$trace") ($(du -m "$trace" | cut -f1) MiB)"
echo
echo "| step | wall s (median of $repeat) | min | max | CPU s (median) | peak RSS MiB (median) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for step in "${steps[@]}" graph cat; do
  case $step in
    cold) what="cold \`causeway debug --auto\`" ;;
    add) what="add a rule, debug" ;;
    change) what="change the rule, debug" ;;
    remove) what="remove the rule, debug" ;;
    again) what="debug again, nothing changed" ;;
    graph) what="first \`causeway graph\` (no cache yet)" ;;
    cat) what="\`cat\` of the trace" ;;
  esac
  w=$(median <<<"${walls[$step]}")
  printf '| %s | %.2f | %.2f | %.2f | %.2f | %.0f |\n' "$what" "$w" "$(minimum <<<"${walls[$step]}")" \
    "$(maximum <<<"${walls[$step]}")" "$(median <<<"${cpus[$step]}")" "$(awk -v k="$(median <<<"${rss[$step]}")" 'BEGIN {print k / 1024}')"
done
echo
echo "Each step starts when the run before it has ended its background saves$([[ $flush == yes ]] && echo ' and the kernel has written what they saved (--flush)') (the time waited, not in the table, median and max: $(for step in add change remove again; do printf '%s %.2f/%.2f s; ' "$step" "$(median <<<"${waits[$step]}")" "$(maximum <<<"${waits[$step]}")"; done | sed 's/; $//'))."
echo
echo "Under one \`causeway debug --watch --json\` (the trace read once; from saving the pack to its report, with the watch's 100 ms settle, each edit made once the copies saving the last run's graph have ended; peak RSS of the whole session: $(awk -v k="$watch_rss" 'BEGIN {printf "%.0f", k / 1024}') MiB; exit status at SIGINT: $watch_status):"
echo
echo "| step | wall s (median of $repeat) | min | max |"
echo "| --- | ---: | ---: | ---: |"
for step in cold add change remove; do
  case $step in
    cold) what="first run (reads the trace, once)" ;;
    add) what="add a rule" ;;
    change) what="change the rule" ;;
    remove) what="remove the rule" ;;
  esac
  printf '| %s | %.2f | %.2f | %.2f |\n' "$what" "$(median <<<"${watch_walls[$step]}")" \
    "$(minimum <<<"${watch_walls[$step]}")" "$(maximum <<<"${watch_walls[$step]}")"
done
echo

graph_wall=$(median <<<"${walls[graph]}")
rerun=$(median <<<"${walls[add]} ${walls[change]}")
rerun_hit=$(median <<<"${walls[remove]} ${walls[again]}")
watch_rerun=$(median <<<"${watch_walls[add]} ${watch_walls[change]}")
watch_hit=$(median <<<"${watch_walls[remove]}")
first=$(median <<<"${walls[cold]}")
peak=$(maximum <<<"${rss[cold]} ${rss[add]} ${rss[change]} ${rss[remove]} ${rss[again]}")
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN {ok = (op == "le") ? v <= t : v >= t; print ok ? "met" : "missed"}'; }
eps=$(awk -v n="$events" -v s="$graph_wall" 'BEGIN {printf "%.2f", (s > 0) ? n / s / 1e6 : 0}')
peak_mib=$(awk -v k="$peak" 'BEGIN {printf "%.0f", k / 1024}')
echo "The derived cache beside the trace after the last step: $(du -sm "$trace.cwcache" 2>/dev/null | cut -f1 || echo 0) MiB."
echo
echo "The edit loop's targets at $events events:"
echo
echo "- re-run after adding or changing a rule ≤ 1 s: $(printf '%.2f' "$rerun") s (median of add and change: a graph not in the cache) — $(verdict "$rerun" 1 le); under --watch $(printf '%.2f' "$watch_rerun") s (add and change, each a graph not in the cache) — $(verdict "$watch_rerun" 1 le), removing it $(printf '%.2f' "$watch_hit") s — $(verdict "$watch_hit" 1 le)"
echo "- re-run of packs already diagnosed (remove the rule, debug again): $(printf '%.2f' "$rerun_hit") s (the graph from the cache) — $(verdict "$rerun_hit" 1 le)"
echo "- first \`causeway graph\` ≥ 5 M events/s: $eps M events/s — $(verdict "$eps" 5 ge)"
echo "- first \`causeway debug\` ≤ 5 s: $(printf '%.2f' "$first") s — $(verdict "$first" 5 le)"
# (In MiB, unrounded: 1537 MiB would print as 1.50 GiB and pass.)
echo "- peak RSS of \`causeway debug\` ≤ 1.5 GiB (1536 MiB): $peak_mib MiB, the most of any step — $(verdict "$(awk -v k="$peak" 'BEGIN {print k / 1024}')" 1536 le)"
echo
echo "The hang diagnosed cold: $(grep -m1 '^hang:' "$work/reports/cold.1" || echo '(none: no hang found)'); with the added rule: $(grep -m1 '^hang:' "$work/reports/add.1" || echo '(none: no hang found)')."
echo "The added rule changed the report: $add_differs; changing the rule changed it again: $change_differs."
if [[ $same == yes ]]; then
  echo "The report after removing the rule equals the cold one in all $repeat repetitions."
else
  echo "The report after removing the rule DIFFERS from the cold one (diff of the last repetition):"
  diff "$work/reports/cold.$repeat" "$work/reports/remove.$repeat" | head -20 || true
  exit 1
fi
if [[ $watch_same == yes ]]; then
  echo "Under --watch, the report after each removal equals the first run's."
else
  echo "Under --watch, the report after a removal DIFFERS from the first run's."
  exit 1
fi
