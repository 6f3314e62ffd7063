A disk that fills up while recording (issue 18, defect 5) is the environment's failure, not
the input's: `record` exits 2, says which file, how much of it was written and the system's
reason, stops recording but lets the command run to its end, and still says how the command
ended. The file keeps its whole chunks and no end chunk, so readers say it is incomplete
rather than taking it for a whole recording.

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
