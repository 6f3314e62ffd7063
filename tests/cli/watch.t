`causeway debug --watch` reads the trace once and diagnoses it again each time a pack it
loaded changes (docs/diagnosis.md, "Watching the packs"). The fixture: slow-server's
client waits for the worker's answer; a pack that turns off linux.kernel's message edges
and plain wake-ups leaves the client's wait with no recorded waker, so the client itself
becomes the root cause. `until N PATTERN` waits (5 s at most) for N lines of the output to match.

  $ printf 'pack watch.test {\n  version "0.1.0"\n  requires linux.kernel\n}\n' > $TMP_DIR/pack.cw
  > cat > $TMP_DIR/until <<'EOF'
  > for i in $(seq 50); do
  >   n=$(grep -c -- "$2" "$TMP_DIR/${3:-out}" 2>/dev/null)  # the file may not exist yet
  >   [ "${n:-0}" -ge "$1" ] && exit 0
  >   sleep 0.1
  > done
  > echo "timed out waiting for $1 lines matching '$2'"; exit 1
  > EOF

The first run is the report without --watch; --watch implies --auto, so nothing is asked.

  $ (causeway debug examples/slow-server.trace --rules $TMP_DIR/pack.cw --watch >$TMP_DIR/out 2>&1 &
  >  echo $! >$TMP_DIR/pid; wait $!; echo "exit $?" >$TMP_DIR/status) &
  > bash $TMP_DIR/until 1 '^watching' && grep -E '^(root cause:|  kind:|watching)' $TMP_DIR/out
  root cause: process cw-server 812, thread cw-srv-worker 813
    kind: LongRunning (what the hang waited for)
  watching [0-9]+ packs for changes; Ctrl-C ends (re)

A rule added to the pack: a separator with the time, the file and the run's number, then
the new report, whose root cause moved.

  $ printf '\ndisable linux.kernel/message\ndisable linux.kernel/wakeup.default\n' >> $TMP_DIR/pack.cw
  > bash $TMP_DIR/until 2 '^root cause:' && sed -n '/run 2 ===/,$p' $TMP_DIR/out | grep -E '^(===|root cause:|  kind:)' | sed "s|$TMP_DIR/||"
  === [0-9]{2}:[0-9]{2}:[0-9]{2} pack.cw changed: run 2 === (re)
  root cause: process cw-client 811, thread cw-client 811
    kind: LongWait (the hang itself)

A broken edit, saved as editors do (a new file renamed over the pack), prints the error
at its file:line:col and no report; the watch goes on.

  $ cp $TMP_DIR/pack.cw $TMP_DIR/edit.tmp && printf 'edge broken {\n  link nosuch\n' >> $TMP_DIR/edit.tmp && mv $TMP_DIR/edit.tmp $TMP_DIR/pack.cw
  > bash $TMP_DIR/until 1 '^no diagnosis' && sed -n '/run 3 ===/,$p' $TMP_DIR/out | sed "s|$TMP_DIR/||"
  === [0-9]{2}:[0-9]{2}:[0-9]{2} pack.cw changed: run 3 === (re)
  
  pack.cw:9:14: error: expected '}' to close rule 'broken'
      link nosuch
                 ^
  no diagnosis: the packs have errors; waiting for the next change
  $ kill -0 $(cat $TMP_DIR/pid) && echo still watching
  still watching

A file that is not a pack (an editor's swap file) starts no run; the next fix does, and
the diagnosis is the same as before the broken edit.

  $ touch $TMP_DIR/.pack.cw.swp && sleep 0.5 && grep -c '^===' $TMP_DIR/out
  2
  $ printf 'pack watch.test {\n  version "0.1.0"\n  requires linux.kernel\n}\n' > $TMP_DIR/pack.cw
  > bash $TMP_DIR/until 3 '^root cause:' && sed -n '/run 4 ===/,$p' $TMP_DIR/out | grep -E '^(===|root cause:)' | sed "s|$TMP_DIR/||"
  === [0-9]{2}:[0-9]{2}:[0-9]{2} pack.cw changed: run 4 === (re)
  root cause: process cw-server 812, thread cw-srv-worker 813

Ctrl-C (SIGINT) ends the watch with exit 0.

  $ kill -INT $(cat $TMP_DIR/pid) && for i in $(seq 50); do [ -s $TMP_DIR/status ] && break; sleep 0.1; done; cat $TMP_DIR/status
  exit 0

With --json, one JSON document per run, one per line (the separators go to standard
error), each with the run's number and the files that changed; a run whose pack is
broken gives its errors.

  $ (causeway debug examples/slow-server.trace --rules $TMP_DIR/pack.cw --watch --json >$TMP_DIR/json 2>$TMP_DIR/json.err &
  >  echo $! >$TMP_DIR/pid; wait $!; echo "exit $?" >$TMP_DIR/status) &
  > bash $TMP_DIR/until 1 '^watching' json.err && printf '\ndisable linux.kernel/message\ndisable linux.kernel/wakeup.default\n' >> $TMP_DIR/pack.cw
  > bash $TMP_DIR/until 2 '"watch"' json && printf 'edge broken {\n' >> $TMP_DIR/pack.cw
  > bash $TMP_DIR/until 3 '"watch"' json; kill -INT $(cat $TMP_DIR/pid)
  > for i in $(seq 50); do [ -s $TMP_DIR/status ] && break; sleep 0.1; done; cat $TMP_DIR/status
  > wc -l < $TMP_DIR/json
  > jq -c '[.watch.run, (.watch.changed | map(sub(".*/"; ""))), .root_causes[0].tid, (.pack_errors // [] | map([(.file | sub(".*/"; "")), .line, .column]))]' $TMP_DIR/json
  exit 0
  3
  [1,[],813,[]]
  [2,["pack.cw"],811,[]]
  [3,["pack.cw"],null,[["pack.cw",8,14]]]

--watch cannot save answers: the saved pack would start a run.

  $ causeway debug examples/slow-server.trace --watch --save-answers $TMP_DIR/saved
  causeway debug: --save-answers excludes --watch
  run 'causeway debug --help' for the options
  [1]
