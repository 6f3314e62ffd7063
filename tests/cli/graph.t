The demo: a server answers two clients inside one call of serve_loop(). The standard
rules cut each request its event loop reads (loop.request) but join the server's
segments by weak neighbour edges (a busy server delays its next client), so one
request is still tied to both clients: one over-connection.

  $ causeway graph examples/server-loop.trace
  trace: 42 events, 3 processes, 3 threads, 0 lost events
  recording lost: nothing
  graph: 9 segments, 14 edges (4 strong, 10 weak, 0 boosted)
  edges by kind: message 4 split 6 wakeup 4
  rules: 8 candidates, 0 unclassified, 0 pruned, 0 boosted, 6 cuts, 0 flag edges from 0 data flags
  over-connections: 1 (requests), 0 (segments)

A user pack declares the loop as a batching pattern: each wait starts an independent
item, and the two clients are no longer joined.

  $ causeway graph examples/server-loop.trace --rules examples/server-loop.cw --json | grep -E '"(over_connections|demo.server/serve_loop.requests)"'
        "demo.server/serve_loop.requests": 2,
      "over_connections": 0,

Without the pack, the graph is as before.

  $ causeway graph examples/server-loop.trace --json | grep -E '"(over_connections|demo.server/serve_loop.requests)"'
      "over_connections": 1,

Every split and edge names its rule.

  $ causeway graph examples/server-loop.trace --json | grep -A5 '"splits"'
      "splits": {
        "linux.kernel/data.wait": 2,
        "linux.kernel/loop.request": 2,
        "linux.kernel/loop.wait": 2,
        "linux.kernel/peers.disjoint": 0,
        "linux.kernel/reap.wait": 0,

Without the stdlib, nothing is cut or joined: the engine knows no Linux by itself.

  $ causeway graph examples/server-loop.trace --no-stdlib
  trace: 42 events, 3 processes, 3 threads, 0 lost events
  recording lost: nothing
  graph: 3 segments, 0 edges (0 strong, 0 weak, 0 boosted)
  rules: 0 candidates, 0 unclassified, 0 pruned, 0 boosted, 0 cuts, 0 flag edges from 0 data flags
  over-connections: 0 (requests), 0 (segments)

A mistake in a text trace is shown where it is.

  $ printf 'causeway-trace 1\n1ms 5 swich_in\n' > $TMP_DIR/typo.trace && causeway graph $TMP_DIR/typo.trace 2>&1 | sed "s|$TMP_DIR/||"
  typo.trace:2:7: error: unknown event kind 'swich_in'
    1ms 5 swich_in
          ^~~~~~~~
  hint: did you mean 'switch_in'?

  $ printf 'not a trace at all' > $TMP_DIR/junk && causeway graph $TMP_DIR/junk 2>&1 | sed "s|$TMP_DIR/||"
  causeway: junk: not a causeway trace (no CWTRACE header)
  hint: a text trace starts with 'causeway-trace', perf script output with an event line; --trace-format perf-script reads it as perf script output anyway

  $ causeway graph $TMP_DIR/junk >/dev/null 2>&1
  [1]

A trace cut short keeps what is intact and says what it skipped: uncompressed, the cut
falls in the schema chunk; compressed (the default), in the events chunk.

  $ causeway convert examples/server-loop.trace --compress none -o $TMP_DIR/demo.cwt 2>/dev/null && head -c 3000 $TMP_DIR/demo.cwt > $TMP_DIR/cut.cwt && causeway graph $TMP_DIR/cut.cwt --json 2>&1 | sed "s|$TMP_DIR/||" | grep -E 'warning|skipped_chunks'
  cut.cwt: warning: skipped 2968 bytes at offset 32: truncated schema chunk (needs 6656 bytes, 2944 left)
      "skipped_chunks": 1,

  $ causeway convert examples/server-loop.trace -o $TMP_DIR/demo.cwt 2>/dev/null && head -c 3340 $TMP_DIR/demo.cwt > $TMP_DIR/cut.cwt && causeway graph $TMP_DIR/cut.cwt --json 2>&1 | sed "s|$TMP_DIR/||" | grep -E 'warning|skipped_chunks'
  cut.cwt: warning: skipped 148 bytes at offset 3192: truncated compressed events chunk (needs 240 bytes, 124 left)
      "skipped_chunks": 1,

Stack frames whose files are not on this machine are noted, but only those of the
recorded command's processes: another process's JIT region says nothing about it.

  $ causeway graph tests/cli/data/unnamed-frames.trace 2>&1 >/dev/null
  tests/cli/data/unnamed-frames.trace: note: stack frames of the recorded command's processes unnamed; not found: /nonexistent/app-binary
