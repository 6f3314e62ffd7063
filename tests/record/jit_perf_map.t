Frames in JIT-compiled code, named from the process's perf map (docs/recording.md, "JIT
code: perf maps"). Needs root and node (Node.js); skipped without node.

  $ command -v node >/dev/null || { echo "skip: node (Node.js) is not installed"; exit 77; }

A node program whose hot functions read a pipe: drain() calls pull() until the pipe ends,
pull() calls fs.readSync. The writer sends 300 lines 5 ms apart (enough calls for V8 to
compile both functions), then waits a second before the last one: node blocks in read
under pull() for that second. `--perf-basic-prof` makes node write /tmp/perf-PID.map; the
recorder copies it into the trace. (node runs in TMP_DIR: with that flag it also leaves
a v8 log in its working directory.)

  $ cat > $TMP_DIR/pull.js <<'EOF'
  > const fs = require('fs');
  > fs.writeFileSync(process.argv[3], String(process.pid));
  > const fd = fs.openSync(process.argv[2], 'r');
  > const buf = Buffer.alloc(64);
  > function pull() { return fs.readSync(fd, buf, 0, 64, null); }
  > function drain() { let n = 0; while (pull() > 0) n++; return n; }
  > drain();
  > EOF
  > mkfifo $TMP_DIR/fifo
  > (for i in $(seq 300); do echo x; sleep 0.005; done; sleep 1; echo last) | timeout 60 tee $TMP_DIR/fifo >/dev/null &
  > (cd $TMP_DIR && causeway record -o $TMP_DIR/node.cwt -- node --perf-basic-prof pull.js fifo node.pid 2>$TMP_DIR/node.err)
  > wait
  > grep -o 'copied [0-9]* JIT symbols from 1 perf map (/tmp/perf-PID.map)' $TMP_DIR/node.err | sed 's/[0-9][0-9]*/N/'
  copied N JIT symbols from 1 perf map (/tmp/perf-PID.map)

`debug` finds node's main thread blocked in read for a second, and its stack names the
JavaScript functions (the tier mark after `JS:`, `^` or `*`, says which compiler made the
code, so it is left out here) between V8's builtins and node's C++:

  $ causeway debug $TMP_DIR/node.cwt --auto --json 2>/dev/null > $TMP_DIR/node.json
  $ jq -c '[.hang.comm, .hang.kind]' $TMP_DIR/node.json
  ["node","LongWait"]
  $ jq -r '.hang.stack[] | select(startswith("JS:"))' $TMP_DIR/node.json | sed -E "s/^JS:[~^*+]?/JS:/; s#$TMP_DIR/##"
  JS:readSync node:fs:[0-9]+:[0-9]+ (re)
  JS:pull pull.js:5:14
  JS:drain pull.js:6:15

So does `latency`, whose contexts run from the program's start through drain and pull to the
read:

  $ causeway latency $TMP_DIR/node.cwt --comm node --folded 2>/dev/null | grep -c 'JS:[~^*]\?drain_[^;]*;JS:[~^*]\?pull_[^;]*;JS:[~^*]\?readSync_node:fs:[0-9:]*;[^ ]*;read;'
  [1-9][0-9]* (re)

The trace carries the names: its text form has a `jit` line per perf map entry, so it reads
the same on a machine without the map (or without node).

  $ causeway convert $TMP_DIR/node.cwt --to text -o $TMP_DIR/node.trace >/dev/null 2>&1
  $ grep -E '^jit [0-9]+ 0x[0-9a-f]+-0x[0-9a-f]+ "JS:[~^*]?pull ' $TMP_DIR/node.trace | sed -E "s/^jit [0-9]+ [^ ]+ //; s#$TMP_DIR/##; s/at=[0-9]+.*/at=T/; s/JS:[~^*]?/JS:/" | sort -u
  "JS:pull pull.js:5:14" at=T
  $ rm -f /tmp/perf-$(cat $TMP_DIR/node.pid).map

A perf map is a file anyone can put in /tmp, and the recorder runs as root: one owned by
another user than its process's, or a symbolic link, is not read, and `record` says so.
Here a recorded shell starts two sleeps (root's) and plants such maps for them (the first
moved into place already owned by the other user: written in place and then given away, it
is root's for a moment, and a recorder that reads it then reads a map the process's own
user wrote).

  $ causeway record -o $TMP_DIR/planted.cwt -- sh -c '
  >   sleep 3 & a=$!; sleep 3 & b=$!
  >   echo "1000 10 planted" > /tmp/planted-$a; chown 65534 /tmp/planted-$a; mv /tmp/planted-$a /tmp/perf-$a.map
  >   ln -s /etc/shadow /tmp/perf-$b.map
  >   echo "$a $b" > '$TMP_DIR'/planted.pids; wait' 2>$TMP_DIR/planted.err
  > read a b < $TMP_DIR/planted.pids
  > grep -E "perf-($a|$b)\.map" $TMP_DIR/planted.err | sed -E "s/$a/A/g; s/$b/B/g"
  > rm -f /tmp/perf-$a.map /tmp/perf-$b.map
  causeway: note: /tmp/perf-A.map: owned by uid 65534, not by a uid of process A (0, 0, 0, 0); not read
  causeway: note: /tmp/perf-B.map: a symbolic link; not followed, not read
  $ causeway convert $TMP_DIR/planted.cwt --to text -o $TMP_DIR/planted.trace >/dev/null 2>&1; grep -c '^jit .*planted' $TMP_DIR/planted.trace
  0
  [1]
