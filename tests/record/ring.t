An always-on recording in a 10 MiB ring of files, under a busy workload until the ring
has dropped its oldest events (5 s at a time, 2 minutes at most; if it never fills, the
status says what was recorded): the ring stays within its bound, keeps the newest events
(a marker written just before stopping) and drops the oldest (a marker written at the
start), and says how many events it dropped. The lean stream holds the workload's waits
and preemptions, all shorter than 1 ms, and writes a few thousand events a second of it;
a budget that writes every one of them in full fills the ring in about half a minute here.

  $ causeway record start --size 10M --wait-budget 1000000 --dir $TMP_DIR/rec | head -2 | sed -E 's/pid [0-9]+/pid N/'
  recording system-wide into .*/rec/ring \(pid N\): at most 10.0 MiB, the newest events are kept (re)
    calls from the scheduler, a busy thread's waits once they last 1ms (--full for every call)

By default it records the lean stream (docs/recording.md, "Always on"), and its status says
so for scripts:

  $ causeway record status --dir $TMP_DIR/rec --json | jq -c .stream
  {"calls":"scheduler","full":false,"min_wait_ns":1000000,"pipe_bytes":false}
  $ causeway mark --dir $TMP_DIR/rec first marker
  $ for i in $(seq 24); do cw-prog-busy 5; causeway record status --dir $TMP_DIR/rec --json | jq -e '.ring.events_overwritten > 0' >/dev/null && break; [ $i = 24 ] && causeway record status --dir $TMP_DIR/rec; done; true
  $ causeway mark --dir $TMP_DIR/rec last marker
  $ sleep 1; causeway record status --dir $TMP_DIR/rec --json | jq -c '[.running, .ring.bytes <= 10485760, .ring.events_overwritten > 0, .events > 0]'
  [true,true,true,true]
  $ causeway record status --dir $TMP_DIR/rec | head -1 | sed -E 's/pid [0-9]+/pid N/'
  recording in .*/rec \(pid N\) (re)
  $ causeway record stop --dir $TMP_DIR/rec -o $TMP_DIR/ring.cwt 2>&1 | sed -E 's/[0-9.]+/N/g'
  causeway: ring dropped N older events (up to N s) in N files to stay within N MiB
  wrote .*ring.cwt: N events over N s, N lost (re)
  $ causeway convert $TMP_DIR/ring.cwt -o $TMP_DIR/ring.txt --to text >/dev/null 2>&1; grep -o 'marker text="[a-z ]*"' $TMP_DIR/ring.txt
  marker text="last marker"

What the recording lacks is noted in the ring as it stops, after its first files are gone:
here the pipes' bytes, not asked for (docs/recording.md, "Bytes on pipes").

  $ grep -c 'marker text="causeway: note: no bytes moved on pipes: not asked for' $TMP_DIR/ring.txt
  1

The ring's folder is a trace as it stands, the same one `stop -o` saved: `graph` and
`debug` read it whole, and `fleet diagnose` takes a ring folder it finds as one trace (a
host's rings collected under one folder).

  $ a=$(causeway graph $TMP_DIR/rec/ring --json 2>/dev/null | jq .trace.events); b=$(causeway graph $TMP_DIR/ring.cwt --json 2>/dev/null | jq .trace.events); [ "$a" = "$b" ] && [ "$a" -gt 0 ] && echo same events
  same events
  $ mkdir -p $TMP_DIR/hosts/db-1 && cp -r $TMP_DIR/rec/ring $TMP_DIR/hosts/db-1/ && causeway fleet diagnose $TMP_DIR/hosts --host-from-folder --min-hang 0 --no-cache -o $TMP_DIR/hangs.db --json 2>/dev/null | jq -c '[.traces, .failed]'
  [1,0]
  $ causeway fleet query $TMP_DIR/hangs.db "SELECT host, count(*) AS n FROM hangs GROUP BY host"
  host  n
  db-1  1
  $ causeway graph $TMP_DIR/hosts 2>&1
  causeway: .*/hosts: a folder, and not a recorder's ring \(no ring-NNNNNNNNNN.cwt file in it\) (re)
  [1]
  $ causeway record status --dir $TMP_DIR/rec | sed -E 's#/[^ ]*/rec#DIR#'
  no recording is running in DIR
  $ causeway mark --dir $TMP_DIR/rec too late 2>&1 | sed -E 's#/[^ ]*/rec/#DIR/#'
  causeway: no recording is listening on DIR/marker.sock (Connection refused); start one with 'causeway record start' or 'causeway record -o TRACE -- CMD'

`record start` reads the packs' holder rules as `record` does, its own `--rules` too; a
broken pack is said before the recorder detaches, and nothing is started.

  $ causeway record start --size 10M --dir $TMP_DIR/badrules --rules tests/cli/data/syntax-error.cw 2>&1 | head -1; echo "exit ${PIPESTATUS[0]}"
  tests/cli/data/syntax-error.cw:9:3: error: expected an expression after '=='
  exit 1
  $ causeway record status --dir $TMP_DIR/badrules | sed -E 's#/[^ ]*/badrules#DIR#'
  no recording is running in DIR

`--full` records every call from the syscall programs, `--calls` and `--min-wait` choose
the stream piece by piece (`--min-wait 0`: every wait; `--pipe-bytes`: pipes' bytes too);
the two that contradict each other are refused before anything starts:

  $ for o in "--full" "--calls syscalls" "--min-wait 0" "--pipe-bytes"; do causeway record start --size 2M --dir $TMP_DIR/modes $o | sed -n 2p; causeway record status --dir $TMP_DIR/modes --json | jq -c .stream; causeway record stop --dir $TMP_DIR/modes >/dev/null 2>&1; done
    every system call, from the syscall programs (--full)
  {"calls":"syscalls","full":true,"min_wait_ns":0,"pipe_bytes":true}
    system calls from the syscall programs (--calls syscalls)
  {"calls":"syscalls","full":false,"min_wait_ns":0,"pipe_bytes":true}
    calls from the scheduler, every wait
  {"calls":"scheduler","full":false,"min_wait_ns":0,"pipe_bytes":false}
    calls from the scheduler, a busy thread's waits once they last 1ms, pipes' bytes (--pipe-bytes) (--full for every call)
  {"calls":"scheduler","full":false,"min_wait_ns":1000000,"pipe_bytes":true}
  $ causeway record start --size 2M --dir $TMP_DIR/modes --full --calls scheduler; echo "exit $?"
  causeway: --full writes every call, which --calls scheduler does not see: give one of them
  exit 1
