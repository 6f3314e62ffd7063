The overhead bench's alternation (bench/overhead/alternate.sh): with
$CAUSEWAY_BENCH_ALTERNATE=PERIOD:STATES the always-on recorder attaches and detaches its
programs of every context switch, wake-up and socket transfer every PERIOD seconds, and
logs each switch with its wall-clock time in recorder.log. The four programs' links come
and go with it (one by one: a look in between may count 1 to 3).

  $ CAUSEWAY_BENCH_ALTERNATE=1:all,none causeway record start --size 4M --dir $TMP_DIR/rec >/dev/null; echo "exit $?"
  exit 0
  $ hot() { bpftool link list 2>/dev/null | grep -cE "tp '(sched_switch|sched_waking|sock_send_length|sock_recv_length)'"; }
  > seen=" "; for i in $(seq 40); do seen="$seen$(hot) "; sleep 0.1; done
  > for n in 0 4; do case "$seen" in *" $n "*) echo "$n links seen" ;; *) echo "$n links never seen" ;; esac; done
  > echo "$seen" | tr ' ' '\n' | awk '$1 > 4 { more++ } END { print more + 0, "counts above 4" }'
  0 links seen
  4 links seen
  0 counts above 4
  $ sleep 0.5; causeway record stop --dir $TMP_DIR/rec >/dev/null 2>&1
  $ grep -c 'causeway: bench alternation: [0-9]*\.[0-9]* all$' $TMP_DIR/rec/recorder.log | awk '{ print ($1 >= 2) }'
  1
  $ grep -o 'bench alternation: .*' $TMP_DIR/rec/recorder.log | awk '{ print $4 }' | head -3 | tr '\n' ' '; echo
  all none all 

A wrong value is said, before anything is loaded, and nothing records:

  $ CAUSEWAY_BENCH_ALTERNATE=1:all,some causeway record start --size 4M --dir $TMP_DIR/bad 2>&1; echo "exit $?"
  causeway: cannot record: $CAUSEWAY_BENCH_ALTERNATE: unknown state 'some' in the alternation (all, scheduler, sockets, none)
  exit 2
  $ causeway record status --dir $TMP_DIR/bad
  no recording is running in .*/bad (re)
