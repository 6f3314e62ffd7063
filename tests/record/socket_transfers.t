Bytes moved on sockets when calls are taken from the scheduler (`record --calls scheduler`):
no syscall program sees a transfer, but the socket layer's tracepoints do. Only the
transfers no wake-up explains are written: a send that woke nobody, and the reads of the
bytes it sent (docs/recording.md).

cw-prog-queued: the client sends its request while the server computes (the server is not
waiting for it: no wake-up), then blocks reading the answer; the server reads the request
without blocking, computes 300 ms for it and answers. Only the bytes join the request to
the read that took it: a strong message edge from the client's send to the server's recv,
over a unix socket and over loopback TCP.

  $ causeway record --calls scheduler -o $TMP_DIR/unix.cwt -- cw-prog-queued unix 2>/dev/null
  $ causeway graph $TMP_DIR/unix.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-queued-cli" and .to.comm == "cw-queued-srv" and .kind == "message") | [.from.kind, .to.kind, .strength, .from.len, .to.len, .from.offset == .to.offset, .from.object == .to.object]]'
  [["send","recv","strong",16,16,true,true]]
  $ causeway record --calls scheduler -o $TMP_DIR/tcp.cwt -- cw-prog-queued tcp 2>/dev/null
  $ causeway graph $TMP_DIR/tcp.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-queued-cli" and .to.comm == "cw-queued-srv" and .kind == "message") | [.from.kind, .to.kind, .strength, .from.len, .to.len, .from.offset == .to.offset, .from.object == .to.object]]'
  [["send","recv","strong",16,16,true,true]]

A poller's timeout that expires while a loopback send runs on its CPU wakes the poller
from the timer's interrupt, not from the send's delivery: it is not the send's wake-up, and
the send is not taken as explained by it. A poller that waits 1 ms at a time on no
descriptor beside a thousand requests and answers over loopback TCP: none of its wake-ups
is marked as delivering bytes from the client or the server (with the timer's taken for
deliveries, 5 and 10 in two runs).

  $ causeway record --calls scheduler --min-wait 1ms -o $TMP_DIR/poller.cwt -- sh -c '/usr/bin/python3 -c "import select, time
  > end = time.time() + 2.5
  > while time.time() < end: select.select([], [], [], 0.001)" & cw-prog-queued tcp prompt 1000; wait' 2>/dev/null
  $ causeway convert $TMP_DIR/poller.cwt -o $TMP_DIR/poller.txt >/dev/null 2>&1
  $ py=$(grep -E "^(update )?process [0-9]+ comm=python3" $TMP_DIR/poller.txt | head -1 | sed -E 's/^(update )?process ([0-9]+).*/\2/'); q=$(grep -E "^(update )?process [0-9]+ comm=cw-queued" $TMP_DIR/poller.txt | sed -E 's/^(update )?process ([0-9]+).*/\2/' | sort -u | paste -sd'|'); grep -cE " wakeup (cpu=[0-9]+ )?target=$py interrupt=1 cause=$py" $TMP_DIR/poller.txt | awk '{ print ($1 > 0 ? "timer wake-ups" : "none") }'; grep -cE "^[0-9]+ ($q) wakeup (cpu=[0-9]+ )?target=$py delivers=1" $TMP_DIR/poller.txt
  timer wake-ups
  0
  [1]

Pipes have no such tracepoint. With --pipe-bytes the read and write calls' own exit
tracepoints (syscalls:sys_exit_read, sys_exit_write, and the v forms) count their bytes. The
same request over two pipes:

  $ causeway record --calls scheduler --pipe-bytes -o $TMP_DIR/pipe.cwt -- cw-prog-queued pipe 2>/dev/null
  $ causeway graph $TMP_DIR/pipe.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-queued-cli" and .to.comm == "cw-queued-srv" and .kind == "message") | [.from.kind, .to.kind, .strength, .from.len, .to.len, .from.offset == .to.offset, .from.object == .to.object]]'
  [["send","recv","strong",16,16,true,true]]

They are not on by default: while any per-call tracepoint is on, every system call on the
machine takes the kernel's slow path. Without them the queued request has no edge, and the
recording says why:

  $ causeway record --calls scheduler -o $TMP_DIR/nopipe.cwt -- cw-prog-queued pipe 2>&1 >/dev/null | grep -o "note: no bytes moved on pipes: not asked for (--pipe-bytes"
  note: no bytes moved on pipes: not asked for (--pipe-bytes
  $ causeway graph $TMP_DIR/nopipe.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-queued-cli" and .to.comm == "cw-queued-srv" and .kind == "message" and .from.kind == "send")] | length'
  0
  $ causeway convert $TMP_DIR/nopipe.cwt -o $TMP_DIR/nopipe.txt >/dev/null 2>&1; grep -c 'marker text="causeway: note: no bytes moved on pipes' $TMP_DIR/nopipe.txt
  1
  $ causeway record --pipe-bytes -o $TMP_DIR/x.cwt -- true
  causeway: --pipe-bytes needs --calls scheduler: the syscall programs count every call's bytes anyway
  [1]

Only the first read of a written send's bytes is written: the later reads of the same
bytes add no edge. A shell's `read` takes its line from a pipe a byte at a time; the line
written while the reader sleeps gives one send and one read, not nine:

  $ causeway record --calls scheduler --min-wait 1ms --pipe-bytes -o $TMP_DIR/line.cwt -- sh -c 'printf "abcdefgh\n" | (sleep 0.2; read x; test "$x" = abcdefgh)' 2>/dev/null
  $ causeway convert $TMP_DIR/line.cwt -o $TMP_DIR/line.txt >/dev/null 2>&1; grep -oE "^[0-9]+ [0-9]+ (cpu=[0-9]+ )?(send|recv) " $TMP_DIR/line.txt | awk '{ print $NF }' | sort | uniq -c | sed -E 's/^ +//'
  1 recv
  1 send

Each is written as a call of its own, with the bytes it moved as its return value, on the
descriptor the call named, and marked `queued` (its bytes waited in the stream): the read
that takes them begins the work they ask for (linux.kernel `request.queued`).

  $ causeway convert $TMP_DIR/unix.cwt -o $TMP_DIR/unix.txt >/dev/null 2>&1
  $ srv=$(grep -oE "^(update )?process [0-9]+ comm=cw-queued-srv" $TMP_DIR/unix.txt | head -1 | grep -oE "[0-9]+"); grep -E "^[0-9]+ $srv " $TMP_DIR/unix.txt | sed -E 's/^[0-9]+ [0-9]+ //; s/cpu=[0-9]+ //; s/(resource|object)=0x[0-9a-f]+/\1=N/; s/offset=[0-9]+ //' | grep -B1 -A1 "^recv " | head -3
  syscall_enter name=read fd=[0-9]+ resource=N count=16 timeout_ns=-1 (re)
  recv object=N len=16 peer=[0-9]+ fd=[0-9]+ queued=1 (re)
  syscall_exit name=read ret=16

The server's answer wakes the client blocked in its read: that wake-up says it all, and
no transfer is written for it; its edge is the message (linux.kernel `stream.wake`), or
over TCP the loopback delivery inside the send (`wakeup.own-send`).

  $ for t in unix tcp; do causeway graph $TMP_DIR/$t.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-queued-srv" and .to.comm == "cw-queued-cli" and .kind == "message") | [.from.kind, .strength]] | unique'; done
  [["wakeup","strong"]]
  [["wakeup","strong"]]
  $ cli=$(grep -oE "^(update )?process [0-9]+ comm=cw-queued-cli" $TMP_DIR/unix.txt | head -1 | grep -oE "[0-9]+"); grep -cE "^[0-9]+ $cli (send|recv) " $TMP_DIR/unix.txt
  1

The server's read of the request wakes the client too: a unix socket wakes whoever waits on
it when its bytes are read (the writer, for the room made, and with it the client blocked
reading its own end). The client finds nothing and sleeps again inside the same read, and
the recording shows one call with two sleeps, as a recording of every syscall does, not two
calls (kernel/bpf/calls_at_switch.bpf.h, resume_call):

  $ cli=$(grep -oE "^(update )?process [0-9]+ comm=cw-queued-cli" $TMP_DIR/unix.txt | head -1 | grep -oE "[0-9]+"); grep -cE "^[0-9]+ $cli syscall_enter (cpu=[0-9]+ )?name=read " $TMP_DIR/unix.txt
  1
  $ cli=$(grep -oE "^(update )?process [0-9]+ comm=cw-queued-cli" $TMP_DIR/unix.txt | head -1 | grep -oE "[0-9]+"); awk -v c=$cli '$2 == c && $3 == "syscall_enter" && / name=read / { r = 1 } $2 == c && r && $3 == "switch_out" && / state=S/ { n++ } $2 == c && $3 == "syscall_exit" && / name=read / { print n " sleeps"; exit }' $TMP_DIR/unix.txt
  2 sleeps

Whether the thread left the call in between is told by the kernel's count of the reads it
finished (task_io_accounting.syscr), not by how long it ran: on a busy machine, looking and
sleeping again took 220 us of run time. A read the drain woke, that a signal interrupts
before it runs, returns to run the handler and is restarted by the kernel (SA_RESTART):
two calls, as in a recording of every syscall (cw-prog-restarted):

  $ for mode in "--calls scheduler" "--calls scheduler --min-wait 1ms" "--calls syscalls"; do causeway record $mode -o $TMP_DIR/restarted.cwt -- cw-prog-restarted 2>/dev/null; causeway convert $TMP_DIR/restarted.cwt -o $TMP_DIR/restarted.txt >/dev/null 2>&1; r=$(grep -oE "^(update )?thread [0-9]+ pid=[0-9]+ comm=cw-restarted" $TMP_DIR/restarted.txt | head -1 | grep -oE "[0-9]+" | head -1); grep -cE "^[0-9]+ $r syscall_enter (cpu=[0-9]+ )?name=read " $TMP_DIR/restarted.txt; done
  2
  2
  2

The diagnosis of the client's wait, the whole read from its first sleep (the request's
50 ms to the answer's 500 ms), names the server's work for the request, from the read that
took it (300 ms; not the 200 ms of other work before it), and the request that began it:

  $ causeway debug $TMP_DIR/unix.cwt --hang cw-queued-cli --min-hang 0.1 --auto --no-cache 2>/dev/null > $TMP_DIR/unix.debug; grep -oE "^  blocked: [0-9.]+ ms" $TMP_DIR/unix.debug | awk '{ print ($2 > 400 ? "blocked over 400 ms" : "blocked " $2 " ms") }'; grep '^root cause' $TMP_DIR/unix.debug | sed -E 's/[0-9]+/N/g'; grep -oE "^  what: ran [0-9.]+ ms" $TMP_DIR/unix.debug | awk '{ print ($3 > 250 && $3 < 400 ? "ran about 300 ms" : "ran " $3 " ms") }'; grep -oE "its work began with a message from cw-queued-cli" $TMP_DIR/unix.debug
  blocked over 400 ms
  root cause: process cw-queued-srv N, thread cw-queued-srv N
  ran about 300 ms
  its work began with a message from cw-queued-cli

The same pair recorded with held waits (`--min-wait`): the same edge.

  $ causeway record --calls scheduler --min-wait 1ms -o $TMP_DIR/held.cwt -- cw-prog-queued unix 2>/dev/null
  $ causeway graph $TMP_DIR/held.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-queued-cli" and .to.comm == "cw-queued-srv" and .kind == "message") | [.from.kind, .to.kind, .strength]]'
  [["send","recv","strong"]]

Past its thread's budget of waits and transfers written in full (`--wait-budget 0`), a send
no wake-up explains is held until its bytes have waited `--min-wait` unread: the request,
queued 150 ms behind the server's other work, is written when the server reads it,
stamped when the client sent it, and the edge is the same. (20 ms here, not 1 ms: the
requests below that are read at once must not seem to wait on a busy machine.)

  $ for t in unix tcp; do causeway record --calls scheduler --min-wait 20ms --wait-budget 0 -o $TMP_DIR/late-$t.cwt -- cw-prog-queued $t 2>/dev/null; causeway graph $TMP_DIR/late-$t.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-queued-cli" and .to.comm == "cw-queued-srv" and .kind == "message") | [.from.kind, .to.kind, .strength, .from.len, .to.len, .from.offset == .to.offset, (.to.ts - .from.ts) > 100000000]]'; done
  [["send","recv","strong",16,16,true,true]]
  [["send","recv","strong",16,16,true,true]]

A request its server takes at once (`prompt`: the server polls with reads that do not
block) waited in no queue: past the budget nothing of it is written, neither the send nor
its read; within the budget (the default, 50 a second) both are. The poller takes some of
the 20 requests before the send's program has run, which then settles the read: none is
held, and each read is written, after its send.

  $ causeway record --calls scheduler --min-wait 20ms --wait-budget 0 -o $TMP_DIR/prompt.cwt -- cw-prog-queued unix prompt 20 2>/dev/null
  $ causeway convert $TMP_DIR/prompt.cwt -o $TMP_DIR/prompt.txt >/dev/null 2>&1; grep -cE "^[0-9]+ [0-9]+ (send|recv) " $TMP_DIR/prompt.txt
  0
  [1]
  $ causeway record --calls scheduler --min-wait 20ms -o $TMP_DIR/prompt-budget.cwt -- cw-prog-queued unix prompt 20 2>/dev/null
  $ causeway convert $TMP_DIR/prompt-budget.cwt -o $TMP_DIR/prompt-budget.txt >/dev/null 2>&1; grep -oE "^[0-9]+ [0-9]+ (send|recv) " $TMP_DIR/prompt-budget.txt | awk '{ print $3 }' | sort | uniq -c | sed -E 's/^ +//'
  20 recv
  20 send
  $ causeway graph $TMP_DIR/prompt-budget.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select(.from.comm == "cw-queued-cli" and .to.comm == "cw-queued-srv" and .kind == "message") | .to.ts >= .from.ts] | [length, all]'
  [20,true]
