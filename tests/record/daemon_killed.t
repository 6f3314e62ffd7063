An always-on recorder killed with SIGKILL leaves its pid file behind, and its pid lives on
as a zombie until its parent reaps it, which a pid 1 that reaps nothing never does:
`kill -0` still succeeds on it. `record status` right after the kill says no recording is
running, names the pid whose file it removed, and a new `record start` works. Five times
in a row, each checked at once after the kill:

  $ for i in 1 2 3 4 5; do
  >   causeway record start --size 2M --dir $TMP_DIR/killed >/dev/null || echo "start $i failed"
  >   pid=$(cut -d' ' -f1 $TMP_DIR/killed/recorder.pid); kill -9 $pid
  >   causeway record status --dir $TMP_DIR/killed | sed -E "s#$TMP_DIR#TMP#g; s/pid $pid/pid KILLED/; s/: it is (gone|a zombie|being killed).*; removed/: WHY; removed/"
  >   test -e $TMP_DIR/killed/recorder.pid && echo "pid file left"
  > done 2>&1 | LC_ALL=C sort | uniq -c | sed -E 's/^ +//'
  5   the recorder that ran in TMP/killed (pid KILLED) is not running: WHY; removed its stale pid file (its log: TMP/killed/recorder.log)
  5 no recording is running in TMP/killed

`--json` says the same (no `pid`, the stale one as `stale_pid`); `record start` and
`record stop` remove such a file too and say so, and `stop` still saves the ring the killed
recorder left (whether the ring already dropped older events depends on the machine's
load, so that line is left out; so is the line about a torn last chunk, which a recorder
killed in the middle of writing one leaves, and which the reader skips and names):

  $ causeway record start --size 2M --dir $TMP_DIR/killed >/dev/null; pid=$(cut -d' ' -f1 $TMP_DIR/killed/recorder.pid); kill -9 $pid
  > causeway record status --dir $TMP_DIR/killed --json | jq -c --argjson p $pid '[.running, has("pid"), .stale_pid == $p]'
  [false,false,true]
  $ causeway record start --size 2M --dir $TMP_DIR/killed 2>&1 >/dev/null | sed -E "s/pid [0-9]+/pid N/; s/: it is (gone|a zombie|being killed).*; removed/: WHY; removed/; s#$TMP_DIR/killed#DIR#g"
  $ pid=$(cut -d' ' -f1 $TMP_DIR/killed/recorder.pid); kill -9 $pid; causeway record start --size 2M --dir $TMP_DIR/killed 2>&1 >/dev/null | sed -E "s/pid [0-9]+/pid N/; s/: it is (gone|a zombie|being killed).*; removed/: WHY; removed/; s#$TMP_DIR/killed#DIR#g"
  causeway: note: the recorder that ran in DIR (pid N) is not running: WHY; removed its stale pid file (its log: DIR/recorder.log)
  $ sleep 2; pid=$(cut -d' ' -f1 $TMP_DIR/killed/recorder.pid); kill -9 $pid; causeway record stop --dir $TMP_DIR/killed -o $TMP_DIR/after-kill.cwt 2>&1 | sed -E "s/pid [0-9]+/pid N/; s/: it is (gone|a zombie|being killed).*; removed/: WHY; removed/; s#$TMP_DIR/killed#DIR#g; s/[0-9]+ events over [0-9.]+ s, [0-9]+ lost/N events/; /ring dropped [0-9]+ older events/d; /DIR\/ring: skipped [0-9]+ bytes at offset [0-9]+: .*: truncated [a-z]+ chunk/d"
  causeway: note: the recorder that ran in DIR (pid N) is not running: WHY; removed its stale pid file (its log: DIR/recorder.log)
  causeway: DIR/ring/ring-[0-9]+.cwt: no end chunk: the recording did not finish, or the file was cut short (re)
  wrote .*/after-kill.cwt: N events (re)
  $ causeway record status --dir $TMP_DIR/killed | sed -E "s#$TMP_DIR/killed#DIR#"
  no recording is running in DIR

A pid file whose pid now belongs to another process (the recorder is gone and the pid was
reused) is stale too: the start time it records is not that process's.

  $ mkdir -p $TMP_DIR/reuse; sleep 30 & echo "$! 1" >$TMP_DIR/reuse/recorder.pid; causeway record status --dir $TMP_DIR/reuse | sed -E "s#$TMP_DIR/reuse#DIR#g; s/pid [0-9]+/pid N/"; kill %1
  no recording is running in DIR
    the recorder that ran in DIR (pid N) is not running: it is gone, and its pid is another process's now; removed its stale pid file (its log: DIR/recorder.log)
