`causeway eval` on a scenario whose command cannot start what it drives (tests/real's
drivers: a server that never listens) says the command's own reason, not only the
recorder's closing line. (`record` itself exits 0 once the trace is written; eval reads
the command's exit from the trace.)

  $ mkdir -p $TMP_DIR/broken-suite/01-broken
  $ printf '#!/bin/sh\necho "driver run.sh: the server did not listen on 127.0.0.1:1 within 5 s" >&2\nexit 1\n' > $TMP_DIR/broken.sh
  $ chmod +x $TMP_DIR/broken.sh
  $ printf '{"title": "t", "command": ["%s"], "hang": "x", "truth": {"hang": {"comm": "x", "kind": "LongWait"}, "root_cause": {"comm": "x", "kind": "LongWait"}}}' $TMP_DIR/broken.sh > $TMP_DIR/broken-suite/01-broken/scenario.json
  $ causeway eval --suite $TMP_DIR/broken-suite 2>&1 >/dev/null | grep '^eval'
  eval \[1/1\] 01-broken: error: the scenario's command failed \(exit 1\): driver run.sh: the server did not listen on 127.0.0.1:1 within 5 s \(recorder: causeway: wrote .*\) \(log: .*\) (re)
