Recording inside a PID namespace (a container) is refused: the eBPF probes report the
host's pids, while /proc, getpid() and --pid there give the namespace's, so the
recorder's filter on itself, --pid, the process names and the memory maps would each
number processes differently (before this, such a trace named the command "pid 2" in its
marker and process table while its events came from the host's pid). The refusal comes
before anything is run or written, says why and what to do, and exits 2.

  $ unshare --pid --fork --mount-proc causeway record -o $TMP_DIR/ns.cwt -- touch $TMP_DIR/ns-ran 2>&1 | sed -E 's/pid:\[[0-9]+\]/pid:[N]/'; echo "exit ${PIPESTATUS[0]}"; test -e $TMP_DIR/ns-ran || echo "not run"; test -e $TMP_DIR/ns.cwt || echo "no trace"
  causeway: cannot record inside a PID namespace (a container; pid:[N]): the kernel reports the host's pids, while /proc, --pid and this process's own pid here are the namespace's, so the trace's processes, names and memory maps would not match its events. Record from the host's PID namespace instead: on the host (with --pid HOST_PID for a container's process), in a container that shares the host's pids (docker run --pid=host), or through 'nsenter --target 1 --pid --mount' from a privileged container
  exit 2
  not run
  no trace

So is `--pid`, with the namespace's /proc or the host's still mounted, and the always-on
recorder:

  $ unshare --pid --fork --mount-proc sh -c 'sleep 5 & causeway record --pid $! --duration 1 -o $TMP_DIR/ns2.cwt' 2>&1 | grep -o 'cannot record inside a PID namespace'; echo "exit ${PIPESTATUS[0]}"
  cannot record inside a PID namespace
  exit 2
  $ unshare --pid --fork causeway record -o $TMP_DIR/ns3.cwt -- true 2>&1 | grep -o 'cannot record inside a PID namespace'; echo "exit ${PIPESTATUS[0]}"
  cannot record inside a PID namespace
  exit 2
  $ unshare --pid --fork --mount-proc causeway record start --size 2M --dir $TMP_DIR/nsrec 2>&1 | grep -o 'cannot record inside a PID namespace'; echo "exit ${PIPESTATUS[0]}"; test -e $TMP_DIR/nsrec/recorder.pid || echo "not started"
  cannot record inside a PID namespace
  exit 2
  not started

From the host, a process inside a PID namespace is recorded by its host pid: the trace's
process table, its names and its events agree. (The program is waited for: on a loaded
machine it can take more than half a second to start.)

  $ unshare --pid --fork --mount-proc cw-prog-busy 3 & for i in $(seq 100); do pid=$(pgrep -n -x cw-prog-busy) && break; sleep 0.1; done; causeway record --pid $pid --duration 1 -o $TMP_DIR/host.cwt 2>/dev/null; wait
  > causeway convert $TMP_DIR/host.cwt -o $TMP_DIR/host.txt --to text >/dev/null 2>&1
  > awk -v P="$pid" '$1 == "process" && $2 == P {print "process", ($3 == "comm=cw-prog-busy")} $1 == "thread" && $3 == "pid="P {mine[$2] = 1} $3 == "syscall_enter" {if ($2 in mine) inside++; else outside++} END {print "inside:", (inside > 0), "outside:", outside + 0}' $TMP_DIR/host.txt
  process 1
  inside: 1 outside: 0
