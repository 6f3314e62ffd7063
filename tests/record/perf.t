`perf record -g` recordings, read from `perf script` output by `causeway latency` and
`causeway convert` (docs/latency.md, "Existing recordings: perf"). Needs perf and root.

cw-prog-hotspot's main() calls fast_part(), which computes for ROUNDS rounds, then
slow_part(), which computes for 8 x ROUNDS (tests/programs/hotspot.c). Neither makes a
system call. The ground truth: slow_part is where the time goes, about eight times
fast_part's, each phase one continuous stretch (one instance), both called by main.

  $ perf record -q -g -e cpu-clock -F 999 -o $TMP_DIR/perf.data -- cw-prog-hotspot 2>/dev/null
  $ perf script -i $TMP_DIR/perf.data > $TMP_DIR/out.txt 2>/dev/null

The costliest context ends in slow_part, under main; the next ends in fast_part. perf's
default fields have no process ids: the reader says so.

  $ causeway latency $TMP_DIR/out.txt --comm cw-prog-hotspot --top 2
  .*/out.txt: note: perf script did not print process ids: each thread is taken for a process of its own \(perf script --show-task-events prints them\) (re)
  trace: [0-9]+ stacks on 1 thread, [0-9]+ frames \([0-9]+ without a symbol\), [0-9]+ contexts, [0-9]+ functions (re)
  costliest calling contexts (conservative: an instance ends at the last stack in its context); per function: distance from the costliest (0), own time
  #1  [0-9]+\.[0-9]{3} ms (re)
  .*\[cw-prog-hotspot\] .* (re)
  .* (re)
  .*main .* (re)
      0  slow_part  +[0-9]+\.[0-9]{3} ms (re)
  #2  [0-9]+\.[0-9]{3} ms (re)
  .*\[cw-prog-hotspot\] .* (re)
  .* (re)
  .*main .* (re)
      0  fast_part  +[0-9]+\.[0-9]{3} ms (re)

The same in numbers: each phase is one instance; slow_part's own time is several times
fast_part's (8 by construction; more than 4 leaves room for a loaded machine).

  $ causeway latency $TMP_DIR/out.txt --comm cw-prog-hotspot --json 2>/dev/null | jq -r '
  >   [.contexts[] | .frames[-1] | select(.function | endswith("_part"))] as $f
  >   | ($f[0].function, $f[0].instances, $f[1].function, $f[1].instances,
  >      ($f[0].own_ns > 4 * $f[1].own_ns))'
  slow_part
  1
  fast_part
  1
  true

`causeway convert` makes it a causeway trace; its analysis is the same.

  $ causeway convert $TMP_DIR/out.txt -o $TMP_DIR/perf.cwt 2>&1 | sed 's/^.*: note: .*/note/'
  note
  [0-9]+ events written to .*/perf.cwt \(binary form\) (re)
  $ diff <(causeway latency $TMP_DIR/out.txt --comm cw-prog-hotspot 2>/dev/null) <(causeway latency $TMP_DIR/perf.cwt --comm cw-prog-hotspot) && echo same
  same

A slow run and a normal one: SLOW_FACTOR 24 against 8. slow_part's context changed most;
fast_part did the same work in both. (After the changed contexts come those only in the
base run, such as a sample that happened to fall in the dynamic loader: not shown.)

  $ perf record -q -g -e cpu-clock -F 999 -o $TMP_DIR/base.data -- cw-prog-hotspot 8 2>/dev/null
  $ perf record -q -g -e cpu-clock -F 999 -o $TMP_DIR/slow.data -- cw-prog-hotspot 24 2>/dev/null
  $ perf script -i $TMP_DIR/base.data > $TMP_DIR/base.txt 2>/dev/null
  $ perf script -i $TMP_DIR/slow.data > $TMP_DIR/slow.txt 2>/dev/null
  $ causeway latency --base $TMP_DIR/base.txt --buggy $TMP_DIR/slow.txt --comm cw-prog-hotspot --top 1 2>/dev/null | sed -n 3,8p
  changed calling contexts (conservative: an instance ends at the last stack in its context); per function: distance from the costliest (0), own time in the slow run and in the base run
  #1  \+[0-9]+\.[0-9]{3} ms (re)
  .*\[cw-prog-hotspot\] .* (re)
  .* (re)
  .*main .* (re)
      0  slow_part  +[0-9]+\.[0-9]{3} ms  base +[0-9]+\.[0-9]{3} ms (re)

The slow run's slow_part grew by more than its base time (3 times the work: 2 times more),
and more than fast_part changed.

  $ causeway latency --base $TMP_DIR/base.txt --buggy $TMP_DIR/slow.txt --comm cw-prog-hotspot --json 2>/dev/null | jq -r '
  >   [.contexts[] | .frames[-1] | select(.function | endswith("_part"))] as $f
  >   | ($f[0].function, ($f[0].own_ns - $f[0].base_own_ns > $f[0].base_own_ns),
  >      ($f[0].own_ns - $f[0].base_own_ns > 4 * ($f[1].own_ns - $f[1].base_own_ns | if . < 0 then -. else . end)))'
  slow_part
  true
  true

DWARF call chains (`--call-graph dwarf`: perf copies 8 KiB of the user stack and unwinds
it with the CFI) give the same answer; with -F +pid the process ids are known, so there is
no note.

  $ perf record -q --call-graph dwarf -e cpu-clock -F 999 -o $TMP_DIR/dwarf.data -- cw-prog-hotspot 2>/dev/null
  $ perf script -F +pid -i $TMP_DIR/dwarf.data > $TMP_DIR/dwarf.txt 2>/dev/null
  $ causeway latency $TMP_DIR/dwarf.txt --comm cw-prog-hotspot --top 1 | tail -1
      0  slow_part  +[0-9]+\.[0-9]{3} ms (re)

Scheduler and system call tracepoints with stacks. In `cw-prog-spin sleep 100` the main
thread (cw-spinner) sleeps 1 ms at a time until cw-setter, after one 100 ms sleep, sets a
flag (tests/programs/spin.c). The ground truth: both threads spend about 100 ms in
clock_nanosleep, and each sleep is a switch_out in state S whose stack ends there.
`--show-task-events` gives the process ids (perf 6.1's `-F +pid` would drop the
tracepoints' call chains), so both threads hang under their process's frame.

  $ perf record -q -g -e sched:sched_switch -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -o $TMP_DIR/spin.data -- cw-prog-spin sleep 100 2>/dev/null
  $ perf script --show-task-events -i $TMP_DIR/spin.data > $TMP_DIR/spin.txt 2>/dev/null
  $ causeway convert $TMP_DIR/spin.txt -o $TMP_DIR/spin.trace --to text
  [0-9]+ events written to .*/spin.trace \(text form\) (re)
  $ grep -c ' switch_out .*state=S stack=.*;clock_nanosleep@' $TMP_DIR/spin.trace | awk '{print ($1 > 50) ? "more than 50" : $1}'
  more than 50
  $ causeway latency $TMP_DIR/spin.txt --json | jq -c '[.trace.threads, [.contexts[:2][] | [.frames[0].function, .frames[-1].function, .frames[-1].own_ns > 90000000]]]'
  [2,[["[cw-spinner]","clock_nanosleep",true],["[cw-spinner]","clock_nanosleep",true]]]
