Hangs still in progress: the recording ends while a thread is still blocked, so its wait
has no waker. At the end `record` writes who holds what each still-blocked thread waits
for (docs/recording.md): file locks from /proc/locks, mutex owners where the packs'
holder rules say a lock keeps them.

The recording is system-wide, so other threads blocked at its end get holders too; the
checks look at the program's own. `--hang` names the thread that hangs (which thread
`--hang auto` picks is another matter).

cw-prog-lockhold: cw-holder takes an exclusive flock and keeps it, sleeping; cw-waiter
asks for the same lock and blocks forever. Recorded for 1 s (record then stops the
program).

  $ causeway record --duration 1 -o $TMP_DIR/hold.cwt -- cw-prog-lockhold 2>/dev/null
  $ causeway convert $TMP_DIR/hold.cwt --to text -o $TMP_DIR/hold.txt 2>/dev/null
  $ grep -c ' lock_held .*lock="FLOCK WRITE"' $TMP_DIR/hold.txt
  1

The stdlib joins them (linux.kernel's lock.holder) into a `holder` edge from the holder's
last segment to the waiting one, and the diagnosis follows it: the hang is the waiter's
wait, and what it waits on is cw-holder.

  $ causeway graph $TMP_DIR/hold.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "holder" and .to.comm == "cw-waiter") | [.from.comm, .to.comm, .rule]]'
  [["cw-holder","cw-waiter","linux.kernel/lock.holder"]]
  $ causeway debug $TMP_DIR/hold.cwt --hang cw-waiter --min-hang 0.5 --auto --json 2>/dev/null > $TMP_DIR/hold.json
  $ jq -c '[.hang.comm, .hang.kind]' $TMP_DIR/hold.json
  ["cw-waiter","LongWait"]
  $ jq -c '[.path[] | .comm]' $TMP_DIR/hold.json
  ["cw-holder","cw-waiter"]

cw-prog-mutexhold: thread cw-owner locks a mutex and sleeps 30 s with it held; the main
thread cw-mutexwait blocks on the same mutex. glibc.pthread's holder rule says where the
owner's tid is (8 bytes past the futex word); `record` reads it at the end.

  $ causeway record --duration 1 -o $TMP_DIR/mutex.cwt -- cw-prog-mutexhold 2>/dev/null
  $ causeway convert $TMP_DIR/mutex.cwt --to text -o $TMP_DIR/mutex.txt 2>/dev/null
  $ grep -c ' lock_held .*lock="owner (glibc.pthread/mutex.owner)"' $TMP_DIR/mutex.txt
  1
  $ causeway debug $TMP_DIR/mutex.cwt --hang cw-mutexwait --min-hang 0.5 --auto --json 2>/dev/null > $TMP_DIR/mutex.json
  $ jq -c '[.hang.comm, .hang.kind]' $TMP_DIR/mutex.json
  ["cw-mutexwait","LongWait"]
  $ jq -c '[.path[] | .comm]' $TMP_DIR/mutex.json
  ["cw-owner","cw-mutexwait"]

A script waiting on a subprocess's pipe: cat reads what sleep would write, and sleep
writes nothing for 3 s. linux.kernel's stream.peer rule says which calls wait on an fd;
`record` finds the process with the pipe's other end open.

  $ causeway record --duration 1 -o $TMP_DIR/pipe.cwt -- sh -c 'sleep 3 | cat' 2>/dev/null
  $ causeway debug $TMP_DIR/pipe.cwt --hang cat --min-hang 0.5 --auto --json 2>/dev/null > $TMP_DIR/pipe.json
  $ jq -c '[.hang.comm, .hang.kind]' $TMP_DIR/pipe.json
  ["cat","LongWait"]
  $ jq -c '[.root_causes[0].comm, .root_causes[0].kind, .root_causes[0].stack_frames[0:3][].function]' $TMP_DIR/pipe.json
  ["sleep","LongWait","__schedule","schedule","do_nanosleep"]
  $ jq -c '[.path[-2:][] | [.comm, .edge_kind]]' $TMP_DIR/pipe.json
  [["sleep","holder"],["cat",null]]

What comes before sleep's sleep on the path is how its work began, and that depends on the
page cache: usually the fork from sh, but with cold caches sleep and cat look up the same
locale files at once and one waits for the other's lookup (a wakeup from cat), so the path
is not pinned here.

An always-on recording (`record start`, a ring of files) reads the same holder rules
when it stops: stopped while cw-mutexwait still waits, the ring holds the owner that
glibc.pthread's rule found.

  $ causeway record start --size 10M --dir $TMP_DIR/ringhold >/dev/null 2>&1
  > cw-prog-mutexhold >/dev/null 2>&1 & prog=$!
  > sleep 1
  > causeway record stop --dir $TMP_DIR/ringhold -o $TMP_DIR/ringhold.cwt >/dev/null 2>&1
  > kill $prog
  > causeway convert $TMP_DIR/ringhold.cwt --to text -o $TMP_DIR/ringhold.txt 2>/dev/null
  > grep ' lock_held .*lock="owner (glibc.pthread/mutex.owner)"' $TMP_DIR/ringhold.txt | grep -c "waiter=$prog "
  1
