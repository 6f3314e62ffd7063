File locks when calls are taken from the scheduler (`record --calls scheduler`): a process
that polls a lock (a try that fails, a sleep, another try) neither blocks in the lock call
nor is woken by the holder's release. The file-lock tracepoints give each lock call's
result: every release is written, and the lock a thread gets after failing to get it; the
failed tries are not (docs/recording.md).

cw-lock-holder takes an exclusive lock and lets it go after 0.6 s; cw-lock-poller tries
the same lock without waiting every 10 ms until it gets it. With fcntl (Python's lockf:
F_SETLK) and with flock (LOCK_NB), the release is joined to the poller's lock (linux.kernel
`lock.handover`), and the diagnosis of the poller's loop follows it to the holder's sleep
(the loop itself is blamed too, as with the syscall programs).

  $ printf '#!/usr/bin/python3\nimport fcntl, os, sys, time\npath = "%s/lock.%%d" %% os.getpid()\nfd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)\nlock = fcntl.lockf if sys.argv[1] == "fcntl" else fcntl.flock\nr, w = os.pipe()\npid = os.fork()\nif pid == 0:\n    open("/proc/self/comm", "w").write("cw-lock-holder")\n    held = os.open(path, os.O_RDWR)\n    lock(held, fcntl.LOCK_EX)\n    os.write(w, b"x")\n    time.sleep(0.6)\n    lock(held, fcntl.LOCK_UN)\n    os._exit(0)\nopen("/proc/self/comm", "w").write("cw-lock-poller")\nos.read(r, 1)\nwhile True:\n    try:\n        lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n        break\n    except OSError:\n        time.sleep(0.01)\nlock(fd, fcntl.LOCK_UN)\nos.waitpid(pid, 0)\nos.unlink(path)\n' $TMP_DIR > $TMP_DIR/cw-prog-lockpoll && chmod +x $TMP_DIR/cw-prog-lockpoll
  $ for kind in fcntl flock; do causeway record --calls scheduler -o $TMP_DIR/$kind.cwt -- $TMP_DIR/cw-prog-lockpoll $kind 2>/dev/null; causeway graph $TMP_DIR/$kind.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-lock-holder" and .to.comm == "cw-lock-poller" and .kind == "lock") | [.strength, .rule]]'; done
  [["strong","linux.kernel/lock.handover"]]
  [["strong","linux.kernel/lock.handover"]]
  $ for kind in fcntl flock; do causeway debug $TMP_DIR/$kind.cwt --hang cw-lock-poller --auto --no-cache 2>/dev/null | grep -E '^(root cause|  kind|hang)' | sed -E 's/[0-9]+/N/g'; done
  root cause: process cw-lock-holder N, thread cw-lock-holder N
    kind: LongWait (what the hang waited for)
    kind: RepeatedYield (the hang itself)
  hang: RepeatedYield of thread cw-lock-poller N (process cw-lock-poller N)
  root cause: process cw-lock-holder N, thread cw-lock-holder N
    kind: LongWait (what the hang waited for)
    kind: RepeatedYield (the hang itself)
  hang: RepeatedYield of thread cw-lock-poller N (process cw-lock-poller N)

Only the releases and the lock got after the failed tries are written: of the poller's
fcntl calls, its lock and its release; of the holder's, its release (its lock was free).
Each returns 0 (the text form leaves a field that is 0 out).

  $ causeway convert $TMP_DIR/fcntl.cwt -o $TMP_DIR/fcntl.txt >/dev/null 2>&1
  $ for c in cw-lock-poller cw-lock-holder; do p=$(grep -oE "^(update )?process [0-9]+ comm=$c" $TMP_DIR/fcntl.txt | head -1 | grep -oE "[0-9]+"); echo "$c:" $(grep -E "^[0-9]+ $p syscall_enter( cpu=[0-9]+)? name=fcntl" $TMP_DIR/fcntl.txt | grep -oE "op=[a-z]+ value=[0-9]+") $(grep -E "^[0-9]+ $p syscall_exit( cpu=[0-9]+)? name=fcntl" $TMP_DIR/fcntl.txt | grep -oE "ret=[-0-9]+|name=fcntl$" | sed 's/name=fcntl/ret=0/'); done
  cw-lock-poller: op=setlk value=1 op=setlkw value=2 ret=0 ret=0
  cw-lock-holder: op=setlkw value=2 ret=0
