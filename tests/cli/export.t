`causeway export` writes the graph and its diagnosis for a viewer (docs/export.md):
Perfetto's protobuf trace, Chrome trace JSON, or DOT of the causal path's neighbourhood.
`cw-export-check` (built beside causeway) reads a file back and checks it.

  $ causeway export --help | head -3
  write the graph and its diagnosis for a viewer: Perfetto, Chrome JSON or DOT
  Usage: causeway export [OPTIONS] TRACE
  

The fixture: a client asks a server's worker twice; the second answer takes 800 ms of
computing. The Perfetto file holds a track per thread under its process, a slice per
segment and a flow per edge between threads; the diagnosis's path (two slices, one
edge) and root cause are marked.

  $ causeway export examples/slow-server.trace --format perfetto -o $TMP_DIR/s.pftrace
  wrote /tmp/.* \(perfetto\): 2 threads, 6 slices, 8 flows, 0 markers (re)

It is created 0600, as a trace is: it holds what every recorded thread did.

  $ stat -c %a $TMP_DIR/s.pftrace
  600

  $ cw-export-check $TMP_DIR/s.pftrace | jq -c '{processes, threads, slices, flows, path_slices, path_flows, root_cause_slices, problems}'
  {"processes":2,"threads":2,"slices":6,"flows":8,"path_slices":2,"path_flows":1,"root_cause_slices":1,"problems":0}

Against the graph: a slice per vertex, a flow per edge but the split edges that join a
thread's own consecutive segments.

  $ causeway graph examples/slow-server.trace --json | jq -c '[.graph.vertices, .graph.edges - .graph.edges_by_kind.split.weak - .graph.edges_by_kind.split.strong]'
  [6,8]

The scheduler's events become Perfetto's compact_sched, per CPU: this text trace puts
every event on CPU 0 and its threads take turns, so nothing is said about CPUs.

  $ cw-export-check $TMP_DIR/s.pftrace | jq -c '{cpus, sched_switches, sched_wakings}'
  {"cpus":1,"sched_switches":11,"sched_wakings":4}

Where two threads ran at once on the CPU the trace gives them, the trace's CPU numbers
are missing (a text trace without cpu=): the export says so rather than guess.

  $ causeway export tests/cli/data/by-design.trace --format perfetto -o $TMP_DIR/b.pftrace
  tests/cli/data/by-design.trace: note: 8 context switches found another recorded thread still on the CPU: the trace's CPU numbers are missing (a text trace without cpu=) or switches were lost, so Perfetto's CPU tracks and thread states are wrong there
  wrote /tmp/.* \(perfetto\): 5 threads, 9 slices, 3 flows, 1 markers (re)

The recorded command's processes are shown, with the threads the diagnosis names; the
rest of the machine (here one process) only with --all-processes.

  $ causeway export tests/cli/data/by-design.trace --format perfetto --all-processes -o $TMP_DIR/all.pftrace 2>&1 | tail -1
  wrote /tmp/.* \(perfetto\): 6 threads, 10 slices, 3 flows, 1 markers (re)

The read-back finds a broken file: here cut short.

  $ head -c 300 $TMP_DIR/s.pftrace > $TMP_DIR/cut.pftrace && cd $TMP_DIR && cw-export-check cut.pftrace
  cut.pftrace: not a Perfetto trace: protobuf cannot parse it
  {"cpus":0,"flows":0,"format":"perfetto","markers":0,"path_flows":0,"path_slices":0,"problems":1,"processes":0,"root_cause_slices":0,"sched_switches":0,"sched_wakings":0,"slices":0,"threads":0}
  [1]

Chrome JSON: the same tracks, slices and flows; a marker as an instant.

  $ causeway export tests/cli/data/by-design.trace --format chrome -o $TMP_DIR/b.json
  wrote /tmp/.* \(chrome\): 5 threads, 9 slices, 3 flows, 1 markers (re)

  $ cw-export-check $TMP_DIR/b.json
  {"flows":3,"format":"chrome","markers":1,"problems":0,"slices":9,"threads":5}

The format's rules for flow events, checked with jq too: every "s" has one "f" with the
same id and cat, each "f" binds to its enclosing slice ("bp": "e"), and each flow event
lies inside an "X" slice of its own thread (within 1 ns: times are µs in doubles).

  $ causeway export examples/slow-server.trace --format chrome -o $TMP_DIR/s.json
  wrote /tmp/.* \(chrome\): 2 threads, 6 slices, 8 flows, 0 markers (re)

  $ cat > $TMP_DIR/flows.jq <<'JQ'
  > .traceEvents as $all
  > | [$all[] | select(.ph == "s" or .ph == "f")] as $flows
  > | ($flows | group_by(.id) | map(select((map(.ph) | sort) != ["f", "s"] or (map(.cat) | unique | length) != 1)) | length) as $unpaired
  > | ($flows | map(select(.ph == "f" and .bp != "e")) | length) as $unbound
  > | ($flows | map(. as $e | select([$all[] | select(.ph == "X" and .pid == $e.pid and .tid == $e.tid and .ts - 0.001 <= $e.ts and $e.ts <= .ts + .dur + 0.001)] | length == 0)) | length) as $outside
  > | {unpaired: $unpaired, unbound: $unbound, outside: $outside}
  > JQ
  $ jq -c -f $TMP_DIR/flows.jq $TMP_DIR/s.json
  {"unpaired":0,"unbound":0,"outside":0}

Both checks fail on a broken file: an "f" that lost its binding point, and one moved to
another thread.

  $ jq '(.traceEvents[] | select(.ph == "f" and .id == 1)) |= del(.bp)' $TMP_DIR/s.json > $TMP_DIR/bad.json && cd $TMP_DIR && jq -c -f flows.jq bad.json && cw-export-check bad.json
  {"unpaired":0,"unbound":1,"outside":0}
  bad.json: event [0-9]+: "f" without "bp": "e" (re)
  {"flows":8,"format":"chrome","markers":0,"problems":1,"slices":6,"threads":2}
  [1]

  $ jq '(.traceEvents[] | select(.ph == "f" and .id == 1)) |= (.tid = 1)' $TMP_DIR/s.json > $TMP_DIR/bad.json && cd $TMP_DIR && jq -c -f flows.jq bad.json && cw-export-check bad.json
  {"unpaired":0,"unbound":0,"outside":1}
  bad.json: event [0-9]+: "f" at ts [0-9.]+ is in no "X" slice of pid 81[12] tid 1 (re)
  {"flows":8,"format":"chrome","markers":0,"problems":1,"slices":6,"threads":2}
  [1]

Names are the recorded programs' bytes: one that is not UTF-8 becomes U+FFFD in the
JSON instead of failing it.

  $ causeway export tests/cli/data/hostile-names.trace --format chrome -o $TMP_DIR/h.json && cw-export-check $TMP_DIR/h.json
  wrote /tmp/.* \(chrome\): 2 threads, 6 slices, 8 flows, 1 markers (re)
  {"flows":8,"format":"chrome","markers":1,"problems":0,"slices":6,"threads":2}

DOT shows the causal path and its neighbours only: the root cause filled, the hang
framed twice, the path's edge thick and red.

  $ causeway export examples/slow-server.trace --format dot -o $TMP_DIR/s.dot
  wrote /tmp/.* \(dot\): 2 threads, 5 slices, 6 flows, 0 markers (re)

  $ grep -E 'root cause|hang|penwidth=3' $TMP_DIR/s.dot
      s1 [label="hang\nblocked in read\n0.019100 s, 800.9 ms", style=bold, color="#c00000", penwidth=2, peripheries=2];
      s3 [label="root cause\nran 799.9 ms\n0.009600 s, 809.5 ms", style="filled,bold", fillcolor="#f6b3b3", color="#c00000", penwidth=2];
    s3 -> s1 [label="message (strong)", style=solid, color="#c00000", penwidth=3];

The hang is chosen as `debug` chooses it; `--hang` picks another. A stretch shorter than
--min-hang is no hang: Perfetto and Chrome files are written with nothing marked, DOT
has nothing to draw.

  $ causeway export examples/server-loop.trace --format chrome -o $TMP_DIR/l.json 2>&1 | head -1
  examples/server-loop.trace: note: no hang found: the longest time a candidate thread went without a response was 0.002 s (server 11, LongRunning at 0.003 s), under the 0.500 s threshold (--min-hang); the export marks no causal path

  $ causeway export tests/cli/data/figure3.trace --format perfetto -o $TMP_DIR/f.pftrace
  tests/cli/data/figure3.trace: note: no main thread or event-loop thread in the trace; the export marks no causal path
  wrote /tmp/.* \(perfetto\): 1 thread, 1 slices, 0 flows, 0 markers (re)

  $ causeway export tests/cli/data/figure3.trace --format perfetto --hang nosuchname -o $TMP_DIR/f.pftrace
  causeway: no thread named 'nosuchname' in the trace
  [1]

  $ causeway export examples/server-loop.trace --format dot -o $TMP_DIR/l.dot
  causeway: no hang found: the longest time a candidate thread went without a response was 0.002 s (server 11, LongRunning at 0.003 s), under the 0.500 s threshold (--min-hang); --format dot draws the causal path of a hang (`causeway hangs examples/server-loop.trace` lists the candidates; --hang or --min-hang picks one)
  [1]

Errors say what is wrong, with the exit codes of cli/exit_codes.h.

  $ causeway export examples/slow-server.trace --format svg -o $TMP_DIR/x
  causeway export: --format: svg not in {perfetto,chrome,dot}
  run 'causeway export --help' for the options
  [1]

  $ causeway export examples/slow-server.trace --format dot --hang 811@soon -o $TMP_DIR/x
  causeway: --hang: expected auto, TID@SECONDS or a thread name, got '811@soon' ('soon' is not a number of seconds, like 1.5)
  [1]

  $ causeway export examples/slow-server.trace --format dot --hang 999@0.5 -o $TMP_DIR/x
  causeway: no thread 999 in the trace (threads: 811 cw-client, 813 cw-srv-worker)
  [1]

Questions are answered from --answers, as `debug --answers` reads it; the rest by the
best-scored option. An answer that fits no option says where it is.

  $ printf '1\n1\n1\n' > $TMP_DIR/answers && cd $TMP_DIR && causeway export $OLDPWD/examples/slow-server.trace --format dot --answers answers -o x
  answers: note: 2 answers not used: the diagnosis asked fewer questions
  wrote x (dot): 2 threads, 5 slices, 6 flows, 0 markers

  $ printf '# one question\n7\n' > $TMP_DIR/answers && cd $TMP_DIR && causeway export $OLDPWD/examples/slow-server.trace --format dot --answers answers -o x
  answers:2: expected an option number from 1 to 2 or 's' for question "cw-srv-worker 813 (cw-server 812) ran 799.9 ms on a CPU (0.0 ms runnable) with recvfrom ×1, sendto ×1 (from 0.009600 s), while the hang lasted. Find out why it did, in turn?", got '7'
  [1]

  $ causeway export examples/slow-server.trace --format dot -o /nonexistent/x.dot
  causeway: /nonexistent/x.dot: cannot create: No such file or directory
  [2]
