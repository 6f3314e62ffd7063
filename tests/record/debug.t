Diagnoses of hangs recorded from real programs (tests/programs/README.md describes
each one and its expected diagnosis). Thread ids change from run to run, so the checks
name threads by comm. The programs hang for 300 ms, under `debug`'s default threshold for
a hang (--min-hang 0.5 s), so each run lowers it.

A long wait through three processes: cw-client waits for cw-server, which waits for
cw-timekeeper, whose timerfd runs 300 ms. The run has a fast round first and the slow
round second. The hang is the client's wait; the server's answer ended it, so its own
causal path is the evidence (no baseline unless asked for): the root cause is the
timekeeper's wait on its timer, the step of that path that took the time. That timer was
its own: nothing is behind it, so no question asks whether to diagnose it further. The
path begins at the server's request, which set the timekeeper to work.
(Descriptor numbers depend on what the test runner left open, so they are not compared.)

  $ causeway record -o $TMP_DIR/chain.cwt -- cw-prog-chain both 300 2>/dev/null
  $ causeway debug $TMP_DIR/chain.cwt --min-hang 0.1 --auto --json 2>/dev/null > $TMP_DIR/chain.json
  $ jq -c '.hang | [.comm, .kind, (.end_ns - .start_ns) >= 290000000]' $TMP_DIR/chain.json
  ["cw-client","LongWait",true]
  $ jq -c '[.root_causes[] | [.comm, .kind]]' $TMP_DIR/chain.json
  [["cw-timekeeper","LongWait"]]
  $ jq -r '.root_causes[0].what' $TMP_DIR/chain.json | sed -E 's/[0-9]+\.[0-9] ms/N ms/; s/\(fd [0-9]+\)/(fd N)/; s/ [0-9]+ at [0-9.]+ s//g'
  blocked N ms in read (fd N); ended by a timer edge (strong) from cw-timekeeper; its work began with a message from cw-server
  $ jq -r '.root_causes[0].what | capture("^blocked (?<ms>[0-9.]+) ms").ms | tonumber | . > 250 and . < 400' $TMP_DIR/chain.json
  true
  $ jq -c '[.path[0].comm, .path[-1].comm, .baseline.comm]' $TMP_DIR/chain.json
  ["cw-server","cw-client",null]
  $ jq -c '[.queries[] | select(.kind == "recurse") | .source] ' $TMP_DIR/chain.json
  []
  $ jq -r '.notes[] | select(test("armed itself"))' $TMP_DIR/chain.json | sed -E 's/ [0-9]+ waited [0-9.]+ ms/ waited N ms/'
  cw-timekeeper waited N ms for a timer it had armed itself, and no other thread ended that wait: nothing behind it to diagnose

Asked for with `--baseline`, the fast round is compared too (when its read blocked at
all: on a quick machine the answer may be there before the client reads), and the root
cause (the first, deepest one) stays the same; the server, which only passed the wait
on, may be blamed above it.

  $ causeway debug $TMP_DIR/chain.cwt --min-hang 0.1 --auto --baseline --json 2>/dev/null | jq -c '[(.baseline.comm // "cw-client"), .root_causes[0].comm, ([.root_causes[1:][] | .comm] - ["cw-server"])]'
  ["cw-client","cw-timekeeper",[]]

Every answer saved as a rule in a pack (here none is asked: the slice is clear and the
timekeeper's own timer ends the search): re-running with the pack asks nothing and reaches
the same root cause; the pack's own test replays the diagnosis on the trace.

  $ causeway debug $TMP_DIR/chain.cwt --min-hang 0.1 --auto --save-answers $TMP_DIR/answers >/dev/null 2>&1
  $ causeway rules check $TMP_DIR/answers 2>&1 | tail -1
  1 pack checked (answers.answers), 0 warnings
  $ causeway rules test $TMP_DIR/answers 2>/dev/null
  PASS answers.answers "replays the saved diagnosis"
  1 passed, 0 failed
  $ causeway debug $TMP_DIR/chain.cwt --min-hang 0.1 --rules $TMP_DIR/answers --json 2>/dev/null > $TMP_DIR/replay.json
  $ jq -c '[([.queries[] | select(.source != "rule")] | length), (.queries | length > 0), [.root_causes[] | .comm]]' $TMP_DIR/replay.json
  [0,false,["cw-timekeeper"]]

A long computation on cw-ui's main thread, started by cw-sender's "work" message: the
hang is the computation itself, and the causal path comes from cw-sender's message.

  $ causeway record -o $TMP_DIR/busy.cwt -- cw-prog-busymain 300 2>/dev/null
  $ causeway debug $TMP_DIR/busy.cwt --min-hang 0.1 --auto --json 2>/dev/null > $TMP_DIR/busy.json
  $ jq -c '[.hang.comm, .hang.kind, [.root_causes[] | [.comm, .kind]]]' $TMP_DIR/busy.json
  ["cw-ui","LongRunning",[["cw-ui","LongRunning"]]]
  $ jq -c '[.path[-2].comm, .path[-2].edge_kind, .path[-2].strength, .path[-1].comm]' $TMP_DIR/busy.json
  ["cw-sender","message","strong","cw-ui"]

A main thread polling a global flag with sched_yield: a RepeatedYield, and nothing in a
kernel trace says what ended it, so the report says so, lists the loop's calls and
proposes a flag declaration. (Tracing the flag itself comes with the instrumentation.)

  $ causeway record -o $TMP_DIR/spin.cwt -- cw-prog-spin yield 300 2>/dev/null
  $ causeway debug $TMP_DIR/spin.cwt --min-hang 0.1 --auto --json 2>/dev/null > $TMP_DIR/spin.json
  $ jq -c '[.hang.comm, .hang.kind, .yield_loop.syscalls[0].name, .yield_loop.syscalls[0].count > 100]' $TMP_DIR/spin.json
  ["cw-spinner","RepeatedYield","sched_yield",true]
  $ causeway debug $TMP_DIR/spin.cwt --min-hang 0.1 --auto 2>/dev/null | grep -c 'flag SYMBOL {'
  1

The same loop with 1 ms sleeps: many short segments, merged into one RepeatedYield.

  $ causeway record -o $TMP_DIR/spin-sleep.cwt -- cw-prog-spin sleep 300 2>/dev/null
  $ causeway debug $TMP_DIR/spin-sleep.cwt --min-hang 0.1 --auto --json 2>/dev/null | jq -c '[.hang.comm, .hang.kind, .yield_loop.syscalls[0].name]'
  ["cw-spinner","RepeatedYield","clock_nanosleep"]
