Calls taken from the scheduler (`record --calls scheduler`): no program on the syscall
tracepoints. A call is recorded when its thread blocks in it or wakes another from it, read
from the registers the thread saved on entering the kernel; it ends when the thread runs
again, and its return value is not known (docs/recording.md).

cw-prog-chain: the client writes to the server and blocks in read, the server asks the
timekeeper and blocks in read, the timekeeper reads its timerfd's expiry and answers.

  $ causeway record --calls scheduler -o $TMP_DIR/chain.cwt -- cw-prog-chain 2>/dev/null
  $ causeway convert $TMP_DIR/chain.cwt -o $TMP_DIR/chain.txt >/dev/null 2>&1
  $ for c in cw-client cw-server; do awk -v name=$c '$1 == "process" { p = $2 } $1 == "update" && $2 == "process" { p = $3 } /^(update )?process / { match($0, /comm=[^ ]*/); comm[p] = substr($0, RSTART + 5, RLENGTH - 5) } END { for (p in comm) if (comm[p] == name) print p }' $TMP_DIR/chain.txt > $TMP_DIR/$c; done; wc -l < $TMP_DIR/cw-client; wc -l < $TMP_DIR/cw-server
  1
  1

The client's blocked read, with its descriptor and the socket it names, and an exit whose
return value was not seen:

  $ client=$(cat $TMP_DIR/cw-client); grep -E " $client syscall_enter( cpu=[0-9]+)? name=read fd=[0-9]+ resource=0x[0-9a-f]+ count=8 " $TMP_DIR/chain.txt | wc -l | sed 's/^[1-9][0-9]*$/some/'
  some
  $ client=$(cat $TMP_DIR/cw-client); grep -E " $client syscall_exit( cpu=[0-9]+)? name=read" $TMP_DIR/chain.txt | sed -E 's/^[0-9]+ [0-9]+ //; s/cpu=[0-9]+ //' | sort -u
  syscall_exit name=read ret=-9223372036854775808

The server's write that woke the client, which never blocked: the call is taken when the
wake-up is, and holds it. The wake-up delivered the write's bytes, whose transfer is not
written (`delivers=1`). (The client is woken by the server's reads too: a unix socket
wakes the threads waiting on it when the bytes it sent are read, and the client waits in
read on that same queue.)

  $ client=$(cat $TMP_DIR/cw-client); server=$(cat $TMP_DIR/cw-server); grep -E " $server " $TMP_DIR/chain.txt | sed -E 's/^[0-9]+ [0-9]+ //; s/cpu=[0-9]+ //' | grep -A2 "^syscall_enter name=write " | grep -A1 -B1 "^wakeup target=$client delivers=1$" | sed -E 's/(fd|resource|target)=[0-9a-fx]+/\1=N/g; s/ timeout_ns=-1//' | head -3
  syscall_enter name=write fd=N resource=N count=8
  wakeup target=N delivers=1
  syscall_exit name=write ret=-9223372036854775808

Calls that neither block nor wake anyone are not recorded at all: the socketpairs the
program makes (which the syscall tracepoints record).

  $ grep -c "name=socketpair" $TMP_DIR/chain.txt
  0
  [1]

The wake-ups lead from the client's wait back to the timekeeper's.

  $ causeway debug $TMP_DIR/chain.cwt --auto --min-hang 0.1 --no-cache 2>/dev/null | grep '^root cause' | sed -E 's/[0-9]+/N/g'
  root cause: process cw-timekeeper N, thread cw-timekeeper N

Over loopback TCP the receiver is woken from the NET_RX softirq that runs inside the
sender's write (or connect): an interrupt's wake-up, which only the transfers (not recorded
here) would tie to the sender. One raised while the current thread sends to a local TCP
peer, of a thread blocked on a TCP socket, is the sender's: the connect and the messages
between the two processes have edges (an interrupt's wake-up would have none).

  $ causeway record --calls scheduler -o $TMP_DIR/tcp.cwt -- cw-prog-pingpong tcp 5 2>/dev/null
  $ causeway graph $TMP_DIR/tcp.cwt --json --edges 2>/dev/null | jq -c '[.edge_list[] | select((.from.comm | startswith("cw-prog")) and (.to.comm | startswith("cw-prog")) and .from.pid != .to.pid and .from.kind == "wakeup" and .kind != "exit") | .kind] | unique'
  ["connect","message"]
  $ causeway graph $TMP_DIR/tcp.cwt --json --edges 2>/dev/null | jq '[.edge_list[] | select((.from.comm | startswith("cw-prog")) and (.to.comm | startswith("cw-prog")) and .from.pid != .to.pid and .kind == "message")] | length > 2'
  true

A wait its own timer ended timed out, and returns what such a call does then: cw-napper's
50 µs sleeps return 0 (an exit without a return value would print it).

  $ causeway record --calls scheduler -o $TMP_DIR/irqpoll.cwt -- cw-prog-irqpoll 300 2>/dev/null
  $ causeway convert $TMP_DIR/irqpoll.cwt -o $TMP_DIR/irqpoll.txt >/dev/null 2>&1
  $ napper=$(grep -oE "thread [0-9]+ pid=[0-9]+ comm=cw-napper" $TMP_DIR/irqpoll.txt | head -1 | cut -d' ' -f2); grep -E " $napper syscall_exit" $TMP_DIR/irqpoll.txt | sed -E 's/^[0-9]+ [0-9]+ //; s/cpu=[0-9]+ //' | sort | uniq -c | sort -rn | head -1 | awk '{ print ($1 > 100 ? "many" : $1), $2, $3, $4 }'
  many syscall_exit name=clock_nanosleep 

--full writes every call, which the scheduler does not see:

  $ causeway record --calls scheduler --full -o $TMP_DIR/x.cwt -- true
  causeway: --full writes every call, which --calls scheduler does not see: give one of them
  [1]
