The recorder's folder (`record start --dir D`, and the foreground `record --dir D`) is
written by root: recorder.log opened and emptied, status.json.tmp and recorder.pid.tmp
written and renamed, the ring's folder removed. A folder another user owns or can write
(or a folder above it they can change) would let them plant links there that make root
empty or overwrite any file; `record stop` signalled whatever pid the pid file named. So
causeway refuses such a folder, creates its own 0700, and takes for the recorder only the
process holding a lock in its folder that runs causeway.

A second, unprivileged user plays the other user; a file of root's stands for what it
would point links at.

  $ [ "$(id -u)" = 0 ] || { echo "skip: needs root to create a second user"; exit 77; }
  > id -u cwtest2 >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin cwtest2 2>/dev/null; id -u cwtest2 >/dev/null
  > chmod 711 $TMP_DIR && mkdir -m 1777 $TMP_DIR/shared && echo keep >$TMP_DIR/precious && chmod 644 $TMP_DIR/precious

A folder of the other user's, in a shared (sticky) folder, with links where the recorder
writes its log and status: refused, exit 1, and the file the links point to keeps its
content. The foreground `--dir`, `status` and `stop` refuse it too (the command is not
run).

  $ setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups sh -c "mkdir -m 700 $TMP_DIR/shared/theirs && ln -s $TMP_DIR/precious $TMP_DIR/shared/theirs/recorder.log && ln -s $TMP_DIR/precious $TMP_DIR/shared/theirs/status.json.tmp && ln -s $TMP_DIR/precious $TMP_DIR/shared/theirs/recorder.pid.tmp"
  $ causeway record start --size 2M --dir $TMP_DIR/shared/theirs 2>&1 | sed -E "s#$TMP_DIR#TMP#g; s/uid [0-9]+/uid N/"; echo "exit ${PIPESTATUS[0]}"; cat $TMP_DIR/precious
  causeway: TMP/shared/theirs: the recorder's folder is owned by user cwtest2 (uid N), not by you: refusing to use it (its files could be links to files of yours; give --dir a folder of your own)
  exit 1
  keep
  $ causeway record --dir $TMP_DIR/shared/theirs -o $TMP_DIR/fg.cwt -- touch $TMP_DIR/ran 2>&1 | sed -E "s#$TMP_DIR#TMP#g; s/uid [0-9]+/uid N/"; echo "exit ${PIPESTATUS[0]}"; test -e $TMP_DIR/ran || echo "not run"; cat $TMP_DIR/precious
  causeway: TMP/shared/theirs: the recorder's folder is owned by user cwtest2 (uid N), not by you: refusing to use it (its files could be links to files of yours; give --dir a folder of your own)
  exit 1
  not run
  keep
  $ for c in status stop; do causeway record $c --dir $TMP_DIR/shared/theirs 2>&1 | grep -c 'not by you: refusing'; echo "exit ${PIPESTATUS[0]}"; done
  1
  exit 1
  1
  exit 1

A folder anyone can write, with a link planted in it; the folder given as a link the other
user planted; a folder inside one the other user owns (they could swap it after it was
checked): each refused, and nothing written through them.

  $ mkdir -m 777 $TMP_DIR/open && setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups ln -s $TMP_DIR/precious $TMP_DIR/open/recorder.log
  > causeway record start --size 2M --dir $TMP_DIR/open 2>&1 | sed "s#$TMP_DIR#TMP#g"; echo "exit ${PIPESTATUS[0]}"; cat $TMP_DIR/precious
  causeway: TMP/open: the recorder's folder is writable by other users (mode 0777): refusing to use it (they could plant links in it; chmod 700 it, or give --dir another folder)
  exit 1
  keep
  $ mkdir -m 700 $TMP_DIR/roots && echo mine >$TMP_DIR/roots/recorder.log && setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups ln -s $TMP_DIR/roots $TMP_DIR/shared/link
  > causeway record start --size 2M --dir $TMP_DIR/shared/link 2>&1 | sed "s#$TMP_DIR#TMP#g"; echo "exit ${PIPESTATUS[0]}"; cat $TMP_DIR/roots/recorder.log
  causeway: TMP/shared/link: the recorder's folder is a symbolic link: refusing to follow it (give --dir the folder itself)
  exit 1
  mine
  $ setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups mkdir -m 755 $TMP_DIR/shared/home
  > causeway record start --size 2M --dir $TMP_DIR/shared/home/rec 2>&1 | sed -E "s#$TMP_DIR#TMP#g; s/uid [0-9]+/uid N/"; echo "exit ${PIPESTATUS[0]}"; test -e $TMP_DIR/shared/home/rec || echo "not created"
  causeway: TMP/shared/home is owned by user cwtest2 (uid N): they could replace the recorder's folder inside it; refusing to use it (give --dir a folder of your own)
  exit 1
  not created

A folder of root's own, new or not, is made 0700 by `record start` and by the foreground
`record` alike:

  $ causeway record --dir $TMP_DIR/shared/fg -o $TMP_DIR/fg.cwt -- true 2>/dev/null; stat -c %a $TMP_DIR/shared/fg
  700
  $ causeway record start --size 2M --dir $TMP_DIR/shared/mine >/dev/null && stat -c %a $TMP_DIR/shared/mine && causeway record stop --dir $TMP_DIR/shared/mine
  700
  stopped; the ring stays in .*/shared/mine/ring (re)

`record stop` signals only the recorder: the process holding the lock on recorder.lock in
its folder, checked to run causeway. A pid file naming another process (here the other
user's `sleep`, with its true start time) is taken for a stale one and removed; the
process is never signalled.

  $ mkdir -m 700 $TMP_DIR/forged
  > setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups sleep 60 & victim=$!; sleep 0.3
  > echo "$victim $(awk '{print $22}' /proc/$victim/stat)" >$TMP_DIR/forged/recorder.pid
  > causeway record stop --dir $TMP_DIR/forged 2>&1 | sed -E "s#$TMP_DIR#TMP#g; s/pid $victim/pid VICTIM/"; echo "exit ${PIPESTATUS[0]}"
  > sleep 0.3; kill -0 $victim && echo "the sleep is alive"; kill $victim
  causeway: note: the recorder that ran in TMP/forged (pid VICTIM) is not running: it does not hold the recorder's lock, so it is not the recorder (the pid file was not written by a running one); removed its stale pid file (its log: TMP/forged/recorder.log)
  causeway: no recording is running in TMP/forged; start one with 'causeway record start'
  exit 2
  the sleep is alive

The same with a recorder running in that folder: `stop` stops the recorder, not the
process the pid file was rewritten to name (that file is then stale, and removed). The
recorder, whose parent has exited, may stay a zombie here: pid 1 may reap nothing.

  $ causeway record start --size 2M --dir $TMP_DIR/forged >/dev/null; recorder=$(cut -d' ' -f1 $TMP_DIR/forged/recorder.pid)
  > setpriv --reuid=cwtest2 --regid=cwtest2 --clear-groups sleep 60 & victim=$!; sleep 0.3
  > echo "$victim $(awk '{print $22}' /proc/$victim/stat)" >$TMP_DIR/forged/recorder.pid
  > causeway record stop --dir $TMP_DIR/forged 2>&1 | sed -E "s#$TMP_DIR#TMP#g; s/pid $victim/pid VICTIM/"
  > sleep 0.3; kill -0 $victim && echo "the sleep is alive"
  > state=$(awk '{print $3}' /proc/$recorder/stat 2>/dev/null); [ -z "$state" ] || [ "$state" = Z ] && echo "the recorder stopped"; kill $victim
  causeway: note: the recorder that ran in TMP/forged (pid VICTIM) is not running: it does not hold the recorder's lock, so it is not the recorder (the pid file was not written by a running one); removed its stale pid file (its log: TMP/forged/recorder.log)
  stopped; the ring stays in TMP/forged/ring
  the sleep is alive
  the recorder stopped
