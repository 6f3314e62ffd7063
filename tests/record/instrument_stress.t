Instrumentation never changes what a program does. cw-prog-hookstress
(tests/programs/hookstress.c, built with AddressSanitizer) runs 8 threads that call the
functions tests/record/packs/stress.cw names and add to the flag it declares, while
another thread signals them one by one (the handler calls a hooked function too) and
another forks children, half of which exec the program again; at the end the process
execs itself, and that image exits 3. Its output does not depend on timing, so each
instrumented run must print exactly what a plain run prints, and exit 3 as well.

A plain run:

  $ cw-prog-hookstress 300 >$TMP_DIR/stress-plain.out 2>&1; echo "exit $?"; sed -E 's/[0-9a-f]{16}/CHECKSUM/g' $TMP_DIR/stress-plain.out
  exit 3
  workers: 8 x 300 rounds x 200 calls, 0 wrong, checksum CHECKSUM
  flag: 2400
  signals: 40 sent, 40 handled, 0 wrong in the handler
  children: 10 forked, 10 exec'd, all exited as expected
  final: ok (CHECKSUM)

The instrumentation going in and out while it runs: recordings of the running process
one after another (--pid, 0.3 s each), each attaching uprobes to the functions and either
a hardware watchpoint on the flag (`--flags auto`: where this machine's watchpoints do not
fire, it says so and probes instead) or uprobes on the instructions that access it, and
taking them all away when it stops (a recording that fails because the process ended
while it started is no failure: the loop looks before each one, not during it):

  $ cw-prog-hookstress 300 >$TMP_DIR/stress-pid.out 2>&1 & p=$!; sleep 0.2; i=0
  > while kill -0 $p 2>/dev/null && [ $i -lt 30 ]; do i=$((i + 1))
  >   if [ $((i % 2)) = 1 ]; then flags=probe; else flags=auto; fi
  >   causeway record --rules tests/record/packs/stress.cw --pid $p --flags $flags --hooks uprobe --duration 0.3 -o $TMP_DIR/stress-pid-$i.cwt >>$TMP_DIR/stress-pid.log 2>&1 || { kill -0 $p 2>/dev/null && { echo "record $i failed"; tail -3 $TMP_DIR/stress-pid.log; }; }
  > done; wait $p; echo "exit $?"; [ $i -ge 3 ] && echo "at least 3 recordings"
  > cmp $TMP_DIR/stress-plain.out $TMP_DIR/stress-pid.out && echo "output unchanged"
  exit 3
  at least 3 recordings
  output unchanged

They did instrument it: function entries and flag accesses were recorded, and the
instructions uprobes cannot run (the workers' `lock add`) were left out and said rather
than failing the recording:

  $ n=0; for f in $TMP_DIR/stress-pid-*.cwt; do causeway convert $f --to text -o $f.txt >/dev/null 2>&1; done
  > cat $TMP_DIR/stress-pid-*.cwt.txt | awk '$3 == "call_enter" && /fn=stress_work/ {c++} $3 ~ /^flag_/ {f++} END {print "calls:", (c > 1000), "flag accesses:", (f > 10)}'
  calls: 1 flag accesses: 1
  $ echo "$(grep -c 'hardware watchpoint (reads and writes) on stress_flag' $TMP_DIR/stress-pid.log) $(grep -c "hardware watchpoints do not fire (a self-test counted 0 of [0-9]* writes); data flags are traced with instruction probes instead" $TMP_DIR/stress-pid.log)" | awk '{ print ($1 > 0 || $2 > 0) ? "watched, or probed saying why" : "neither" }'
  watched, or probed saying why
  $ grep -o 'instructions with a lock prefix not probed (uprobes cannot run them), so the accesses they make are missed: --flags watch traces them' $TMP_DIR/stress-pid.log | sort -u
  instructions with a lock prefix not probed (uprobes cannot run them), so the accesses they make are missed: --flags watch traces them

In-process hooks from the start (`record -- CMD` puts the hook library in LD_PRELOAD,
which an ASan program refused before: "ASan runtime does not come first in initial
library list", exit 1): the forked and exec'd children are hooked too.

  $ causeway record --rules tests/record/packs/stress.cw --hooks inline -o $TMP_DIR/stress-inline.cwt -- cw-prog-hookstress 300 >$TMP_DIR/stress-inline.out 2>$TMP_DIR/stress-inline.log; echo "exit $?"
  > cmp $TMP_DIR/stress-plain.out $TMP_DIR/stress-inline.out && echo "output unchanged" || grep -v "hooked at" $TMP_DIR/stress-inline.log; grep -o 'the command exited with status 3' $TMP_DIR/stress-inline.log
  exit 0
  output unchanged
  the command exited with status 3
  $ causeway convert $TMP_DIR/stress-inline.cwt --to text -o $TMP_DIR/stress-inline.txt >/dev/null 2>&1
  > awk '$3 == "call_enter" && /fn=stress_work/ {c++} END {print "stress_work entries:", (c >= 8 * 300 * 200)}' $TMP_DIR/stress-inline.txt
  stress_work entries: 1
  $ grep -c 'function stress_work: hooked at' $TMP_DIR/stress-inline.log | awk '{print ($1 >= 11)}'
  1
