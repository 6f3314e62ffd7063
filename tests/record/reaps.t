Children reaped when calls are taken from the scheduler (`record --calls scheduler`): a
parent that polls for its child (wait4 with WNOHANG between sleeps) neither blocks in the
wait nor is woken by the child's exit, which comes while it sleeps. The sched_process_wait
tracepoint fires as a wait begins: the wait that will reap an exited child is written, with
that child's pid as its return value; the looks that find nothing are not
(docs/recording.md).

cw-prog-waitchild poll: the child (cw-reap-child) sleeps 400 ms and exits; the parent calls
wait4(WNOHANG) and sleeps 10 ms until the wait returns the child. One wait4 is written, and
it returns the child's pid:

  $ causeway record --calls scheduler -o $TMP_DIR/reap.cwt -- cw-prog-waitchild poll 2>/dev/null
  $ causeway convert $TMP_DIR/reap.cwt -o $TMP_DIR/reap.txt >/dev/null 2>&1
  $ child=$(grep -oE "^(update )?process [0-9]+ comm=cw-reap-child" $TMP_DIR/reap.txt | head -1 | grep -oE "[0-9]+"); grep -E " syscall_exit (cpu=[0-9]+ )?name=wait4 " $TMP_DIR/reap.txt | sed -E "s/^[0-9]+ [0-9]+ //; s/cpu=[0-9]+ //; s/ret=$child\$/ret=CHILD/"
  syscall_exit name=wait4 ret=CHILD

The child's exit is joined to it (linux.kernel `exit.reaped`), and the diagnosis of the
parent's loop follows that edge to the child's sleep, as with the syscall programs:

  $ causeway graph $TMP_DIR/reap.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-reap-child") | [.from.kind, .to.kind, .kind, .strength, .rule]]'
  [["exit","syscall_exit","exit","strong","linux.kernel/exit.reaped"]]
  $ causeway debug $TMP_DIR/reap.cwt --min-hang 0.1 --auto --no-cache 2>/dev/null | grep -E '^(root cause|  kind|  what|hang)' | sed -E 's/[0-9]+/N/g'
  root cause: process cw-reap-child N, thread cw-reap-child N
    kind: LongWait (what the hang waited for)
    what: blocked N.N ms in clock_nanosleep
    kind: RepeatedYield (the hang itself)
    what: looped for N.N ms: clock_nanosleep ×N
  hang: RepeatedYield of thread cw-prog-waitchi N (process cw-prog-waitchi N)
