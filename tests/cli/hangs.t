`causeway hangs` lists the candidates `debug --hang auto` chooses from, best first
(docs/diagnosis.md, "Choosing the hang"). The fixture tests/cli/data/by-design.trace: a
recorded command whose client waited 1 s for a server's reply, beside a sleeper that
slept 3 s on nothing and a helper parked in one recvmsg all its life.

  $ causeway hangs --help

The client stopped responding; the two longer waits are by design and rank below it.

  $ causeway hangs tests/cli/data/by-design.trace

  $ causeway hangs tests/cli/data/by-design.trace --top 2 --json | jq -c '.candidates[] | [.comm, .kind, .unresponsive_ns, .hang_arg, .waited_on, .woken_by.comm, .by_design]'

`debug --hang auto` takes the first, and says which longer waits it passed over.

  $ causeway debug tests/cli/data/by-design.trace --auto 2>/dev/null | sed -n '/^hang:/,/^$/p'

A candidate's TID@SECONDS selects it.

  $ causeway debug tests/cli/data/by-design.trace --hang 200@0 --auto 2>/dev/null | grep -A1 '^hang:'

Below --min-hang (default 0.5 s) there is no hang to diagnose: `sleep 0.3` recorded.

  $ causeway hangs tests/cli/data/short-sleep.trace

  $ causeway debug tests/cli/data/short-sleep.trace

  $ causeway debug tests/cli/data/short-sleep.trace --json

  $ causeway debug tests/cli/data/short-sleep.trace --min-hang 0.1 --auto 2>/dev/null | head -1

A trace without a candidate thread says so.

  $ printf 'causeway-trace 1\nthread 7 pid=0 comm=kworker kernel\n0 7 switch_in\n' > $TMP_DIR/none.trace && causeway hangs $TMP_DIR/none.trace
