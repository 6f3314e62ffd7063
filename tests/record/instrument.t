Instrumentation the packs ask for (docs/instrumentation.md): `record --rules PACK` traces
the data flags a pack declares and the functions its rules name, in real programs.

cw-prog-spin: cw-spinner polls the global ready_flag with sched_yield until cw-setter
stores 1 into it, 300 ms after the start (tests/programs/README.md). With the flag
declared (tests/record/packs/spin-flag.cw) and traced the `auto` way (a hardware
watchpoint where this machine's watchpoints fire, else instruction probes, which the
recorder says on stderr and in the trace), the graph has exactly one flag edge:
cw-setter's write of 1 to cw-spinner's first read of it.

  $ causeway record --rules tests/record/packs/spin-flag.cw -o $TMP_DIR/watch.cwt -- cw-prog-spin yield 300 > $TMP_DIR/watch.log 2>&1
  $ grep -v '^causeway: note: flags:' $TMP_DIR/watch.log | sed -E 's/0x[0-9a-f]+/ADDR/; s/pid [0-9]+/pid N/; s/[0-9]+ events/N events/'
  causeway: flag test.spin/ready_flag: (hardware watchpoint \(reads and writes\) on ready_flag at ADDR in cw-prog-spin \(pid N\)|2 read and 1 write instructions probed in cw-prog-spin) (re)
  causeway: wrote .*/watch.cwt: N events, no events lost.* (re)

A fallback is said on stderr exactly when watchpoints were not used:

  $ said=$(grep -c 'note: flags: .*instruction probes instead' $TMP_DIR/watch.log); watched=$(grep -c 'hardware watchpoint (' $TMP_DIR/watch.log); echo "$said $watched" | awk '{ print ($1 + $2 == 1) ? "consistent" : "said " $1 ", watched " $2 }'
  consistent

Asked for explicitly, watchpoints that do not fire are refused (exit 2, saying why)
rather than recording no flag event at all:

  $ causeway record --rules tests/record/packs/spin-flag.cw --flags watch -o $TMP_DIR/watch-only.cwt -- cw-prog-spin yield 100 > $TMP_DIR/watch-only.log 2>&1; echo "$? $(grep -c 'hardware watchpoint (' $TMP_DIR/watch-only.log) $(grep -c "watchpoints do not fire" $TMP_DIR/watch-only.log)" | awk '{ print ($1 == 0 && $2 == 1 && $3 == 0) || ($1 == 2 && $2 == 0 && $3 == 1) ? "watched, or refused saying why" : "exit " $1 }'
  watched, or refused saying why
  $ causeway graph $TMP_DIR/watch.cwt --rules tests/record/packs/spin-flag.cw --json --edges 2>/dev/null > $TMP_DIR/watch.json
  $ jq -c '[.edge_list[] | select(.kind == "flag") | [.from.comm, .to.comm, .from.kind, .to.kind, .from.value, .to.value, .rule, .strength]]' $TMP_DIR/watch.json
  [["cw-setter","cw-spinner","flag_write","flag_read",1,1,"test.spin/ready_flag","strong"]]

At the right times: the write comes 300 ms after cw-spinner's first poll (which read 0),
and the edge's read follows the write closely (within 50 ms even on a loaded machine,
where the polling thread may wait for a CPU). The text form writes a time that is a whole
number of microseconds (or ms, or s) with its unit (`29918049623us`, one event in a
thousand): `ns` reads either.

  $ causeway convert $TMP_DIR/watch.cwt --to text -o $TMP_DIR/watch.txt 2>/dev/null
  $ awk 'function ns(t) { return t ~ /us$/ ? t * 1e3 : t ~ /ms$/ ? t * 1e6 : t ~ /s$/ ? t * 1e9 : t + 0 } $3 == "flag_read" && !first { first = ns($1) } $3 == "flag_write" { write = ns($1) } END { ms = (write - first) / 1e6; print (ms >= 290 && ms < 600) }' $TMP_DIR/watch.txt
  1
  $ awk '$3 == "flag_read" { print ($0 ~ /value=[1-9]/) ? "first read: set" : "first read: 0"; exit }' $TMP_DIR/watch.txt
  first read: 0
  $ jq '[.edge_list[] | select(.kind == "flag") | .to.ts - .from.ts] | .[0] < 50000000' $TMP_DIR/watch.json
  true

The same through uprobes on the instructions that read and write the flag (found by
scanning the program's code with Capstone).

  $ causeway record --rules tests/record/packs/spin-flag.cw --flags probe -o $TMP_DIR/probe.cwt -- cw-prog-spin yield 300 2>&1 | head -1
  causeway: flag test.spin/ready_flag: 2 read and 1 write instructions probed in cw-prog-spin
  $ causeway graph $TMP_DIR/probe.cwt --rules tests/record/packs/spin-flag.cw --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "flag") | [.from.comm, .to.comm, .from.value, (.to.ts - .from.ts < 50000000)]]'
  [["cw-setter","cw-spinner",1,true]]

Without the declaration nothing is traced, and the pack alone cannot make the edge.

  $ causeway record -o $TMP_DIR/plain.cwt -- cw-prog-spin yield 300 2>/dev/null
  $ causeway graph $TMP_DIR/plain.cwt --rules tests/record/packs/spin-flag.cw --json 2>/dev/null | jq -c '[.stats.flag_edges, (.graph.edges_by_kind | has("flag"))]'
  [0,false]

A process already running, named by --pid: the watchpoint goes on each of its threads
(cw-setter exists, asleep, when the recording starts; it stores the flag after 3 s, time
enough for the recorder to start on a loaded machine).

  $ cw-prog-spin sleep 3000 >/dev/null & sleep 0.3; causeway record --rules tests/record/packs/spin-flag.cw --pid $! -o $TMP_DIR/pid.cwt --duration 4 2>/dev/null; wait
  $ causeway graph $TMP_DIR/pid.cwt --rules tests/record/packs/spin-flag.cw --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "flag") | [.from.comm, .to.comm, .from.value]]'
  [["cw-setter","cw-spinner",1]]

The RepeatedYield is then solved: the diagnosis follows the flag edge to cw-setter, whose
300 ms sleep is the root cause.

  $ causeway debug $TMP_DIR/watch.cwt --min-hang 0.1 --rules tests/record/packs/spin-flag.cw --auto --json 2>/dev/null > $TMP_DIR/spin.json
  $ jq -c '[.hang.comm, .hang.kind, .root_causes[0].comm, .root_causes[0].kind, (.root_causes[0].what | capture("^blocked (?<ms>[0-9.]+) ms in clock_nanosleep").ms | tonumber | . > 250 and . < 400)]' $TMP_DIR/spin.json
  ["cw-spinner","RepeatedYield","cw-setter","LongWait",true]
  $ jq -c '[.path[-2].comm, .path[-2].edge_kind, .path[-1].comm]' $TMP_DIR/spin.json
  ["cw-setter","flag","cw-spinner"]

Boundaries: a batch rule that names functions (tests/record/packs/dispatch.cw:
serve_ready holds the loop, each handle_request is an item) makes the recorder trace
their entries and exits. cw-prog-dispatch's 3 clients send 5 requests each; cw-daemon
calls handle_request 18 times (15 requests, 3 closes). By uprobes:

  $ causeway record --rules tests/record/packs/dispatch.cw --hooks uprobe -o $TMP_DIR/uprobe.cwt -- cw-prog-dispatch 3 5 2>&1 | head -2
  causeway: function handle_request: uprobes in cw-prog-dispatch
  causeway: function serve_ready: uprobes in cw-prog-dispatch
  $ causeway convert $TMP_DIR/uprobe.cwt --to text -o $TMP_DIR/uprobe.txt 2>/dev/null
  $ for k in call_enter call_exit; do grep -c " $k .*fn=handle_request" $TMP_DIR/uprobe.txt; done
  18
  18
  $ causeway graph $TMP_DIR/uprobe.cwt --rules tests/record/packs/dispatch.cw --json 2>/dev/null | jq '.rules.splits["test.dispatch/serve.requests"]'
  18

By uprobes, a program the command starts later (a script that starts the server a pack is
about) is probed as the recorder sees it start: its functions are traced from then on.
Here cw-prog-dispatch's 3 clients send 100 requests each, 5 ms apart, after a shell starts
it; only the first milliseconds' calls can be missed:

  $ causeway record --rules tests/record/packs/dispatch.cw --hooks uprobe -o $TMP_DIR/started.cwt -- sh -c 'cw-prog-dispatch 3 100; true' 2>&1 | grep "function handle_request"
  causeway: function handle_request: uprobes in cw-prog-dispatch
  $ causeway convert $TMP_DIR/started.cwt --to text -o $TMP_DIR/started.txt 2>/dev/null
  $ grep -c " call_enter .*fn=handle_request" $TMP_DIR/started.txt | awk '{ print ($1 >= 200 && $1 <= 303) }'
  1

And by inline hooks, which `record -- CMD` puts into the command through LD_PRELOAD:

  $ causeway record --rules tests/record/packs/dispatch.cw --hooks inline -o $TMP_DIR/inline.cwt -- cw-prog-dispatch 3 5 2>&1 | grep -v 'in-process hooks: clock:' | sed -E 's/0x[0-9a-f]+/ADDR/; s/ in [^)]*cw-prog-dispatch\)/ in cw-prog-dispatch)/; s/pid [0-9]+/pid N/' | head -2
  causeway: function handle_request: hooked at ADDR (handle_request in cw-prog-dispatch) (pid N, in-process hook)
  causeway: function serve_ready: hooked at ADDR (serve_ready in cw-prog-dispatch) (pid N, in-process hook)
  $ causeway convert $TMP_DIR/inline.cwt --to text -o $TMP_DIR/inline.txt 2>/dev/null
  $ for k in call_enter call_exit; do grep -c " $k .*fn=handle_request" $TMP_DIR/inline.txt; done
  18
  18
  $ causeway graph $TMP_DIR/inline.cwt --rules tests/record/packs/dispatch.cw --json 2>/dev/null | jq '.rules.splits["test.dispatch/serve.requests"]'
  18

A function is said to be missing only when no hooked process had it: the shell that starts
the program has neither of the pack's functions, the program has both.

  $ causeway record --rules tests/record/packs/dispatch.cw --hooks inline -o $TMP_DIR/sh.cwt -- sh -c 'cw-prog-dispatch 3 5; true' 2>&1 | grep -c "in none of"
  0
  [1]
  $ sed 's/serve_ready/cw_no_such_function/' tests/record/packs/dispatch.cw > $TMP_DIR/absent.cw
  $ causeway record --rules $TMP_DIR/absent.cw --hooks inline -o $TMP_DIR/absent.cwt -- sh -c 'cw-prog-dispatch 3 5; true' 2>&1 | grep "in none of" | sed -E 's/of [0-9]+ hooked/of N hooked/'
  causeway: 1 function named by the packs is in none of N hooked processes (cw_no_such_function): not traced there

Each handle_request call holds the daemon's read of the request, on the shared clock (the
three reads that find a closed socket do not block, so the kernel side leaves them out):

  $ awk '$3 == "call_enter" && /fn=handle_request/ { open[$2] = 1; next } $3 == "call_exit" { open[$2] = 0 } open[$2] && $3 == "syscall_enter" { match($0, /name=[a-z]+/); print substr($0, RSTART, RLENGTH); open[$2] = 0 }' $TMP_DIR/inline.txt | sort | uniq -c | sed 's/^ *//'
  15 name=read

Errors: flags and functions need the processes they are in.

  $ causeway record --rules tests/record/packs/spin-flag.cw -o $TMP_DIR/x.cwt --duration 1
  causeway: the packs declare flags or functions to instrument, which needs the processes: give --pid P or a command after --
  [1]
  $ causeway record --rules tests/record/packs/spin-flag.cw -o $TMP_DIR/x.cwt --pid 999999 --duration 1
  causeway: --pid 999999: no such process
  [1]

A pack for one runtime (its header says `applies`) is hooked only when it is asked for
with --rules or when the recorded command is its program: hooking puts the hook library
into every recorded process, which a recording must not pay for a runtime it does not
hold. The same pack, found on CAUSEWAY_RULES_PATH, says it is for cw-prog-dispatch, then
for another program.

  $ mkdir -p $TMP_DIR/runtime && sed 's/^pack test.dispatch {/pack test.dispatch {\n  applies program("cw-prog-dispatch")/' tests/record/packs/dispatch.cw > $TMP_DIR/runtime/dispatch.cw
  $ CAUSEWAY_RULES_PATH=$TMP_DIR/runtime causeway record -o $TMP_DIR/shown.cwt -- cw-prog-dispatch 3 5 2>&1 | grep -c "hooked at"
  2
  $ sed -i 's/program("cw-prog-dispatch")/program("cw-prog-other")/' $TMP_DIR/runtime/dispatch.cw
  $ CAUSEWAY_RULES_PATH=$TMP_DIR/runtime causeway record -o $TMP_DIR/other.cwt -- cw-prog-dispatch 3 5 2>&1 | grep -c "hooked at"
  0
  [1]
  $ causeway record --rules $TMP_DIR/runtime/dispatch.cw -o $TMP_DIR/asked.cwt -- cw-prog-dispatch 3 5 2>&1 | grep -c "hooked at"
  2
