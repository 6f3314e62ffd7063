# Tests of linux.kernel: each fails when the rule it names is removed.

test "a futex wake on the waiter's address is a strong futex edge" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    thread 102 pid=100 comm=signaller
    1ms 101 syscall_enter name=futex op=wait resource=0x1000
    1ms 101 switch_out state=S
    5ms 102 syscall_enter name=futex op=wake resource=0x1000
    5ms 102 wakeup target=101
    5ms 102 syscall_exit name=futex ret=1
    6ms 101 switch_in
    6ms 101 syscall_exit name=futex ret=0
  ]]
  expect edge 102 -> 101 kind futex strength strong rule futex.wake at 6ms
}

test "a futex wake for another address is only a weak wake-up" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    thread 102 pid=100 comm=signaller
    1ms 101 syscall_enter name=futex op=wait resource=0x1000
    1ms 101 switch_out state=S
    5ms 102 syscall_enter name=futex op=wake resource=0x2000
    5ms 102 wakeup target=101
    5ms 102 syscall_exit name=futex ret=1
    6ms 101 switch_in
  ]]
  expect edge 102 -> 101 kind wakeup strength weak rule wakeup.default
  expect no edge 102 -> 101 kind futex
}

test "an interrupt handler's wake-up is pruned" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=reader
    process 200 comm=other
    thread 201 pid=200 comm=busy
    1ms 101 syscall_enter name=read fd=3
    1ms 101 switch_out state=S
    4ms 201 irq_enter irq=33 name=nvme
    4ms 201 wakeup target=101
    4ms 201 irq_exit irq=33
    5ms 101 switch_in
  ]]
  expect no edge 201 -> 101
  expect stat pruned == 1
}

test "a timer interrupt's wake-up is pruned" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    process 200 comm=other
    thread 201 pid=200 comm=busy
    1ms 101 syscall_enter name=futex resource=0x10
    1ms 101 switch_out state=S
    4ms 201 wakeup target=101 interrupt=1
    5ms 101 switch_in
    5ms 101 syscall_exit name=futex ret=-110
  ]]
  expect no edge 201 -> 101
  expect stat pruned == 1
}

# A timerfd armed by one thread and read by another: its expiry wakes the reader from an
# interrupt that landed on an unrelated process. The recorder names the arming thread as
# the cause; the wake-up is an edge from it, never from the process that happened to run.
test "a timer's expiry wakes its waiter on behalf of the thread that armed it" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=reader
    thread 102 pid=100 comm=armer
    process 200 comm=other
    thread 201 pid=200 comm=busy
    1ms 102 syscall_enter name=timerfd_settime fd=3
    1ms 102 syscall_exit name=timerfd_settime ret=0
    2ms 101 syscall_enter name=read fd=3
    2ms 101 switch_out state=S
    801ms 201 wakeup target=101 interrupt=1 cause=102
    802ms 101 switch_in
    802ms 101 syscall_exit name=read ret=8
  ]]
  expect edge 102 -> 101 kind timer strength strong rule wakeup.timer
  expect no edge 201 -> 101
}

# A timed wait's own timer (its timeout) names the waiter itself: no thread woke it.
test "a thread's own timer wakes it on nobody's behalf" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=sleeper
    process 200 comm=other
    thread 201 pid=200 comm=busy
    1ms 101 syscall_enter name=futex resource=0x10
    1ms 101 switch_out state=S
    4ms 201 wakeup target=101 interrupt=1 cause=101
    5ms 101 switch_in
    5ms 101 syscall_exit name=futex ret=-110
  ]]
  expect no edge 201 -> 101
  expect no edge 101 -> 101
  expect stat pruned == 1
}

# A POSIX timer one thread set (SIGEV_THREAD_ID) signals another; its expiry's signal is
# raised on whatever thread ran.
test "a timer's signal is sent on behalf of the thread that armed the timer" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    thread 102 pid=100 comm=armer
    process 200 comm=other
    thread 201 pid=200 comm=busy
    1ms 102 syscall_enter name=timer_settime
    1ms 102 syscall_exit name=timer_settime ret=0
    2ms 101 syscall_enter name=pause
    2ms 101 switch_out state=S
    801ms 201 signal_send target=101 sig=34 cause=102
    801ms 201 wakeup target=101 interrupt=1 cause=102
    802ms 101 switch_in
    802ms 101 signal_deliver sig=34
    802ms 101 syscall_exit name=pause ret=-4
  ]]
  expect edge 102 -> 101 kind timer strength strong rule signal.timer
  expect no edge 201 -> 101
}

# A process's own alarm: the signal is nobody else's doing, least of all the interrupted
# process's.
test "a process's own alarm is no signal from the thread the interrupt landed on" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    process 200 comm=other
    thread 201 pid=200 comm=busy
    1ms 101 syscall_enter name=alarm
    1ms 101 syscall_exit name=alarm ret=0
    2ms 101 syscall_enter name=pause
    2ms 101 switch_out state=S
    801ms 201 signal_send target=101 sig=14 cause=101
    801ms 201 wakeup target=101 interrupt=1 cause=101
    802ms 101 switch_in
    802ms 101 signal_deliver sig=14
    802ms 101 syscall_exit name=pause ret=-4
  ]]
  expect no edge 201 -> 101
}

# A send that woke its reader, its transfer left out (record --calls scheduler): the wake-up
# delivered the bytes (`delivers`), and is the message. Not so a read that wakes the peer's
# reader (a unix socket wakes the threads waiting on it as the bytes it sent are read), nor
# a wake-up the recorder did not mark (the transfers were recorded: they are the message).
test "a send that delivered its bytes with its wake-up is the message" {
  trace [[
    causeway-trace 1
    process 100 comm=client
    thread 101 pid=100 comm=client
    process 200 comm=server
    thread 201 pid=200 comm=server
    process 300 comm=poller
    thread 301 pid=300 comm=poller
    1ms 101 syscall_enter name=recvfrom fd=3 resource=0xffff888100c78000
    1ms 101 switch_out state=S
    2ms 301 syscall_enter name=poll count=1
    2ms 301 switch_out state=S
    100ms 201 syscall_enter name=read fd=4 resource=0xffff888100c7b180
    100ms 201 wakeup target=101
    100ms 201 syscall_exit name=read ret=7
    101ms 101 switch_in
    102ms 101 switch_out state=S
    200ms 201 syscall_enter name=write fd=4 resource=0xffff888100c78000
    200ms 201 wakeup target=101 delivers=1
    200ms 201 syscall_exit name=write
    201ms 101 switch_in
    201ms 101 syscall_exit name=recvfrom
    300ms 201 syscall_enter name=sendto fd=5 resource=0x7a3c55e1f00d2b19
    300ms 201 wakeup target=301 delivers=1
    300ms 201 syscall_exit name=sendto
    301ms 301 switch_in
    301ms 301 syscall_exit name=poll
  ]]
  expect edge 201 -> 101 kind message strength strong rule stream.wake at 201ms
  expect edge 201 -> 101 kind wakeup strength weak rule wakeup.default at 101ms
  expect edge 201 -> 301 kind message strength strong rule stream.wake at 301ms
}

test "a send's wake-up of a reader of another stream, or one not marked, is no message" {
  trace [[
    causeway-trace 1
    process 100 comm=client
    thread 101 pid=100 comm=client
    thread 102 pid=100 comm=other
    process 200 comm=server
    thread 201 pid=200 comm=server
    1ms 101 syscall_enter name=recvfrom fd=3 resource=0xffff888100c78000
    1ms 101 switch_out state=S
    1ms 102 syscall_enter name=read fd=5 resource=0xffff888100c7c000
    1ms 102 switch_out state=S
    200ms 201 syscall_enter name=write fd=4 resource=0xffff888100c7b180
    200ms 201 wakeup target=101 delivers=1
    200ms 201 syscall_exit name=write
    201ms 101 switch_in
    201ms 101 syscall_exit name=recvfrom
    300ms 201 syscall_enter name=write fd=6 resource=0xffff888100c7c000
    300ms 201 wakeup target=102
    300ms 201 syscall_exit name=write
    301ms 102 switch_in
    301ms 102 syscall_exit name=read
  ]]
  expect edge 201 -> 101 kind wakeup strength weak rule wakeup.default at 201ms
  expect edge 201 -> 102 kind wakeup strength weak rule wakeup.default at 301ms
}

# The server naps until its start, then reads a request that waited in its socket (queued)
# and works on it: the read begins that work. A read of bytes a wake-up handed over (not
# queued) cuts nothing.
test "a read of bytes that waited in the stream begins the work they ask for" {
  trace [[
    causeway-trace 1
    process 100 comm=client
    thread 101 pid=100 comm=client
    process 200 comm=server
    thread 201 pid=200 comm=server
    1ms 201 syscall_enter name=clock_nanosleep timeout_ns=1000000
    1ms 201 switch_out state=S
    5ms 101 syscall_enter name=sendto fd=3
    5ms 101 send object=7 offset=0 len=8 peer=200 fd=3 queued=1
    5ms 101 syscall_exit name=sendto ret=8
    6ms 201 switch_in
    6ms 201 syscall_exit name=clock_nanosleep
    7ms 201 syscall_enter name=recvfrom fd=4
    7ms 201 recv object=7 offset=0 len=8 peer=100 fd=4 queued=1
    7ms 201 syscall_exit name=recvfrom ret=8
    9ms 201 syscall_enter name=recvfrom fd=4
    9ms 201 recv object=7 offset=8 len=8 peer=100 fd=4
    9ms 201 syscall_exit name=recvfrom ret=8
  ]]
  expect split 201 at 7ms rule request.queued
  expect no split 201 at 9ms
  expect edge 101 -> 201 kind message strength strong rule message
}

# Loopback TCP: the server's send runs the receive softirq itself and wakes the client.
test "a receive softirq inside the sender's own write is the sender's wake-up" {
  trace [[
    causeway-trace 1
    process 100 comm=client
    thread 101 pid=100 comm=client
    process 200 comm=server
    thread 201 pid=200 comm=server
    1ms 101 syscall_enter name=recvfrom fd=3
    1ms 101 switch_out state=S
    900ms 201 syscall_enter name=sendto fd=4
    900ms 201 softirq_enter vec=3 name=NET_RX
    900ms 201 wakeup target=101 interrupt=1
    900ms 201 softirq_exit vec=3
    900ms 201 syscall_exit name=sendto ret=5
    901ms 101 switch_in
    901ms 101 syscall_exit name=recvfrom ret=5
  ]]
  expect edge 201 -> 101 kind message strength strong rule wakeup.own-send at 901ms
}

test "the end of a loopback stream, in the closer's close or exit, is the closer's wake-up" {
  trace [[
    causeway-trace 1
    process 100 comm=client
    thread 101 pid=100 comm=client
    thread 102 pid=100 comm=reader
    process 200 comm=server
    thread 201 pid=200 comm=server
    process 300 comm=worker
    thread 301 pid=300 comm=worker
    1ms 101 syscall_enter name=recvfrom fd=3
    1ms 101 switch_out state=S
    1ms 102 syscall_enter name=read fd=5
    1ms 102 switch_out state=S
    900ms 201 syscall_enter name=close fd=4
    900ms 201 softirq_enter vec=3 name=NET_RX
    900ms 201 wakeup target=101 interrupt=1
    900ms 201 softirq_exit vec=3
    900ms 201 syscall_exit name=close ret=0
    901ms 101 switch_in
    901ms 101 syscall_exit name=recvfrom ret=0
    950ms 301 exit code=0
    950ms 301 softirq_enter vec=3 name=NET_RX
    950ms 301 wakeup target=102 interrupt=1
    950ms 301 softirq_exit vec=3
    951ms 102 switch_in
    951ms 102 syscall_exit name=read ret=0
  ]]
  expect edge 201 -> 101 kind close strength strong rule wakeup.own-close at 901ms
  expect edge 301 -> 102 kind close strength strong rule wakeup.own-close at 951ms
}

test "a loopback connect wakes the listener in accept from its own receive softirq" {
  trace [[
    causeway-trace 1
    process 100 comm=server
    thread 101 pid=100 comm=server
    process 200 comm=client
    thread 201 pid=200 comm=client
    1ms 101 syscall_enter name=accept4 fd=3
    1ms 101 switch_out state=S
    900ms 201 syscall_enter name=connect fd=3
    900ms 201 softirq_enter vec=3 name=NET_RX
    900ms 201 wakeup target=101 interrupt=1
    900ms 201 softirq_exit vec=3
    900ms 201 syscall_exit name=connect ret=0
    901ms 101 switch_in
    901ms 101 syscall_exit name=accept4 ret=4
  ]]
  expect edge 201 -> 101 kind connect strength strong rule wakeup.own-connect at 901ms
}

test "a close wakes the reader of a pipe at its end, and a timer interrupt in it is not the close's" {
  trace [[
    causeway-trace 1
    process 100 comm=reader
    thread 101 pid=100 comm=reader
    thread 102 pid=100 comm=sleeper
    process 200 comm=writer
    thread 201 pid=200 comm=writer
    1ms 101 syscall_enter name=read fd=3 resource=7
    1ms 101 switch_out state=S
    1ms 102 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=899000000
    1ms 102 switch_out state=S
    900ms 201 syscall_enter name=close fd=4 resource=7
    900ms 201 wakeup target=101
    900ms 201 wakeup target=102 interrupt=1 cause=102
    900ms 201 syscall_exit name=close ret=0
    901ms 101 switch_in
    901ms 101 syscall_exit name=read ret=0
    901ms 102 switch_in
    901ms 102 syscall_exit name=clock_nanosleep ret=0
  ]]
  expect edge 201 -> 101 kind close strength strong rule close.wake at 901ms
  expect no edge 201 -> 102
}

# The same wake-up from a timer's softirq, or from a device's handler, while the thread
# happened to be writing, is not the writer's doing.
test "a timer softirq or a device interrupt during a write is still pruned" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    thread 102 pid=100 comm=reader
    process 200 comm=other
    thread 201 pid=200 comm=writer
    1ms 101 syscall_enter name=nanosleep
    1ms 101 switch_out state=S
    1ms 102 syscall_enter name=recvfrom fd=3
    1ms 102 switch_out state=S
    4ms 201 syscall_enter name=write fd=4
    4ms 201 softirq_enter vec=1 name=TIMER
    4ms 201 wakeup target=101 interrupt=1
    4ms 201 softirq_exit vec=1
    5ms 201 irq_enter irq=30 name=eth0
    5ms 201 softirq_enter vec=3 name=NET_RX
    5ms 201 wakeup target=102 interrupt=1
    5ms 201 softirq_exit vec=3
    5ms 201 irq_exit irq=30
    6ms 201 syscall_exit name=write ret=4
    7ms 101 switch_in
    7ms 102 switch_in
  ]]
  expect no edge 201 -> 101
  expect no edge 201 -> 102
  expect stat pruned == 2
}

# A lock file polled with flock(LOCK_EX | LOCK_NB) and a sleep: the holder's unlock is
# what the poller waited for; the release pairs with the first try that succeeds, not with
# the failed tries before it nor with the poller's own close.
test "a lock's release joins the next successful try of another process" {
  trace [[
    causeway-trace 1
    process 100 comm=poller
    thread 101 pid=100 comm=poller
    process 200 comm=holder
    thread 201 pid=200 comm=holder
    1ms 201 syscall_enter name=flock fd=3 resource=77 op=ex value=2
    1ms 201 syscall_exit name=flock ret=0
    10ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    10ms 101 syscall_exit name=flock ret=-11
    10ms 101 syscall_enter name=nanosleep
    10ms 101 switch_out state=S
    30ms 101 switch_in
    30ms 101 syscall_exit name=nanosleep ret=0
    30ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    30ms 101 syscall_exit name=flock ret=-11
    31ms 101 syscall_enter name=close fd=9 resource=77
    31ms 101 syscall_exit name=close ret=0
    40ms 201 syscall_enter name=flock fd=3 resource=77 op=un value=8
    40ms 201 syscall_exit name=flock ret=0
    41ms 201 syscall_enter name=flock fd=5 resource=88 op=un value=8
    41ms 201 syscall_exit name=flock ret=0
    50ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    50ms 101 syscall_exit name=flock ret=0
  ]]
  expect edge 201 -> 101 kind lock strength strong rule lock.handover at 50ms
  expect no edge 201 -> 101 at 30ms
  expect no edge 101 -> 101 kind lock
}

# fcntl record locks: F_SETLK with F_WRLCK fails with EAGAIN while the holder has it; the
# holder's F_SETLK with F_UNLCK releases it. Another process that opened the file and
# closed it meanwhile held no lock: its close is no release, and the holder's own later
# lock (a downgrade to F_RDLCK before it lets go) is no handover from it.
test "an fcntl lock's release joins the next F_SETLK that gets it; a close releases nothing" {
  trace [[
    causeway-trace 1
    process 100 comm=poller
    thread 101 pid=100 comm=poller
    process 200 comm=holder
    thread 201 pid=200 comm=holder
    process 300 comm=reader
    thread 301 pid=300 comm=reader
    5ms 201 syscall_enter name=fcntl fd=3 resource=77 op=setlk value=1
    5ms 201 syscall_exit name=fcntl ret=0
    10ms 101 syscall_enter name=fcntl fd=4 resource=77 op=setlk value=1
    10ms 101 syscall_exit name=fcntl ret=-11
    20ms 201 syscall_enter name=fcntl fd=3 resource=77 op=getlk value=1
    20ms 201 syscall_exit name=fcntl ret=0
    30ms 301 syscall_enter name=close fd=5 resource=77
    30ms 301 syscall_exit name=close ret=0
    35ms 201 syscall_enter name=fcntl fd=3 resource=77 op=setlk value=0
    35ms 201 syscall_exit name=fcntl ret=0
    40ms 201 syscall_enter name=fcntl fd=3 resource=77 op=setlk value=2
    40ms 201 syscall_exit name=fcntl ret=0
    45ms 101 syscall_enter name=fcntl fd=4 resource=77 op=setlk value=2
    45ms 101 syscall_exit name=fcntl ret=0
    50ms 101 syscall_enter name=fcntl fd=4 resource=77 op=setlk value=1
    50ms 101 syscall_exit name=fcntl ret=0
  ]]
  expect edge 201 -> 101 kind lock strength strong at 50ms
  expect no edge 201 -> 101 at 45ms
  expect no edge 301 -> 201
}

# fcntl F_SETLKW waits for a record lock another process holds: the wait starts a segment,
# as a blocking flock does. F_SETLK (a try) and F_GETLK return at once and cut nothing.
test "an fcntl F_SETLKW is a blocking wait; F_SETLK and F_GETLK are not" {
  trace [[
    causeway-trace 1
    process 100 comm=waiter
    thread 101 pid=100 comm=waiter
    1ms 101 switch_in
    2ms 101 syscall_enter name=fcntl fd=4 resource=77 op=getlk value=1
    2ms 101 syscall_exit name=fcntl ret=0
    3ms 101 syscall_enter name=fcntl fd=4 resource=77 op=setlk value=1
    3ms 101 syscall_exit name=fcntl ret=-11
    5ms 101 syscall_enter name=fcntl fd=4 resource=77 op=setlkw value=1
    5ms 101 switch_out state=S
    90ms 101 switch_in
    90ms 101 syscall_exit name=fcntl ret=0
    95ms 101 syscall_enter name=fcntl fd=4 resource=77 op=ofd_setlkw value=1
    95ms 101 syscall_exit name=fcntl ret=0
  ]]
  expect no split 101 at 2ms
  expect no split 101 at 3ms
  expect split 101 at 5ms rule wait.entry
  expect split 101 at 95ms rule wait.entry
  expect segments 101 == 3
}

# A process polls a lock (flock LOCK_EX | LOCK_NB, then a 9 ms sleep) that another holds
# while it sleeps 200 ms: the poller's loop is a RepeatedYield, and the holder's release,
# which ended it, points at the holder: its sleep is the root cause. A try is no cut. The
# sleeps carry fd=-1 as the recorder writes them (a call on no descriptor), so they are
# waits for time, not slices of one wait on descriptor 0.
test "a lock-polling loop points at the lock's holder" {
  trace [[
    causeway-trace 1
    process 100 comm=poller
    thread 101 pid=100 comm=poller
    process 200 comm=holder
    thread 201 pid=200 comm=holder
    1ms 201 syscall_enter name=flock fd=3 resource=77 op=ex value=2
    1ms 201 syscall_exit name=flock ret=0
    2ms 201 syscall_enter name=clock_nanosleep fd=-1
    2ms 201 switch_out state=S
    5ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    5ms 101 syscall_exit name=flock ret=-11
    6ms 101 syscall_enter name=clock_nanosleep fd=-1
    6ms 101 switch_out state=S
    15ms 101 switch_in
    15ms 101 syscall_exit name=clock_nanosleep ret=0
    15ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    15ms 101 syscall_exit name=flock ret=-11
    16ms 101 syscall_enter name=clock_nanosleep fd=-1
    16ms 101 switch_out state=S
    25ms 101 switch_in
    25ms 101 syscall_exit name=clock_nanosleep ret=0
    25ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    25ms 101 syscall_exit name=flock ret=-11
    26ms 101 syscall_enter name=clock_nanosleep fd=-1
    26ms 101 switch_out state=S
    35ms 101 switch_in
    35ms 101 syscall_exit name=clock_nanosleep ret=0
    35ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    35ms 101 syscall_exit name=flock ret=-11
    36ms 101 syscall_enter name=clock_nanosleep fd=-1
    36ms 101 switch_out state=S
    45ms 101 switch_in
    45ms 101 syscall_exit name=clock_nanosleep ret=0
    45ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    45ms 101 syscall_exit name=flock ret=-11
    46ms 101 syscall_enter name=clock_nanosleep fd=-1
    46ms 101 switch_out state=S
    55ms 101 switch_in
    55ms 101 syscall_exit name=clock_nanosleep ret=0
    55ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    55ms 101 syscall_exit name=flock ret=-11
    56ms 101 syscall_enter name=clock_nanosleep fd=-1
    56ms 101 switch_out state=S
    65ms 101 switch_in
    65ms 101 syscall_exit name=clock_nanosleep ret=0
    65ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    65ms 101 syscall_exit name=flock ret=-11
    66ms 101 syscall_enter name=clock_nanosleep fd=-1
    66ms 101 switch_out state=S
    75ms 101 switch_in
    75ms 101 syscall_exit name=clock_nanosleep ret=0
    75ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    75ms 101 syscall_exit name=flock ret=-11
    76ms 101 syscall_enter name=clock_nanosleep fd=-1
    76ms 101 switch_out state=S
    85ms 101 switch_in
    85ms 101 syscall_exit name=clock_nanosleep ret=0
    85ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    85ms 101 syscall_exit name=flock ret=-11
    86ms 101 syscall_enter name=clock_nanosleep fd=-1
    86ms 101 switch_out state=S
    95ms 101 switch_in
    95ms 101 syscall_exit name=clock_nanosleep ret=0
    95ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    95ms 101 syscall_exit name=flock ret=-11
    96ms 101 syscall_enter name=clock_nanosleep fd=-1
    96ms 101 switch_out state=S
    105ms 101 switch_in
    105ms 101 syscall_exit name=clock_nanosleep ret=0
    105ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    105ms 101 syscall_exit name=flock ret=-11
    106ms 101 syscall_enter name=clock_nanosleep fd=-1
    106ms 101 switch_out state=S
    115ms 101 switch_in
    115ms 101 syscall_exit name=clock_nanosleep ret=0
    115ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    115ms 101 syscall_exit name=flock ret=-11
    116ms 101 syscall_enter name=clock_nanosleep fd=-1
    116ms 101 switch_out state=S
    125ms 101 switch_in
    125ms 101 syscall_exit name=clock_nanosleep ret=0
    125ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    125ms 101 syscall_exit name=flock ret=-11
    126ms 101 syscall_enter name=clock_nanosleep fd=-1
    126ms 101 switch_out state=S
    135ms 101 switch_in
    135ms 101 syscall_exit name=clock_nanosleep ret=0
    135ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    135ms 101 syscall_exit name=flock ret=-11
    136ms 101 syscall_enter name=clock_nanosleep fd=-1
    136ms 101 switch_out state=S
    145ms 101 switch_in
    145ms 101 syscall_exit name=clock_nanosleep ret=0
    145ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    145ms 101 syscall_exit name=flock ret=-11
    146ms 101 syscall_enter name=clock_nanosleep fd=-1
    146ms 101 switch_out state=S
    155ms 101 switch_in
    155ms 101 syscall_exit name=clock_nanosleep ret=0
    155ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    155ms 101 syscall_exit name=flock ret=-11
    156ms 101 syscall_enter name=clock_nanosleep fd=-1
    156ms 101 switch_out state=S
    165ms 101 switch_in
    165ms 101 syscall_exit name=clock_nanosleep ret=0
    165ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    165ms 101 syscall_exit name=flock ret=-11
    166ms 101 syscall_enter name=clock_nanosleep fd=-1
    166ms 101 switch_out state=S
    175ms 101 switch_in
    175ms 101 syscall_exit name=clock_nanosleep ret=0
    175ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    175ms 101 syscall_exit name=flock ret=-11
    176ms 101 syscall_enter name=clock_nanosleep fd=-1
    176ms 101 switch_out state=S
    185ms 101 switch_in
    185ms 101 syscall_exit name=clock_nanosleep ret=0
    185ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    185ms 101 syscall_exit name=flock ret=-11
    186ms 101 syscall_enter name=clock_nanosleep fd=-1
    186ms 101 switch_out state=S
    195ms 101 switch_in
    195ms 101 syscall_exit name=clock_nanosleep ret=0
    195ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    195ms 101 syscall_exit name=flock ret=-11
    196ms 101 syscall_enter name=clock_nanosleep fd=-1
    196ms 101 switch_out state=S
    205ms 101 switch_in
    205ms 101 syscall_exit name=clock_nanosleep ret=0
    202ms 201 switch_in
    202ms 201 syscall_exit name=clock_nanosleep ret=0
    203ms 201 syscall_enter name=flock fd=3 resource=77 op=un value=8
    203ms 201 syscall_exit name=flock ret=0
    205ms 101 syscall_enter name=flock fd=4 resource=77 op=ex value=6
    205ms 101 syscall_exit name=flock ret=0
  ]]
  hang "poller"
  expect no split 101 at 15ms
  expect split 101 at 16ms rule wait.entry
  expect edge 201 -> 101 kind lock strength strong rule lock.handover at 205ms
  expect hang 101 kind RepeatedYield
  expect root_cause 201 kind LongWait
}

test "wake-ups between kernel workers are pruned" {
  trace [[
    causeway-trace 1
    thread 7 pid=0 comm=kworker/0:1 kernel
    thread 8 pid=0 comm=kworker/0:2 kernel
    1ms 8 switch_out state=I
    2ms 7 wakeup target=8
    3ms 8 switch_in
  ]]
  expect no edge 7 -> 8
  expect stat pruned == 1
}

test "a wake-up between threads sharing code is boosted" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=worker1
    thread 102 pid=100 comm=worker2
    1ms 101 syscall_enter name=read fd=4 stack=main;pool_run;read_job
    1ms 101 switch_out state=S
    2ms 102 syscall_enter name=write fd=5 stack=main;pool_run;post_job
    2ms 102 wakeup target=101
    3ms 101 switch_in
  ]]
  expect edge 102 -> 101 kind wakeup strength boosted
}

test "sharing only ubiquitous frames does not boost" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=worker1
    thread 102 pid=100 comm=worker2
    1ms 101 syscall_enter name=read fd=4 stack=_start;main;read_job
    1ms 101 switch_out state=S
    2ms 102 syscall_enter name=write fd=5 stack=_start;main;post_job
    2ms 102 wakeup target=101
    3ms 101 switch_in
  ]]
  expect edge 102 -> 101 kind wakeup strength weak
}

test "stream bytes pair by offset: one write read in two pieces, two writes read in one" {
  trace [[
    causeway-trace 1
    process 200 comm=client
    thread 201 pid=200 comm=client
    process 300 comm=server
    thread 301 pid=300 comm=server
    1ms 201 send object=7 offset=0 len=100 peer=300
    2ms 301 recv object=7 offset=0 len=60 peer=200
    3ms 301 recv object=7 offset=60 len=40 peer=200
    4ms 301 send object=8 offset=0 len=10 peer=200
    5ms 301 send object=8 offset=10 len=10 peer=200
    6ms 201 recv object=8 offset=0 len=20 peer=300
  ]]
  expect edge 201 -> 301 kind message strength strong rule message at 2ms
  expect edge 201 -> 301 kind message strength strong rule message at 3ms
  expect edge 301 -> 201 kind message strength strong at 6ms
  expect stat candidates == 4
}

test "a blocking wait starts a new segment" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=main
    1ms 101 syscall_enter name=getpid
    1ms 101 syscall_exit name=getpid ret=100
    2ms 101 syscall_enter name=read fd=0
    2.5ms 101 switch_out state=S
    2.9ms 101 switch_in
    3ms 101 syscall_exit name=read ret=5
    4ms 101 syscall_enter name=futex op=wake resource=0x10
    4ms 101 syscall_exit name=futex ret=0
    5ms 101 syscall_enter name=futex op=wait resource=0x10
    5.5ms 101 switch_out state=S
  ]]
  expect split 101 at 2ms rule data.wait
  expect split 101 at 5ms rule wait.entry
  expect no split 101 at 4ms
  expect segments 101 == 3
}

# A read whose data is already there does not wait: the bytes it takes were what the
# segment's last real wait was for, and their message edge lands on it. (A thread outside
# an event loop: in one, the read of a request starts an item, below.)
test "a wait that does not block is no cut; the message lands on the wait that blocked" {
  trace [[
    causeway-trace 1
    process 100 comm=worker
    thread 101 pid=100 comm=worker
    process 200 comm=client
    thread 201 pid=200 comm=client
    1ms 101 syscall_enter name=getpid
    1ms 101 syscall_exit name=getpid ret=100
    2ms 101 syscall_enter name=futex op=wait resource=0x40
    2ms 101 switch_out state=S
    10ms 201 syscall_enter name=write fd=3
    10ms 201 send object=7 offset=0 len=4 peer=100
    10ms 201 syscall_enter name=futex op=wake resource=0x40
    10ms 201 wakeup target=101
    11ms 101 switch_in
    11ms 101 syscall_exit name=futex ret=0
    12ms 101 syscall_enter name=read fd=5
    12ms 101 syscall_exit name=read ret=4
    12ms 101 recv object=7 offset=0 len=4 peer=200
    13ms 101 syscall_enter name=read fd=5
    13ms 101 switch_out state=R
    14ms 101 switch_in
    14ms 101 syscall_exit name=read ret=-11
  ]]
  expect split 101 at 2ms rule wait.entry
  expect no split 101 at 12ms
  expect no split 101 at 13ms
  expect segments 101 == 2
  expect edge 201 -> 101 kind message strength strong at 12ms
}

# A single-threaded server's loop: the poll returns with two clients ready; it reads A's
# request (in two pieces), works, answers A, then reads and answers B. Each request is an
# item from the read that took it (before the call's entry: the recv is recorded as the
# read returns), so A's message starts A's work and B's item follows A's weakly.
test "an event loop's request reads start one item per client" {
  trace [[
    causeway-trace 1
    process 100 comm=server
    thread 101 pid=100 comm=server
    process 200 comm=client-a
    thread 201 pid=200 comm=a
    process 300 comm=client-b
    thread 301 pid=300 comm=b
    1ms 101 syscall_enter name=epoll_wait fd=4
    1ms 101 switch_out state=S
    2ms 201 send object=1 offset=0 len=8 peer=100 fd=3
    2ms 201 wakeup target=101
    3ms 301 send object=2 offset=0 len=8 peer=100 fd=3
    4ms 101 switch_in
    4ms 101 syscall_exit name=epoll_wait ret=2
    5ms 101 syscall_enter name=read fd=7
    5ms 101 syscall_exit name=read ret=4
    5ms 101 recv object=1 offset=0 len=4 peer=200 fd=7
    6ms 101 syscall_enter name=read fd=7
    6ms 101 syscall_exit name=read ret=4
    6ms 101 recv object=1 offset=4 len=4 peer=200 fd=7
    50ms 101 syscall_enter name=write fd=7
    50ms 101 send object=3 offset=0 len=8 peer=200 fd=7
    50ms 101 syscall_exit name=write ret=8
    51ms 101 syscall_enter name=read fd=8
    51ms 101 syscall_exit name=read ret=8
    51ms 101 recv object=2 offset=0 len=8 peer=300 fd=8
    52ms 101 syscall_enter name=write fd=8
    52ms 101 send object=4 offset=0 len=8 peer=300 fd=8
    52ms 101 syscall_exit name=write ret=8
    53ms 101 syscall_enter name=epoll_wait fd=4
  ]]
  expect split 101 at 5ms rule loop.request
  expect no split 101 at 6ms
  expect split 101 at 51ms rule loop.request
  expect split 101 at 53ms rule loop.wait
  expect segments 101 == 4
  expect edge 201 -> 101 kind message strength strong at 5ms
  expect edge 301 -> 101 kind message strength strong at 51ms
}

# Back in the loop, the same client's next request is a new item: the first read after a
# loop wait starts one whichever descriptor it is. A thread that never waits in a loop
# (a worker reading a pipe) has no items.
test "the first request read after each loop wait starts an item; no loop, no items" {
  trace [[
    causeway-trace 1
    process 100 comm=server
    thread 101 pid=100 comm=server
    process 400 comm=worker
    thread 401 pid=400 comm=worker
    1ms 101 syscall_enter name=poll fd=-1 count=1
    1ms 101 syscall_exit name=poll ret=1
    2ms 101 syscall_enter name=read fd=7
    2ms 101 syscall_exit name=read ret=4
    2ms 101 recv object=1 offset=0 len=4 peer=200 fd=7
    3ms 101 syscall_enter name=poll fd=-1 count=1
    3ms 101 syscall_exit name=poll ret=1
    4ms 101 syscall_enter name=read fd=7
    4ms 101 syscall_exit name=read ret=4
    4ms 101 recv object=1 offset=4 len=4 peer=200 fd=7
    5ms 401 syscall_enter name=read fd=0
    5ms 401 syscall_exit name=read ret=4
    5ms 401 recv object=9 offset=0 len=4 peer=100 fd=0
    6ms 401 syscall_enter name=read fd=5
    6ms 401 syscall_exit name=read ret=4
    6ms 401 recv object=8 offset=0 len=4 peer=100 fd=5
  ]]
  expect split 101 at 2ms rule loop.request
  expect split 101 at 3ms rule loop.wait
  expect split 101 at 4ms rule loop.request
  expect segments 401 == 1
}

test "an event loop's poll is a loop return, a read inside a handler an ordinary wait" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=main
    1ms 101 syscall_enter name=getpid
    1ms 101 syscall_exit name=getpid ret=100
    2ms 101 syscall_enter name=poll
    3ms 101 syscall_exit name=poll ret=1
    4ms 101 syscall_enter name=read fd=4
    4.5ms 101 switch_out state=D
    4.9ms 101 switch_in
    5ms 101 syscall_exit name=read ret=8
    6ms 101 syscall_enter name=epoll_wait
  ]]
  expect split 101 at 2ms rule loop.wait
  expect no split 101 at 2ms rule data.wait
  expect split 101 at 4ms rule data.wait
  expect split 101 at 6ms rule loop.wait
  expect segments 101 == 4
}

test "consecutive messages with disjoint peers are cut apart" {
  trace [[
    causeway-trace 1
    process 200 comm=client-a
    thread 201 pid=200 comm=a
    process 300 comm=client-b
    thread 301 pid=300 comm=b
    process 10 comm=server
    thread 11 pid=10 comm=server
    1ms 201 send object=1 offset=0 len=8 peer=10
    2ms 11 recv object=1 offset=0 len=8 peer=200
    3ms 11 send object=2 offset=0 len=8 peer=200
    4ms 201 recv object=2 offset=0 len=8 peer=10
    5ms 301 send object=3 offset=0 len=8 peer=10
    6ms 11 recv object=3 offset=0 len=8 peer=300
  ]]
  expect split 11 at 6ms rule peers.disjoint
  expect no split 11 at 3ms
  expect segments 11 == 2
}

test "a fork joins the parent to the child's first event" {
  trace [[
    causeway-trace 1
    process 100 comm=shell
    thread 100 pid=100 comm=shell
    process 200 comm=child ppid=100
    thread 200 pid=200 comm=child
    1ms 100 fork child=200 child_pid=200
    2ms 200 thread_start parent=100
  ]]
  expect edge 100 -> 200 kind fork strength strong rule fork.child
}

test "a child's exit joins the wait4 that reaped it, not another call returning its pid" {
  trace [[
    causeway-trace 1
    process 100 comm=shell
    thread 100 pid=100 comm=shell
    process 200 comm=child ppid=100
    thread 200 pid=200 comm=child
    process 300 comm=reader
    thread 300 pid=300 comm=reader
    1ms 100 syscall_enter name=wait4
    2ms 300 syscall_enter name=read fd=3
    5ms 200 exit code=0
    5500us 300 syscall_exit name=read ret=200
    6ms 100 syscall_exit name=wait4 ret=200
  ]]
  expect edge 200 -> 100 kind exit strength strong rule exit.reaped
  expect no edge 200 -> 300
}

test "an exiting child's wake-up of its parent's poll is a strong exit edge" {
  trace [[
    causeway-trace 1
    process 100 comm=builder
    thread 100 pid=100 comm=builder
    process 200 comm=job ppid=100
    thread 200 pid=200 comm=job
    1ms 100 syscall_enter name=ppoll fd=-1 count=1
    1ms 100 switch_out state=S
    5ms 200 exit code=0
    5ms 200 wakeup target=100
    6ms 100 switch_in
    6ms 100 syscall_exit name=ppoll ret=1
  ]]
  expect edge 200 -> 100 kind exit strength strong rule exit.wake
}

test "an exit's wake-up of a lock waiter, a waitid or a joiner is a strong exit edge" {
  trace [[
    causeway-trace 1
    process 100 comm=waiter
    thread 100 pid=100 comm=waiter
    thread 101 pid=100 comm=joiner
    thread 102 pid=100 comm=worker
    process 200 comm=holder ppid=100
    thread 200 pid=200 comm=holder
    process 300 comm=child ppid=100
    thread 300 pid=300 comm=child
    1ms 100 syscall_enter name=flock fd=3 resource=77 op=ex value=2
    1ms 100 switch_out state=S
    1ms 101 syscall_enter name=futex resource=4096 op=wait
    1ms 101 switch_out state=S
    5ms 200 exit code=0
    5ms 200 wakeup target=100
    6ms 100 switch_in
    6ms 100 syscall_exit name=flock ret=0
    6ms 100 syscall_enter name=waitid
    6ms 100 switch_out state=S
    8ms 300 exit code=0
    8ms 300 wakeup target=100
    9ms 100 switch_in
    9ms 100 syscall_exit name=waitid ret=0
    10ms 102 exit code=0
    10ms 102 wakeup target=101
    11ms 101 switch_in
    11ms 101 syscall_exit name=futex ret=0
  ]]
  expect edge 200 -> 100 kind exit strength strong rule exit.wake at 6ms
  expect edge 300 -> 100 kind exit strength strong rule exit.wake at 9ms
  expect edge 102 -> 101 kind exit strength strong rule exit.wake
}

test "a write that blocks on a full pipe is a wait: the reader's wake-up ends it" {
  trace [[
    causeway-trace 1
    process 100 comm=writer
    thread 100 pid=100 comm=writer
    process 200 comm=reader
    thread 200 pid=200 comm=reader
    0ms 100 syscall_enter name=getpid
    0ms 100 syscall_exit name=getpid ret=100
    1ms 100 syscall_enter name=write fd=3 count=131072
    1ms 100 send object=5 offset=0 len=65536 peer=200 fd=3
    1ms 100 switch_out state=S
    1ms 200 syscall_enter name=clock_nanosleep
    1ms 200 switch_out state=S
    500ms 200 switch_in
    500ms 200 syscall_exit name=clock_nanosleep ret=0
    500ms 200 syscall_enter name=read fd=4 count=131072
    500ms 200 recv object=5 offset=0 len=65536 peer=100 fd=4
    500ms 200 wakeup target=100
    500ms 200 syscall_exit name=read ret=65536
    501ms 100 switch_in
    501ms 100 send object=5 offset=65536 len=65536 peer=200 fd=3
    501ms 100 syscall_exit name=write ret=131072
  ]]
  expect split 100 at 1ms rule write.wait
  expect edge 200 -> 100 kind wakeup rule wakeup.default at 501ms
  expect hang 100 kind LongWait
  expect root_cause 200 kind LongWait
}

test "a wake-up before the exit, or an interrupt's during it, is not the exit's" {
  trace [[
    causeway-trace 1
    process 100 comm=builder
    thread 100 pid=100 comm=builder
    process 200 comm=job ppid=100
    thread 200 pid=200 comm=job
    1ms 100 syscall_enter name=ppoll fd=-1 count=1
    1ms 100 switch_out state=S
    3ms 200 wakeup target=100
    4ms 100 switch_in
    4ms 100 syscall_exit name=ppoll ret=0
    4ms 100 syscall_enter name=ppoll fd=-1 count=1
    4ms 100 switch_out state=S
    5ms 200 exit code=0
    5ms 200 wakeup target=100 interrupt=1
    6ms 100 switch_in
    6ms 100 syscall_exit name=ppoll ret=0
  ]]
  expect edge 200 -> 100 kind wakeup strength weak rule wakeup.default
  expect no edge 200 -> 100 kind exit
  expect stat pruned == 1
}

test "a timer's arming joins its expiry" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=main
    thread 102 pid=100 comm=timer
    1ms 101 timer_arm timer=5 expires_ns=10000000
    10ms 102 timer_fire timer=5
  ]]
  expect edge 101 -> 102 kind timer strength strong rule timer.fire
}

test "a signal joins sender and receiver" {
  trace [[
    causeway-trace 1
    process 100 comm=a
    thread 101 pid=100 comm=a
    process 200 comm=b
    thread 201 pid=200 comm=b
    1ms 101 signal_send target=201 sig=10
    2ms 201 signal_deliver sig=10
  ]]
  expect edge 101 -> 201 kind signal strength strong rule signal.delivered
}

test "a posted task joins the thread that runs it" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=main
    thread 102 pid=100 comm=pool
    1ms 101 task_post task=42 queue=io
    3ms 102 task_begin task=42 queue=io
    4ms 102 task_end task=42
  ]]
  expect edge 101 -> 102 kind task strength strong rule task.run
}

test "a write to a file that wakes a poller is a strong file-change edge" {
  trace [[
    causeway-trace 1
    process 100 comm=editor
    thread 100 pid=100 comm=editor
    process 200 comm=vim
    thread 200 pid=200 comm=vim
    1ms 100 syscall_enter name=poll fd=-1 count=2
    1ms 100 switch_out state=S
    5ms 200 syscall_enter name=write fd=3 resource=0xa8e164 count=4096
    5ms 200 wakeup target=100
    5ms 200 syscall_exit name=write ret=4096
    6ms 100 switch_in
    6ms 100 syscall_exit name=poll ret=1
  ]]
  expect edge 200 -> 100 kind file_change strength strong rule file.change at 6ms
}

test "a file created in a watched folder wakes its watcher: a strong file-change edge" {
  trace [[
    causeway-trace 1
    process 100 comm=inotifywait
    thread 100 pid=100 comm=inotifywait
    process 200 comm=creator
    thread 200 pid=200 comm=creator
    1ms 100 syscall_enter name=pselect6 fd=-1 count=4
    1ms 100 switch_out state=S
    5ms 200 syscall_enter name=openat
    5ms 200 wakeup target=100
    5ms 200 syscall_exit name=openat ret=3
    6ms 100 switch_in
    6ms 100 syscall_exit name=pselect6 ret=1
  ]]
  expect edge 200 -> 100 kind file_change strength strong rule file.entry-change at 6ms
}

test "a write to a pipe that wakes a poller, or to the file its reader reads, is no file change" {
  trace [[
    causeway-trace 1
    process 100 comm=reader
    thread 100 pid=100 comm=reader
    thread 101 pid=100 comm=filereader
    process 200 comm=writer
    thread 200 pid=200 comm=writer
    1ms 100 syscall_enter name=poll fd=-1 count=1
    1ms 100 switch_out state=S
    1ms 101 syscall_enter name=read fd=5 resource=0xa8e164 count=4096
    1ms 101 switch_out state=S
    5ms 200 syscall_enter name=write fd=3 resource=0xffff888104ede400 count=8
    5ms 200 wakeup target=100
    5ms 200 syscall_exit name=write ret=8
    6ms 100 switch_in
    7ms 200 syscall_enter name=write fd=6 resource=0xa8e164 count=4096
    7ms 200 wakeup target=101
    7ms 200 syscall_exit name=write ret=4096
    8ms 101 switch_in
  ]]
  expect edge 200 -> 100 kind wakeup strength weak
  expect no edge 200 -> 100 kind file_change
  expect edge 200 -> 101 kind wakeup strength weak
  expect no edge 200 -> 101 kind file_change
}

test "a file lock still waited for at the end is joined to its holder" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    process 200 comm=holder
    thread 200 pid=200 comm=holder
    1ms 101 syscall_enter name=flock fd=3
    1ms 101 switch_out state=S
    2ms 200 syscall_enter name=nanosleep
    2ms 200 switch_out state=S
    1s 200 lock_held object=77 waiter=101 lock="FLOCK WRITE"
    1000001us 101 lock_wait object=77 holder=200
  ]]
  expect edge 200 -> 101 kind holder strength strong rule lock.holder
}

test "a lock held on another file is no holder of this wait" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    process 200 comm=holder
    thread 200 pid=200 comm=holder
    1ms 101 syscall_enter name=flock fd=3
    1ms 101 switch_out state=S
    1s 200 lock_held object=78 waiter=101 lock="FLOCK WRITE"
    1000001us 101 lock_wait object=77 holder=200
  ]]
  expect no edge 200 -> 101 kind holder
}

# A parent that looks for an ended child with wait4(WNOHANG) is not waiting: that look
# cuts nothing. A wait4 that blocks (no child ended yet) is cut where the thread sleeps in
# it, before its entry, as a read that blocks.
test "a wait4 that returns at once cuts nothing; one that blocks is cut at its entry" {
  trace [[
    causeway-trace 1
    process 100 comm=reaper
    thread 101 pid=100 comm=reaper
    1ms 101 switch_in
    2ms 101 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff
    2ms 101 syscall_exit name=wait4 ret=0
    5ms 101 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff
    5ms 101 switch_out state=S
    90ms 101 switch_in
    90ms 101 syscall_exit name=wait4 ret=200
  ]]
  expect no split 101 at 2ms
  expect split 101 at 5ms rule reap.wait
}

# perl's select(undef, undef, undef, $t) is a sleep: a pselect6 on no descriptors is no
# event loop's wait (which would make the thread a loop of idle turns).
test "a select on no descriptors is a sleep, not a loop wait" {
  trace [[
    causeway-trace 1
    process 100 comm=perl
    thread 101 pid=100 comm=perl
    1ms 101 switch_in
    2ms 101 syscall_enter name=pselect6 fd=-1 count=0 timeout_ns=50000000
    2ms 101 switch_out state=S
    52ms 101 switch_in
    52ms 101 syscall_exit name=pselect6 ret=0
    60ms 101 syscall_enter name=pselect6 fd=-1 count=3 timeout_ns=50000000
    60ms 101 syscall_exit name=pselect6 ret=1
  ]]
  expect split 101 at 2ms rule data.wait
  expect split 101 at 60ms rule loop.wait
}

# A disk writer (another program) is in pwrite64 when the poller's own 50 ms timeout fires
# in the timer interrupt on its CPU: the wake-up carries the interrupt mark and names the
# poller as its cause. Neither the write nor its writer ended that poll.
test "a poller's timeout raised in an interrupt during another's file write is no file change" {
  trace [[
    causeway-trace 1
    process 100 comm=poller
    thread 100 pid=100 comm=poller
    process 200 comm=diskwriter
    thread 200 pid=200 comm=diskwriter
    1ms 100 syscall_enter name=pselect6 fd=-1 count=4 timeout_ns=50000000
    1ms 100 switch_out state=S
    50ms 200 syscall_enter name=pwrite64 fd=3 resource=0xa8e164 count=65536
    51ms 200 wakeup target=100 interrupt=1 cause=100
    52ms 200 syscall_exit name=pwrite64 ret=65536
    53ms 100 switch_in
    53ms 100 syscall_exit name=pselect6 ret=0
  ]]
  expect no edge 200 -> 100 kind file_change
  expect no edge 200 -> 100 kind wakeup
}
