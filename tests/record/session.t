The recording session as a new user meets it.

Any command can be recorded, and the trace is created readable by its owner only.
`record` exits 0 once the trace is written: the command's own exit status is said, not
passed on, so that its 1 or 2 is not read as causeway's (bad input, environment).

  $ causeway record -o $TMP_DIR/t.cwt -- sleep 1 2>&1 | sed -E 's/[0-9]+ events/N events/'
  causeway: wrote .*/t.cwt: N events, no events lost( in the kernel buffer; [0-9]+ context switches were never reported by the kernel \(counted as lost\))? (re)
  $ stat -c %a $TMP_DIR/t.cwt
  600
  $ causeway graph $TMP_DIR/t.cwt --json 2>/dev/null | jq -c '[.trace.events > 10, .trace.processes > 1, .graph.vertices > 0]'
  [true,true,true]

The trace is written zstd-compressed, its events packed (format 3.0); `--compress none` writes format 1.2,
which older causeway versions read, as `convert` does.

  $ od -An -tu4 -j8 -N8 $TMP_DIR/t.cwt | tr -s ' '
   3 0
  $ causeway record --compress none -o $TMP_DIR/plain.cwt -- true >/dev/null 2>&1 && od -An -tu4 -j8 -N8 $TMP_DIR/plain.cwt | tr -s ' '
   1 2
  $ causeway record --compress zstd=99 -o $TMP_DIR/x.cwt -- true 2>&1 | head -1
  causeway record: --compress: 'zstd=99': the zstd level is a whole number from 1 to 22

Some kernels never report some context switches (a Firecracker VM's pid 1, see
docs/recording.md): those count as lost, and `record` says how many apart from the
buffer's losses, as above.
  $ causeway record -o $TMP_DIR/t2.cwt -- sh -c 'exit 3' 2>$TMP_DIR/t2.log; echo "exit $?"; grep -o 'the command exited with status 3' $TMP_DIR/t2.log
  exit 0
  the command exited with status 3
  $ causeway record -o $TMP_DIR/t3.cwt -- /no/such/program 2>&1 | grep -v wrote
  causeway: cannot run /no/such/program: No such file or directory

So does a command that cannot be run when the packs instrument it (it is held at its exec
to be instrumented, and ends before): the recording ends with it, it does not go on.

  $ timeout 60 causeway record --rules tests/record/packs/spin-flag.cw -o $TMP_DIR/t4.cwt -- /no/such/program 2>&1 | grep -oE 'cannot run .*|the command exited with status [0-9]+'; echo "exit ${PIPESTATUS[0]}"
  cannot run /no/such/program: No such file or directory
  the command exited with status 127
  exit 0

A symbolic link at the output path is refused before anything is recorded (as root in a
shared folder it would clobber the file it points to), and the command is not run:

  $ echo keep > $TMP_DIR/precious && ln -s $TMP_DIR/precious $TMP_DIR/link.cwt
  $ causeway record -o $TMP_DIR/link.cwt -- touch $TMP_DIR/ran 2>&1 | sed "s#$TMP_DIR#TMP#g"; echo "exit ${PIPESTATUS[0]}"; cat $TMP_DIR/precious; test -e $TMP_DIR/ran || echo "not run"
  causeway: TMP/link.cwt: refusing to write through a symbolic link (remove it, or write elsewhere)
  exit 2
  keep
  not run

Without privileges the recorder says what is missing and exits 2.

  $ setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all causeway record -o /tmp/unprivileged.cwt -- true
  causeway: cannot record: recording needs root, or the capabilities CAP_BPF and CAP_PERFMON (this process has neither); run with sudo
  [2]

A kernel buffer too small for the load loses events; the loss is counted per CPU and
reported by the recorder and by `graph --json`.

  $ causeway record --buffer 16K -o $TMP_DIR/lossy.cwt -- cw-prog-busy 2 2>&1 | grep -Eo 'events LOST \(kernel buffer full: cpu'
  events LOST (kernel buffer full: cpu
  $ causeway graph $TMP_DIR/lossy.cwt --json 2>/dev/null | jq -c '[.trace.lost_events > 0, (.trace.lost_per_cpu | length) > 0]'
  [true,true]

Stacks of blocked syscalls are symbolised from the recorded memory maps, also after
the program has exited.

  $ causeway record -o $TMP_DIR/stacks.cwt -- cw-prog-condvar 2>/dev/null
  $ causeway convert $TMP_DIR/stacks.cwt -o $TMP_DIR/stacks.txt --to text 2>/dev/null >/dev/null; grep -c '^map ' $TMP_DIR/stacks.txt | awk '{print ($1 > 0)}'
  1
  $ grep -E '^[0-9]+ [0-9]+ syscall_enter .*name=clock_nanosleep.*stack=' $TMP_DIR/stacks.txt | grep -c 'clock_nanosleep@' | awk '{print ($1 > 0)}'
  1

With --pid, only the named processes (and the children they create) are recorded: every
system call in the trace is made by a thread of the busy program.

  $ cw-prog-busy 3 & sleep 0.3; causeway record --pid $! --duration 1 -o $TMP_DIR/pid.cwt 2>/dev/null; wait
  $ causeway convert $TMP_DIR/pid.cwt -o $TMP_DIR/pid.txt --to text >/dev/null 2>&1; pid=$(grep -m1 '^process .* comm=cw-prog-busy' $TMP_DIR/pid.txt | awk '{print $2}'); awk -v P="$pid" '$1 == "thread" && $3 == "pid="P {mine[$2] = 1} $3 == "syscall_enter" {if ($2 in mine) inside++; else outside++} END {print "inside:", (inside > 0), "outside:", outside + 0}' $TMP_DIR/pid.txt
  inside: 1 outside: 0

`--pid` takes one value each time it is given (or a comma list, as perf's -p does), so a
`--pid P` right before `-- CMD` leaves the command and its options to the command: here
`-c` is bash's, not an unknown option of causeway's.

  $ sleep 30 & idle=$!
  > causeway record --pid $idle,$$ --pid 1 --duration 0.5 -o $TMP_DIR/pids.cwt -- bash -c 'echo from bash' 2>/dev/null
  > kill $idle
  from bash
  $ causeway record --pid x -o $TMP_DIR/x.cwt -- true 2>&1 | head -1
  causeway record: Could not convert: --pid = x
