A disk that fills up while recording is the environment's failure, not the input's:
`record` exits 2, says which file, how much of it was written and the system's reason,
stops recording but lets the command run to its end, and still says how the command ended.
The file keeps its whole chunks and no end chunk, so readers say it is incomplete rather
than taking it for a whole recording.

A 256 KiB file system holds the header and the first tables, not the first chunk of events:

  $ mkdir $TMP_DIR/full && mount -t tmpfs -o size=256k none $TMP_DIR/full && trap 'umount $TMP_DIR/full' EXIT
  > causeway record -o $TMP_DIR/full/t.cwt -- sh -c 'cw-prog-busy 2; echo done >$TMP_DIR/full-disk-ran; exit 3' 2>$TMP_DIR/full.log; echo "exit $?"
  > stat -c %s $TMP_DIR/full/t.cwt >$TMP_DIR/size; cp $TMP_DIR/full/t.cwt $TMP_DIR/partial.cwt
  exit 2
  $ sed -E "s#$TMP_DIR#TMP#g; s/[0-9]+ (bytes|events)/N \1/" $TMP_DIR/full.log
  causeway: TMP/full/t.cwt: cannot write after N bytes: No space left on device; recording stopped, waiting for the command to end
  causeway: TMP/full/t.cwt is incomplete: it holds the N events written before the error and no end chunk; the command exited with status 3

The command ran to its end, and the size said is the file's:

  $ cat $TMP_DIR/full-disk-ran
  done
  $ grep -q "after $(cat $TMP_DIR/size) bytes" $TMP_DIR/full.log && echo same
  same
  $ causeway graph $TMP_DIR/partial.cwt 2>&1 | grep -o 'note: no end chunk.*'
  note: no end chunk: the recording did not finish, or the file was cut short

The always-on recorder stops itself when its disk fills up. Nobody is watching it then,
so its status file says when and why (rewritten in place when there is no room for a new
copy), and `record status` says so, rather than only that no recording is running. Its
folder here is a 512 KiB file system:

  $ mkdir -m 700 $TMP_DIR/fullrec && mount -t tmpfs -o size=512k,mode=0700 none $TMP_DIR/fullrec && trap 'umount $TMP_DIR/fullrec' EXIT
  > causeway record start --size 100M --dir $TMP_DIR/fullrec >/dev/null; echo "start: exit $?"
  > cw-prog-busy 3 & for i in $(seq 300); do causeway record status --dir $TMP_DIR/fullrec --json | jq -e .running >/dev/null || break; sleep 0.1; done; wait
  > causeway record status --dir $TMP_DIR/fullrec | sed -E "s#$TMP_DIR#TMP#g; s/pid [0-9]+/pid N/; s/at [0-9T:-]+Z:/at TIME:/; s/[0-9]+ bytes/N bytes/; s/ring-[0-9]+/ring-N/"
  > causeway record status --dir $TMP_DIR/fullrec --json | jq -c '[.running, .stopped, (now - (.stopped_at | fromdateiso8601) | . >= 0 and . < 60), (.stop_error | test("No space left on device"))]'
  start: exit 0
  no recording is running in TMP/fullrec
    the recorder (pid N) stopped itself at TIME: TMP/fullrec/ring/ring-N.cwt: cannot write after N bytes: No space left on device
  [false,true,true,true]
