`causeway hangs` lists the candidates `debug --hang auto` chooses from, best first
(docs/diagnosis.md, "Choosing the hang"). The fixture tests/cli/data/by-design.trace: a
recorded command whose client waited 1 s for a server's reply, beside a sleeper that
slept 3 s on nothing and a helper parked in one recvmsg all its life.

Its help says how it is used, what to do with a candidate and what its exit status means
(the options themselves are checked against the completion by tests/install.sh):

  $ causeway hangs --help | grep -E "^Usage|^Pass a candidate|^Exit status"
  Usage: causeway hangs [OPTIONS] TRACE
  Pass a candidate's TID@SECONDS to `causeway debug --hang`. See docs/diagnosis.md.
  Exit status: 0 done, 1 the input was wrong, 2 the environment cannot do it.

The client stopped responding; the two longer waits are by design and rank below it.

  $ causeway hangs tests/cli/data/by-design.trace
  candidates for --hang auto, best first:
    1. client (pid 300, tid 300)  LongWait  at 0.001500 s, 1.000 s without a response  --hang 300@0.0015
       waited in read(fd: 3), ended by server 500
    2. server (pid 500, tid 500)  LongRunning  at 0.000000 s, 0.003 s without a response  --hang 500@0
    3. sh (pid 100, tid 100)  LongRunning  at 0.000000 s, 0.001 s without a response  --hang 100@0
    4. helper (pid 400, tid 400)  LongWait  at 0.000500 s, 3.499 s without a response  --hang 400@0.0005
       waited in recvmsg(fd: 5)
       waits by design: idle all its life: it never returned from recvmsg and did no work outside it
    5. sleeper (pid 200, tid 200)  LongWait  at 0.001000 s, 3.000 s without a response  --hang 200@0.001
       waited in clock_nanosleep()
       waits by design: a timed sleep: clock_nanosleep on no descriptor or object, ended by no other thread

  $ causeway hangs tests/cli/data/by-design.trace --top 2 --json | jq -c '.candidates[] | [.comm, .kind, .unresponsive_ns, .hang_arg, .waited_on, .woken_by.comm, .by_design]'
  ["client","LongWait",999500000,"300@0.0015","read(fd: 3)","server",null]
  ["server","LongRunning",2500000,"500@0",null,null,null]

`debug --hang auto` takes the first, and says which longer waits it passed over.

  $ causeway debug tests/cli/data/by-design.trace --auto 2>/dev/null | sed -n '/^hang:/,/^$/p'
  hang: LongWait of thread client 300 (process client 300)
    when: 0.001500 s to 1.002000 s (1.000 s)
    found by: auto: longest stretch of 4 main threads and 1 event-loop thread of process 100 and its descendants (the recorded command) (client 300: 1.000 s); ranked above 2 longer threads that wait by design (helper 400: idle all its life: it never returned from recvmsg and did no work outside it, …)
    blocked: 999.5 ms from 0.001600 s in read(fd: 3)
    stack:
      read
      ask
      main
  

A candidate's TID@SECONDS selects it.

  $ causeway debug tests/cli/data/by-design.trace --hang 200@0.5 --auto 2>/dev/null | grep -A1 '^hang:'
  hang: LongWait of thread sleeper 200 (process sleeper 200)
    when: 0.001000 s to 3.001500 s (3.001 s)

Below --min-hang (default 0.5 s) there is no hang to diagnose: `sleep 0.3` recorded.

  $ causeway hangs tests/cli/data/short-sleep.trace
  candidates for --hang auto, best first:
    1. sleep (pid 100, tid 100)  LongWait  at 0.001000 s, 0.300 s without a response  --hang 100@0.001
       waited in clock_nanosleep()
       waits by design: a timed sleep: clock_nanosleep on no descriptor or object, ended by no other thread

  $ causeway debug tests/cli/data/short-sleep.trace
  no hang found: the longest time a candidate thread went without a response was 0.300 s (sleep 100, LongWait at 0.001 s), under the 0.500 s threshold (--min-hang)
  (`causeway hangs tests/cli/data/short-sleep.trace` lists the candidates; --min-hang lowers the threshold)

  $ causeway debug tests/cli/data/short-sleep.trace --json
  {
    "hang": null,
    "no_hang": "no hang found: the longest time a candidate thread went without a response was 0.300 s (sleep 100, LongWait at 0.001 s), under the 0.500 s threshold (--min-hang)",
    "schema_version": 1
  }

  $ causeway debug tests/cli/data/short-sleep.trace --min-hang 0.1 --auto 2>/dev/null | head -1
  root cause: process sleep 100, thread sleep 100

A trace without a candidate thread says so.

  $ printf 'causeway-trace 1\nthread 7 pid=0 comm=kworker kernel\n0 7 switch_in\n' > $TMP_DIR/none.trace && causeway hangs $TMP_DIR/none.trace
  no candidate: no main thread or event-loop thread in the trace
