`causeway fleet` (docs/fleet.md): many traces diagnosed without questions into a store of
hangs, one row each with a signature that is the same for the same bug on any host; `top`
and `query` ask the store. Here a SQLite store (tests/fleet/fleet_clickhouse.sh checks the
same against ClickHouse).

  $ causeway fleet --help | grep -E "^  (diagnose|top|query|schema)"
    diagnose                    diagnose many traces without questions, in parallel, one row per hang into a store
    top                         the most frequent hangs in a store, by signature, program version, host or day
    query                       run one SQL SELECT on a store's table `hangs`
    schema                      print the store's table: its SQL and columns

Three real-suite recordings as two hosts' rings: two hosts had the same flock hang (a lock
holder sleeping), one also a lock released by its holder's exit. Each row's host is its
folder's name.

  $ mkdir -p $TMP_DIR/hosts/db-1 $TMP_DIR/hosts/db-2
  $ cp tests/real/traces/07-flock-wait.cwt tests/real/traces/23-flock-exit.cwt $TMP_DIR/hosts/db-1/
  $ cp tests/real/traces/07-flock-wait.cwt $TMP_DIR/hosts/db-2/
  $ causeway fleet diagnose $TMP_DIR/hosts --host-from-folder --hang flock --no-cache -o $TMP_DIR/hangs.db --json | jq -c '[.traces, .hangs, .no_hang, .failed]'
  [3,3,0,0]

The same bug on both hosts is one signature seen on two hosts:

  $ causeway fleet top $TMP_DIR/hangs.db --json | jq -c '.rows[] | [.hangs, .hosts, .program, .hang_wait, .root_program, .root_call]'
  [2,2,"flock","flock, ended by lock","lock-holder","clock_nanosleep"]
  [1,1,"flock","flock, ended by exit","exiting-holder","clock_nanosleep"]

What a signature is made of: no pid, tid, address or time.

  $ causeway fleet query $TMP_DIR/hangs.db "SELECT DISTINCT signature_text FROM hangs WHERE root_program = 'lock-holder'" --json | jq -r '.[0].signature_text'
  program: flock (flock)
  version: a5fd7bb322f2f9daf9b6144353b71363992a81b6
  hang: LongWait, flock, ended by lock
  hang stack: flock
  root cause: lock-holder LongWait, clock_nanosleep
  root stack: clock_nanosleep
  path: lock-holder -> flock
  

By host, and the rows themselves:

  $ causeway fleet top $TMP_DIR/hangs.db --by host
  host  hangs  signatures  last_seen
  db-1  2      2           20[0-9-]+ [0-9:]+ (re)
  db-2  1      1           20[0-9-]+ [0-9:]+ (re)

  $ causeway fleet query $TMP_DIR/hangs.db "SELECT host, root_program, path_shape, questions, hang_seconds > 1 AS long FROM hangs ORDER BY host, root_program"
  host  root_program    path_shape               questions  long
  db-1  exiting-holder  exiting-holder -> flock  0          1
  db-1  lock-holder     lock-holder -> flock     0          1
  db-2  lock-holder     lock-holder -> flock     0          1

A ring may hold several hangs: `--hangs N` diagnoses each of the first N candidates that
stopped responding (`causeway hangs` lists them), a row each. The shell pipe: the shell
waiting on the pipe, sort computing, the subshell waiting for it; sort in each.

  $ causeway fleet diagnose tests/real/traces/05-shell-pipe.cwt --hangs 3 --no-cache -o $TMP_DIR/three.db --json | jq -c '[.traces, .hangs]'
  [1,3]
  $ causeway fleet query $TMP_DIR/three.db "SELECT program, hang_kind, root_program FROM hangs ORDER BY hang_seconds DESC"
  program  hang_kind    root_program
  bash     LongWait     sort
  sort     LongRunning  sort
  bash     LongWait     sort

A bad query is the input's error (exit 1) with SQLite's words; a store opened to be asked
is only read; a file that is no store is said to be none; a link is not followed.

  $ causeway fleet query $TMP_DIR/hangs.db "SELECT nonsense FROM hangs"
  causeway fleet: .*/hangs.db: no such column: nonsense (re)
  [1]
  $ causeway fleet query $TMP_DIR/hangs.db "DELETE FROM hangs"
  causeway fleet: .*/hangs.db: attempt to write a readonly database (re)
  [1]
  $ causeway fleet top tests/real/traces/07-flock-wait.cwt
  causeway fleet: tests/real/traces/07-flock-wait.cwt: file is not a database
  [1]
  $ ln -s $TMP_DIR/hangs.db $TMP_DIR/link.db && causeway fleet top $TMP_DIR/link.db
  causeway fleet: .*/link.db: is a symbolic link; a store is opened only as itself (re)
  [1]

A trace that cannot be read is named, and the batch goes on (exit 1):

  $ echo "not a trace" > $TMP_DIR/bad.cwt
  $ causeway fleet diagnose $TMP_DIR/bad.cwt tests/real/traces/07-flock-wait.cwt --hang flock --no-cache -o $TMP_DIR/more.db
  .*/bad.cwt: causeway: .*/bad.cwt: not a causeway trace \(no CWTRACE header\) (re)
  hint: a text trace starts with 'causeway-trace', perf script output with an event line; --trace-format perf-script reads it as perf script output anyway
  
  2 traces in .* 1 hangs added to .*/more.db, 0 without a hang, 1 failed (re)
  [1]

The table, for SQLite and for ClickHouse:

  $ causeway fleet schema | head -3
  CREATE TABLE IF NOT EXISTS hangs (
    host TEXT NOT NULL,
    trace TEXT NOT NULL,
  $ causeway fleet schema --clickhouse | tail -2
    causeway String
  ) ENGINE = MergeTree() ORDER BY (signature, host, recorded_at);
