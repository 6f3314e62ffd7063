The packs that ship are valid.

  $ causeway rules check stdlib-rules
  9 packs checked (glib.gio, glibc.pthread, libevent, linux.kernel, nginx, node.libuv, postgresql, python.asyncio, redis), 0 warnings
  node.libuv/job.wait has priority 2: it names the cuts it shares with other splits
  nginx/pool.idle has priority 1: it names the cuts it shares with other splits
  node.libuv/pool.idle has priority 1: it names the cuts it shares with other splits

A user pack is checked with the stdlib packs it requires.

  $ causeway rules check examples/server-loop.cw
  1 pack checked (demo.server), 0 warnings

An unknown field is an error at its place, with the nearest name.

  $ causeway rules check tests/cli/data/unknown-field.cw
  tests/cli/data/unknown-field.cw:9:9: error: unknown field 'from.stak'
      where from.stak matches "*lock*"
            ^~~~~~~~~
  hint: did you mean 'from.stack'?
  [1]

A duplicate rule id names both places.

  $ causeway rules check tests/cli/data/duplicate-id.cw
  tests/cli/data/duplicate-id.cw:11:7: error: duplicate rule id 'wait' in pack 'bad.duplicate'
    split wait {
          ^~~~
  tests/cli/data/duplicate-id.cw:6:7: note: first defined here
    split wait {
          ^~~~
  [1]

A pack can turn a stdlib rule off; check says which rule, by which pack, where.

  $ causeway rules check tests/packs/overrides.cw
  1 pack checked (test.overrides), 0 warnings
  linux.kernel/data.wait disabled by test.overrides (tests/packs/overrides.cw:12)

A rule id it does not know is an error, with the nearest id.

  $ causeway rules check tests/cli/data/disable-unknown.cw
  tests/cli/data/disable-unknown.cw:7:9: error: no split, batch, edge, flag or holder rule 'linux.kernel/wait.entyr' to disable
    disable linux.kernel/wait.entyr
            ^~~~~~~~~~~~~~~~~~~~~~~
  hint: did you mean 'linux.kernel/wait.entry'?
  [1]

A missing file is the user's error.

  $ causeway rules check no/such/pack.cw
  causeway rules check: PACK: Path does not exist: no/such/pack.cw
  run 'causeway rules check --help' for the options
  [1]

A syntax error points at the place, not at the line after.

  $ causeway rules check tests/cli/data/syntax-error.cw
  tests/cli/data/syntax-error.cw:9:3: error: expected an expression after '=='
      strength weak
      ^~~~~~~~
  [1]

Pack tests run with the pack and what it requires.

  $ causeway rules test examples/server-loop.cw
  PASS demo.server "each turn of the loop is its own item"
  1 passed, 0 failed

Every command explains itself.

  $ causeway rules --help | head -3
  check, test and format rule packs
  Usage: causeway rules [OPTIONS] SUBCOMMAND
  

`rules kinds` prints the table of rule kinds that the parser and the checker read: each
kind's clauses (* required), whether `disable` can turn it off, whether the graph build
applies it.

  $ causeway rules kinds | head -6
  split   where a thread's execution is cut into segments
          clauses: at, peers, where, cut, neighbour, loop (alone), priority
          disable can turn it off; the graph build applies it
  batch   a loop that serves many requests
          clauses: within*, item*, where, per, cut, neighbour
          disable can turn it off; the graph build applies it
  $ causeway rules kinds --json | jq -c '.schema_version, [.kinds[].keyword], [.kinds[] | select(.disableable | not) | .keyword], [.kinds[] | select(.builds_graph | not) | .keyword], (.kinds[] | select(.keyword == "edge") | [.required, .bare])'
  1
  ["split","batch","link","edge","flag","holder","answer"]
  ["link","answer"]
  ["holder","answer"]
  [["link","strength"],["ends_polling","request"]]
  $ causeway rules --help | grep '^  kinds'
    kinds                       list the rule kinds and the clauses each takes
