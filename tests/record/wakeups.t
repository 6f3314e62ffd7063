Wake-ups with a known cause, recorded from real programs.

A condition-variable hand-off: the signalling thread's futex wake and the waiter's
futex wait use the same address, so the wake-up is a strong futex edge between the two
threads of the program.

  $ causeway record -o $TMP_DIR/condvar.cwt -- cw-prog-condvar 2>/dev/null
  $ causeway graph $TMP_DIR/condvar.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "futex" and (.from.comm | startswith("cw-prog")) and .from.pid == .to.pid and .from.tid != .to.tid) | [.strength, .rule]] | unique'
  [["strong","linux.kernel/futex.wake"]]

A child's exit wakes the parent's wait4, which returns the child's pid: the exit is joined
to the wait4 that reaped it, and the wake-up the exit made is an exit edge too.

  $ causeway record -o $TMP_DIR/wait.cwt -- cw-prog-waitchild 2>/dev/null
  $ causeway graph $TMP_DIR/wait.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "exit" and (.from.comm | startswith("cw-prog"))) | [.strength, .from.kind, .from.code, .to.name, .to.ret == .from.pid, .to.pid == .from.pid, .rule]] | .[]'
  ["strong","wakeup",null,null,false,false,"linux.kernel/exit.wake"]
  ["strong","exit",1792,"wait4",true,false,"linux.kernel/exit.reaped"]

A timerfd armed by one thread and read by another: the arm and the expiry its reader
took are joined by a strong timer edge. (The expiry's wake-up, raised in an interrupt, is
a timer edge too, from the arming thread: tests/record/timer_owner.t.)

  $ causeway record -o $TMP_DIR/timer.cwt -- cw-prog-timerfd 2>/dev/null
  $ causeway graph $TMP_DIR/timer.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.kind == "timer" and .from.kind == "timer_arm" and (.from.comm | startswith("cw-prog"))) | [.strength, .from.kind, .to.kind, .from.timer == .to.timer, .from.tid != .to.tid]] | .[]'
  ["strong","timer_arm","timer_fire",true,true]

A wake-up raised in an interrupt says nothing about the call of the thread it landed on.
cw-poller polls an empty pipe with a zero timeout in a tight loop on CPU 0, while
cw-napper's 50 µs sleeps end in timer interrupts on that CPU, thousands of them during
those polls: no poll blocked or found anything, so none is recorded, and none half-read
(a poll with no descriptors and no timeout, as an interrupt landing while the call's
record was being filled once cut it short).

  $ causeway record -o $TMP_DIR/irqpoll.cwt -- cw-prog-irqpoll 1000 2>/dev/null
  $ causeway convert $TMP_DIR/irqpoll.cwt -o $TMP_DIR/irqpoll.txt >/dev/null 2>&1
  $ poller=$(grep -oE "process [0-9]+ comm=cw-poller" $TMP_DIR/irqpoll.txt | head -1 | cut -d' ' -f2); echo "polls recorded: $(grep -c " $poller syscall_enter .*name=poll " $TMP_DIR/irqpoll.txt)"
  polls recorded: 0
  $ napper=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-napper" $TMP_DIR/irqpoll.txt | head -1 | cut -d' ' -f2); test $(grep -c "wakeup .*target=$napper interrupt=1" $TMP_DIR/irqpoll.txt) -gt 1000 && echo "timer interrupts woke cw-napper"
  timer interrupts woke cw-napper
