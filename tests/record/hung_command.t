`record -- CMD` ends when CMD does: Ctrl-C reaches both, and CMD is given the time to end.
A CMD that ignores Ctrl-C and SIGTERM (or hangs) must not keep the recording going for
ever: a second Ctrl-C stops the recording and writes the trace, says that the command
still runs and its pid, and leaves it running.

Ctrl-C is played by SIGINT to the process group of causeway and the command (setsid makes
causeway the leader of a group of its own):

  $ setsid causeway record -o $TMP_DIR/hung.cwt -- bash -c 'trap "" INT TERM; sleep 1000' 2>$TMP_DIR/hung.log & rec=$!
  > sleep 2; kill -INT -- -$rec; sleep 1.5; kill -INT -- -$rec
  > for i in $(seq 100); do kill -0 $rec 2>/dev/null || break; sleep 0.1; done
  > if kill -0 $rec 2>/dev/null; then echo "still recording"; kill -9 -- -$rec; else wait $rec; echo "exit $?"; fi
  > pid=$(grep -o 'the command bash (pid [0-9]*) still runs, left' $TMP_DIR/hung.log | grep -o '[0-9]*')
  > kill -0 "$pid" && echo "the command still runs"; kill -9 -- -$rec
  > sed -E "s#$TMP_DIR#TMP#g; s/pid $pid\\)/pid CMD)/; s/[0-9]+ events, .*; the command/N events; the command/" $TMP_DIR/hung.log
  exit 0
  the command still runs
  causeway: waiting for the command bash (pid CMD) to end; Ctrl-C again stops the recording and writes the trace
  causeway: Ctrl-C again: stopping the recording; the command bash (pid CMD) still runs, left as it is
  causeway: wrote TMP/hung.cwt: N events; the command (pid CMD) still runs

The trace is whole: it reads, and holds the command.

  $ causeway graph $TMP_DIR/hung.cwt --json 2>/dev/null | jq -c '[.trace.events > 10, .trace.processes > 1]'
  [true,true]
  $ causeway convert $TMP_DIR/hung.cwt -o $TMP_DIR/hung.txt --to text >/dev/null 2>&1; grep -c 'marker text="causeway: command [0-9]* bash' $TMP_DIR/hung.txt
  1

SIGTERM, sent to causeway alone (the command never sees it), stops the recording at once
the same way:

  $ setsid causeway record -o $TMP_DIR/term.cwt -- bash -c 'trap "" INT TERM; sleep 1000' 2>$TMP_DIR/term.log & rec=$!
  > sleep 2; kill -TERM $rec
  > for i in $(seq 100); do kill -0 $rec 2>/dev/null || break; sleep 0.1; done
  > if kill -0 $rec 2>/dev/null; then echo "still recording"; kill -9 -- -$rec; else wait $rec; echo "exit $?"; fi
  > kill -9 -- -$rec
  > sed -E "s#$TMP_DIR#TMP#g; s/pid [0-9]+\\)/pid CMD)/g; s/[0-9]+ events, .*; the command/N events; the command/" $TMP_DIR/term.log
  exit 0
  causeway: SIGTERM: stopping the recording; the command bash (pid CMD) still runs, left as it is
  causeway: wrote TMP/term.cwt: N events; the command (pid CMD) still runs

The command's name reaches the terminal with its control bytes shown, not acted on:

  $ causeway record -o $TMP_DIR/esc.cwt -- $'\e]0;pwned\a' 2>&1 | grep 'cannot run'
  causeway: cannot run \x1b]0;pwned\x07: No such file or directory
