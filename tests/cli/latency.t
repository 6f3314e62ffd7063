Function latencies inferred from the stacks on events (IntroPerf's example, Figure 3):
each context from its process frame to a leaf, with each function's own time and its
distance from the costliest function of the context (0).

  $ causeway latency tests/cli/data/figure3.trace
  trace: 4 stacks on 1 thread, 11 frames (0 without a symbol), 3 contexts, 5 functions
  costliest calling contexts (conservative: an instance ends at the last stack in its context); per function: distance from the costliest (0), own time
  #1  2.000 ms
      1  [app]         0.000 ms
      0  A             1.000 ms
      1  B             0.000 ms
      2  D             1.000 ms
  #2  2.000 ms
      1  [app]         0.000 ms
      0  A             1.000 ms
      1  C             1.000 ms
      2  D             0.000 ms

The aggressive mode ends an instance at the first stack outside its context.

  $ causeway latency tests/cli/data/figure3.trace --mode aggressive --top 1
  trace: 4 stacks on 1 thread, 11 frames (0 without a symbol), 3 contexts, 5 functions
  costliest calling contexts (aggressive: an instance ends at the first stack outside its context); per function: distance from the costliest (0), own time
  #1  2.000 ms
      3  [app]         0.000 ms
      2  A             0.000 ms
      1  B             0.000 ms
      0  D             2.000 ms

The same as folded stacks, for flame-graph tools.

  $ causeway latency tests/cli/data/figure3.trace --mode aggressive --folded
  [app];A;B;D 2000000
  [app];A;C;D 1000000

A slow run against a normal one: the context that slowed down first. A context ends at
its hot frame (where its run spent the most own time): the slow run's A;E and the base
run's A;B;D differ only below A, which both spent most in, and are one row, shown as the
slow run's.

  $ causeway latency --base tests/cli/data/figure3.trace --buggy tests/cli/data/figure3-slow.trace
  base: 4 stacks on 1 thread, 11 frames (0 without a symbol), 3 contexts, 5 functions
  buggy: 5 stacks on 1 thread, 11 frames (0 without a symbol), 3 contexts, 5 functions
  changed calling contexts (conservative: an instance ends at the last stack in its context); per function: distance from the costliest (0), own time in the slow run and in the base run
  #1  +6.000 ms
      3  [app]         0.000 ms  base     0.000 ms
      2  A             2.000 ms  base     1.000 ms
      1  C             0.000 ms  base     1.000 ms
      0  D             6.000 ms  base     0.000 ms
  #2  +1.000 ms  merges 2 contexts that differ only below A (the others' deeper frames: -1.000 ms)
      1  [app]         0.000 ms  base     0.000 ms
      0  A             2.000 ms  base     1.000 ms
      1  E             1.000 ms  base     0.000 ms

A noise threshold leaves out small changes.

  $ causeway latency --base tests/cli/data/figure3.trace --buggy tests/cli/data/figure3-slow.trace --threshold 2.5ms
  base: 4 stacks on 1 thread, 11 frames (0 without a symbol), 3 contexts, 5 functions
  buggy: 5 stacks on 1 thread, 11 frames (0 without a symbol), 3 contexts, 5 functions
  changed calling contexts (conservative: an instance ends at the last stack in its context); per function: distance from the costliest (0), own time in the slow run and in the base run
  #1  +6.000 ms
      3  [app]         0.000 ms  base     0.000 ms
      2  A             2.000 ms  base     1.000 ms
      1  C             0.000 ms  base     1.000 ms
      0  D             6.000 ms  base     0.000 ms

JSON carries the same ranking (docs/json.md).

  $ causeway latency tests/cli/data/figure3.trace --json --top 1
  {
    "contexts": [
      {
        "cost_ns": 2000000,
        "costliest": 1,
        "frames": [
          {
            "cost_ns": 0,
            "distance": 1,
            "function": "[app]",
            "instances": 1,
            "own_ns": 0
          },
          {
            "cost_ns": 1000000,
            "distance": 0,
            "function": "A",
            "instances": 1,
            "own_ns": 1000000
          },
          {
            "cost_ns": 0,
            "distance": 1,
            "function": "B",
            "instances": 1,
            "own_ns": 0
          },
          {
            "cost_ns": 1000000,
            "distance": 2,
            "function": "D",
            "instances": 1,
            "own_ns": 1000000
          }
        ],
        "rank": 1
      }
    ],
    "mode": "conservative",
    "schema_version": 1,
    "threshold_ns": 0,
    "trace": {
      "contexts": 3,
      "end_ns": 4000000,
      "frames": 11,
      "frames_without_symbol": 0,
      "functions": 5,
      "stacks": 4,
      "start_ns": 1000000,
      "threads": 1
    }
  }

A system call that blocked keeps its context until it returns: the client's read waits
800 ms for the server's answer, and the server's serve() computes that long between two
system calls (no stack shows inside it).

  $ causeway latency examples/slow-server.trace --top 2
  trace: 9 stacks on 2 threads, 29 frames (0 without a symbol), 5 contexts, 10 functions
  costliest calling contexts (conservative: an instance ends at the last stack in its context); per function: distance from the costliest (0), own time
  #1  819.100 ms
      2  [cw-server]      0.000 ms
      1  main             0.000 ms
      0  serve          800.300 ms
      1  recvfrom        18.800 ms  3 instances
  #2  810.200 ms
      3  [cw-client]      0.000 ms
      2  main             0.000 ms
      1  ask              9.500 ms
      0  read           800.700 ms  2 instances

Selecting a process by pid or by name.

  $ causeway latency examples/slow-server.trace --pid 811 --top 1 --folded
  [cw-client];main;ask 9500000
  [cw-client];main;ask;read 800700000

  $ causeway latency examples/slow-server.trace --comm nosuch
  causeway latency: examples/slow-server.trace: no thread named 'nosuch'
  [1]

perf recordings, from `perf script` output (docs/latency.md, "Existing recordings: perf").
tests/cli/data/hotspot.perf.txt is `perf record -g -e cpu-clock -F 999 -- cw-prog-hotspot
8 2000000` printed by `perf script --show-task-events` (the binary's path shortened): 21
samples a millisecond apart, 3 in fast_part and 18 in slow_part, each under main. It is
recognised by its content; each phase is one instance from its first sample to its last.

  $ causeway latency tests/cli/data/hotspot.perf.txt
  trace: 21 stacks on 1 thread, 63 frames (0 without a symbol), 2 contexts, 5 functions
  costliest calling contexts (conservative: an instance ends at the last stack in its context); per function: distance from the costliest (0), own time
  #1  27.791 ms
      3  [cw-prog-hotspot]           0.000 ms
      2  __libc_start_call_main      0.000 ms
      1  main                        1.000 ms
      0  slow_part                  26.791 ms
  #2  2.997 ms
      3  [cw-prog-hotspot]           0.000 ms
      2  __libc_start_call_main      0.000 ms
      1  main                        1.000 ms
      0  fast_part                   1.997 ms

  $ causeway latency tests/cli/data/hotspot.perf.txt --folded
  [cw-prog-hotspot];__libc_start_call_main;main 1000000
  [cw-prog-hotspot];__libc_start_call_main;main;fast_part 1997000
  [cw-prog-hotspot];__libc_start_call_main;main;slow_part 26791000

A perf script file that starts with something else is read with --trace-format perf-script;
a line it cannot read is an error where it is.

  $ (echo 'captured by perf 6.1'; cat tests/cli/data/hotspot.perf.txt) > $TMP_DIR/noted.txt
  $ causeway latency $TMP_DIR/noted.txt 2>&1 | sed "s|$TMP_DIR/||"
  causeway: noted.txt: not a causeway trace (no CWTRACE header)
  hint: a text trace starts with 'causeway-trace', perf script output with an event line; --trace-format perf-script reads it as perf script output anyway
  $ causeway latency $TMP_DIR/noted.txt --trace-format perf-script 2>&1 | sed "s|$TMP_DIR/||"
  noted.txt:1:1: error: expected an event line 'COMM TID [CPU] SECONDS.MICROSECONDS: [PERIOD] EVENT: ...' (perf script's default fields)
    captured by perf 6.1
    ^~~~~~~~~~~~~~~~~~~~

--format, the option's name before export's output form took it, is still read, though
--help names only --trace-format:

  $ causeway latency $TMP_DIR/noted.txt --format perf-script 2>&1 | head -1 | sed "s|$TMP_DIR/||"
  noted.txt:1:1: error: expected an event line 'COMM TID [CPU] SECONDS.MICROSECONDS: [PERIOD] EVENT: ...' (perf script's default fields)
  $ causeway latency --help | grep -c -- '--format'
  0
  [1]
  $ causeway latency --help | grep -c -- '--trace-format'
  1
  $ sed '1d' $TMP_DIR/noted.txt | sed 's/^\t *15bd fast_part/\tfast_part/' > $TMP_DIR/cut.txt
  $ causeway latency $TMP_DIR/cut.txt 2>&1 | sed "s|$TMP_DIR/||"
  cut.txt:4:2: error: expected the frame's address in hexadecimal, not 'fast_part+0x2c'
    	fast_part+0x2c (/usr/local/bin/cw-prog-hotspot)
    	^~~~~~~~~~~~~~
  $ causeway latency $TMP_DIR/cut.txt 2>/dev/null
  [1]

Errors.

  $ causeway latency
  causeway latency: give a TRACE, or --base TRACE --buggy TRACE
  [1]

  $ causeway latency tests/cli/data/figure3.trace --threshold 3 parsecs
  causeway latency: The following argument was not expected: parsecs
  run 'causeway latency --help' for the options
  [1]

  $ causeway latency tests/cli/data/figure3.trace --threshold 3parsecs
  causeway latency: --threshold '3parsecs' is not a duration (e.g. 500us, 2ms, 1s)
  [1]

  $ causeway latency --base tests/cli/data/figure3.trace
  causeway latency: --base requires --buggy
  run 'causeway latency --help' for the options
  [1]

The page (`--html`): one self-contained file that loads nothing from the network, refused
through a symbolic link (tests/browser/latency_html.sh opens it in Chromium).

  $ causeway latency tests/cli/data/figure3.trace --html $TMP_DIR/page.html >/dev/null
  wrote .*/page.html: 2 contexts (re)

  $ grep -c '<script' $TMP_DIR/page.html; grep -cE 'https?:|src=' $TMP_DIR/page.html
  3
  0
  [1]

  $ ln -sf /etc/hostname $TMP_DIR/link.html && causeway latency tests/cli/data/figure3.trace --html $TMP_DIR/link.html >/dev/null
  causeway latency: .*/link.html: refusing to write through a symbolic link \(remove it, or write elsewhere\) (re)
  [2]
