Names, paths and markers in a trace are whatever the recorded program wrote, escape
sequences included. The fixture is examples/slow-server.trace with the client's comm
holding an OSC sequence (ESC ] 0 ; pwn BEL: it would retitle the terminal), the worker's
comm a newline and a fake report line, the server's comm and a recorder note bytes that
are not UTF-8 (and ESC [ 2 J, clear the screen), and a stack frame a C1 control (U+009B,
CSI).
Every human-readable output shows those bytes as \xNN: none reaches the terminal raw, and
a newline in a name does not start a line of the report.

  $ causeway graph tests/cli/data/hostile-names.trace
  trace: 40 events, 2 processes, 2 threads, 0 lost events
  recording lost: nothing
  note: recording: clock \xff\x1b[2J
  graph: 6 segments, 12 edges (4 strong, 8 weak, 0 boosted)
  edges by kind: message 4 split 4 wakeup 4
  rules: 8 candidates, 0 unclassified, 0 pruned, 0 boosted, 4 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

  $ causeway hangs tests/cli/data/hostile-names.trace
  candidates for --hang auto, best first:
    1. cw-\x1b]0;pwn\x07client (pid 811, tid 811)  LongWait  at 0.020100 s, 0.800 s without a response  --hang 811@0.0201
       waited in read(fd: 3), ended by worker\x0aroot cause: none 813

  $ causeway debug tests/cli/data/hostile-names.trace --auto
  root cause: process cw-\xff\xfeserver 812, thread worker\x0aroot cause: none 813
    when: 0.010600 s to 0.820100 s (809.5 ms)
    kind: LongRunning (what the hang waited for)
    what: ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1; its work began with a message from cw-\x1b]0;pwn\x07client 811 at 0.020000 s
    costliest functions (from its 5 stacks, as `causeway latency`): serve 799.9 ms, recvfrom 9.6 ms
    stack:
      recvfrom
      serve
      main
  
  hang: LongWait of thread cw-\x1b]0;pwn\x07client 811 (process cw-\x1b]0;pwn\x07client 811)
    when: 0.020100 s to 0.821000 s (800.9 ms)
    found by: auto: longest stretch of 1 main thread (cw-\x1b]0;pwn\x07client 811: 0.801 s)
    blocked: 800.1 ms from 0.020100 s in read(fd: 3)
    stack:
      read
      ask\xc2\x9b2J
      main
  
  causal path, from the root cause to the hang:
      0.820000 s  worker\x0aroot cause: none 813  send(fd: 4<object 2>, offset: 64, len: 64, peer: 811)  --message, strong-->
      0.820200 s  cw-\x1b]0;pwn\x07client 811  recv(fd: 3<object 2>, offset: 64, len: 64, peer: 812)  (the hang)
  
  questions: 1 asked
    1. [recurse] worker\x0aroot cause: none 813 (cw-\xff\xfeserver 812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.010600 s), while the hang lasted. Find out why it did, in turn?
       -> diagnose worker\x0aroot cause: none 813 (cw-\xff\xfeserver 812) (AUTOMATIC: the best-scored of 2 options, nobody was asked)
    1 of 1 choices were made automatically; answer them in a terminal, or with --answers FILE.
  
  notes:
    - recording: clock \xff\x1b[2J
  
  recording lost: nothing

The DOT file's labels carry the same escapes (the backslash escaped for DOT).

  $ causeway graph tests/cli/data/hostile-names.trace --dot $TMP_DIR/g.dot >/dev/null && grep -o 'label="[^ ]*' $TMP_DIR/g.dot | sort -u
  label="cw-\\x1b]0;pwn\\x07client
  label="message",
  label="split",
  label="wakeup",
  label="worker\\x0aroot

  $ LC_ALL=C grep -c $'[\x01-\x08\x0b-\x1f\x7f\x80-\xff]' $TMP_DIR/g.dot
  0
  [1]

JSON stays JSON: its escapes for control bytes, U+FFFD for bytes that are not UTF-8
(before, --json failed on them with "invalid UTF-8 byte"), the names otherwise as
recorded. Sentences ("what") carry the text report's escapes.

  $ causeway graph tests/cli/data/hostile-names.trace --json | grep -A2 '"notes"'
      "notes": [
        "clock �\u001b[2J"
      ],

  $ causeway debug tests/cli/data/hostile-names.trace --auto --json | grep -E '"(comm|process)"' | sort | uniq -c
        1       "comm": "cw-\u001b]0;pwn\u0007client",
        2       "comm": "worker\nroot cause: none",
        1     "comm": "cw-\u001b]0;pwn\u0007client",

  $ causeway graph tests/cli/data/hostile-names.trace --json --edges >/dev/null && causeway hangs tests/cli/data/hostile-names.trace --json | grep '"comm"'
        "comm": "cw-\u001b]0;pwn\u0007client",
          "comm": "worker\nroot cause: none",


A file name, a command or an option given on the command line may come from anywhere (a
listing of a shared folder): when the option parser cannot take it, its message quotes it
with the control bytes shown as \xNN.

  $ causeway graph $'no-such\e]0;pwn\a.trace'
  causeway graph: TRACE: Path does not exist: no-such\x1b]0;pwn\x07.trace
  run 'causeway graph --help' for the options
  [1]

  $ causeway graph examples/server-loop.trace $'--\e[2Jx'
  causeway graph: The following argument was not expected: --\x1b[2Jx
  run 'causeway graph --help' for the options
  [1]

  $ causeway $'grap\e' x.trace
  causeway: unknown command 'grap\x1b'; did you mean 'graph'?
  run 'causeway --help' for what each does
  [1]
