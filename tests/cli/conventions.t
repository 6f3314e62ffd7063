The command line's conventions: usage, unknown commands, --version, help that is true for
each command, the standard packs found beside the binary (never by the source path it was
built from), and the JSON's schema version.

A bare `causeway` prints its usage, and exits 1: nothing was done.

  $ causeway > $TMP_DIR/out 2>&1; echo $?; sed -n 3p $TMP_DIR/out
  1
  Usage: causeway [OPTIONS] SUBCOMMAND

An unknown command is named, with the close one when there is one; exit 1.

  $ causeway grpah examples/server-loop.trace
  causeway: unknown command 'grpah'; did you mean 'graph'?
  run 'causeway --help' for what each does
  [1]
  $ causeway bogus
  causeway: unknown command 'bogus' (the commands: graph, debug, ui, hangs, export, latency, convert, eval, record, mark, rules, flags, cache, fleet)
  run 'causeway --help' for what each does
  [1]
  $ causeway rules chek stdlib-rules
  causeway rules: unknown command 'chek'; did you mean 'check'?
  run 'causeway rules --help' for what each does
  [1]
  $ causeway rules 2>&1 | sed -n 2p
  Usage: causeway rules [OPTIONS] SUBCOMMAND

--version gives the commit and where this binary finds its data.

  $ causeway --version
  causeway [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}|unknown)\) (re)
  standard packs: /.*/share/causeway/rules (re)
  preload library: /.*/lib(/causeway)?/libcauseway-preload.so (re)

Each command's help speaks of that command: only those that load packs mention them (`record
start` does, for its holder rules),
`record status` does not speak of a CMD, `eval --help` shows no path of the build.

  $ for c in convert mark "rules fmt" "record stop" "record status"; do causeway $c --help | grep -l -e '--rules' -e 'CMD' >/dev/null && echo "$c"; done; echo done
  done
  $ causeway eval --help | grep -c "$PWD"
  0
  [1]

The standard packs are found under the binary's prefix, or at $CAUSEWAY_STDLIB; missing or
empty, they are an error (exit 2) that says what is missing, unless --no-stdlib.

  $ CAUSEWAY_STDLIB=$TMP_DIR/none causeway graph examples/server-loop.trace
  causeway: the standard rule packs are missing: no folder .*/none \(\$CAUSEWAY_STDLIB\); point CAUSEWAY_STDLIB at a folder of packs \(a copy of stdlib-rules\), or pass --no-stdlib and give the packs with --rules (re)
  [2]
  $ mkdir -p $TMP_DIR/empty && CAUSEWAY_STDLIB=$TMP_DIR/empty causeway debug examples/slow-server.trace --auto
  causeway: the standard rule packs are missing: .*/empty holds no pack; point CAUSEWAY_STDLIB at a folder of packs \(a copy of stdlib-rules\), or pass --no-stdlib and give the packs with --rules (re)
  [2]
  $ CAUSEWAY_STDLIB=$TMP_DIR/none causeway graph examples/server-loop.trace --no-stdlib | head -1
  trace: 42 events, 3 processes, 3 threads, 0 lost events

Another checkout's stdlib-rules replaces the standard packs: each loads once, and its
tests.cw belongs to its pack.

  $ cp -r stdlib-rules $TMP_DIR/other-checkout && causeway rules check $TMP_DIR/other-checkout
  9 packs checked (glib.gio, glibc.pthread, libevent, linux.kernel, nginx, node.libuv, postgresql, python.asyncio, redis), 0 warnings
  node.libuv/job.wait has priority 2: it names the cuts it shares with other splits
  nginx/pool.idle has priority 1: it names the cuts it shares with other splits
  node.libuv/pool.idle has priority 1: it names the cuts it shares with other splits
  $ causeway rules test $TMP_DIR/other-checkout | tail -1
  [0-9]+ passed, 0 failed (re)

Every --json output carries its schema version; `lost_per_cpu` is an object keyed by CPU.

  $ causeway graph examples/server-loop.trace --json | jq -c '[.schema_version, .trace.lost_per_cpu]'
  [1,{}]
  $ causeway record status --dir $TMP_DIR/no-recorder --json | jq -c '[.schema_version, .running]'
  [1,false]
