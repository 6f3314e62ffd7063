# Tests of the libevent pack: a timer's deadline carried from wait to wait of one loop, and
# where the run of waits ends.

# sched's request (11 ms) arms a 1.5 s timer: the next wait times out at 1512 ms. lister's
# request (500 ms) is served meanwhile; the wait after it aims at the same deadline (1514 ms:
# the coarse clock and the rounding), and times out; the turn after it tells waiter. The
# wait before sched's request had no timer at all.
test "a timer armed in one turn is carried, wait by wait, to the turn it ended" {
  trace [[
    causeway-trace 1
    process 100 comm=server
    thread 101 pid=100 comm=server
    process 200 comm=sched
    thread 201 pid=200 comm=sched
    process 300 comm=lister
    thread 301 pid=300 comm=lister
    process 400 comm=waiter
    thread 401 pid=400 comm=waiter
    1ms 101 syscall_enter name=poll fd=-1 count=3 timeout_ns=-1
    1ms 101 switch_out state=S
    5ms 401 syscall_enter name=poll fd=-1 count=1 timeout_ns=-1
    5ms 401 switch_out state=S
    10ms 201 send object=1 offset=0 len=16 peer=100 fd=3
    10ms 201 wakeup target=101
    11ms 101 switch_in
    11ms 101 syscall_exit name=poll ret=1
    11ms 101 syscall_enter name=recvmsg fd=7
    11ms 101 syscall_exit name=recvmsg ret=16
    11ms 101 recv object=1 offset=0 len=16 peer=200 fd=7
    12ms 101 syscall_enter name=poll fd=-1 count=3 timeout_ns=1500000000
    12ms 101 switch_out state=S
    500ms 301 send object=2 offset=0 len=16 peer=100 fd=3
    500ms 301 wakeup target=101
    501ms 101 switch_in
    501ms 101 syscall_exit name=poll ret=1
    501ms 101 syscall_enter name=recvmsg fd=8
    501ms 101 syscall_exit name=recvmsg ret=16
    501ms 101 recv object=2 offset=0 len=16 peer=300 fd=8
    502ms 101 syscall_enter name=sendmsg fd=8
    502ms 101 send object=3 offset=0 len=8 peer=300 fd=8
    502ms 101 syscall_exit name=sendmsg ret=8
    503ms 101 syscall_enter name=poll fd=-1 count=3 timeout_ns=1011000000
    503ms 101 switch_out state=S
    1514ms 101 switch_in
    1514ms 101 syscall_exit name=poll ret=0
    1515ms 101 syscall_enter name=sendmsg fd=9
    1515ms 101 send object=4 offset=0 len=8 peer=400 fd=9
    1515ms 101 wakeup target=401
    1515ms 101 syscall_exit name=sendmsg ret=8
    1516ms 101 syscall_enter name=poll fd=-1 count=3 timeout_ns=-1
    1516ms 401 switch_in
    1516ms 401 syscall_exit name=poll ret=1
  ]]
  expect edge 101 -> 101 kind timer strength weak rule timer.still-pending at 503ms
  expect no edge 101 -> 101 kind timer at 12ms
  expect no edge 101 -> 101 kind timer at 1516ms
  hang "401@1.0"
  expect hang 401 kind LongWait
  expect root_cause 101 kind LongWait
}

# After the first wait, a turn arms an earlier timer (the next wait aims at 700 ms, not at
# 1512 ms): the first timer is no longer the one pending, and the run of waits ends there.
# A wait whose end is 20 ms off aims at another deadline too. Another thread's wait with
# the same deadline belongs to another loop.
test "another deadline, or another thread, ends the run of waits" {
  trace [[
    causeway-trace 1
    process 100 comm=server
    thread 101 pid=100 comm=server
    thread 102 pid=100 comm=other-loop
    12ms 101 syscall_enter name=poll fd=-1 count=3 timeout_ns=1500000000
    100ms 101 syscall_exit name=poll ret=1
    100ms 101 syscall_enter name=read fd=7
    100ms 101 syscall_exit name=read ret=4
    100ms 101 recv object=1 offset=0 len=4 peer=200 fd=7
    101ms 101 syscall_enter name=poll fd=-1 count=3 timeout_ns=599000000
    200ms 101 syscall_exit name=poll ret=1
    200ms 101 syscall_enter name=read fd=7
    200ms 101 syscall_exit name=read ret=4
    200ms 101 recv object=1 offset=4 len=4 peer=200 fd=7
    201ms 101 syscall_enter name=poll fd=-1 count=3 timeout_ns=519000000
    300ms 101 syscall_exit name=poll ret=1
    300ms 101 syscall_enter name=read fd=7
    300ms 101 syscall_exit name=read ret=4
    300ms 101 recv object=1 offset=8 len=4 peer=200 fd=7
    301ms 101 syscall_enter name=poll fd=-1 count=3 timeout_ns=419000000
    310ms 102 syscall_enter name=epoll_wait fd=4 count=8 timeout_ns=410000000
  ]]
  # 101 ms + 599 ms = 700 ms, not 1512 ms: a new, earlier timer; 201 ms + 519 ms = 720 ms:
  # 20 ms after the 700 ms the wait before aimed at
  expect no edge 101 -> 101 kind timer at 101ms
  expect no edge 101 -> 101 kind timer at 201ms
  # 301 ms + 419 ms = 720 ms: the deadline the wait before aimed at
  expect edge 101 -> 101 kind timer rule timer.still-pending at 301ms
  # other-loop aims at 720 ms too (310 ms + 410 ms), in a loop of its own
  expect no edge 101 -> 102
}

# A wait with no timer (-1) aims at no deadline, and one that does not wait at all (0: the
# loop polls without blocking while callbacks are still active) carries none either: a
# short timer armed right after them starts a run of its own.
test "a wait with no timeout, or a zero one, carries no deadline" {
  trace [[
    causeway-trace 1
    process 100 comm=server
    thread 101 pid=100 comm=server
    400ms 101 syscall_enter name=epoll_wait fd=4 count=8 timeout_ns=-1
    401ms 101 syscall_exit name=epoll_wait ret=1
    401ms 101 syscall_enter name=read fd=7
    401ms 101 syscall_exit name=read ret=4
    401ms 101 recv object=1 offset=0 len=4 peer=200 fd=7
    402ms 101 syscall_enter name=epoll_wait fd=4 count=8 timeout_ns=5000000
    403ms 101 syscall_exit name=epoll_wait ret=1
    403ms 101 syscall_enter name=read fd=7
    403ms 101 syscall_exit name=read ret=4
    403ms 101 recv object=1 offset=4 len=4 peer=200 fd=7
    404ms 101 syscall_enter name=epoll_wait fd=4 count=8 timeout_ns=0
    404ms 101 syscall_exit name=epoll_wait ret=1
    404ms 101 syscall_enter name=read fd=7
    404ms 101 syscall_exit name=read ret=4
    404ms 101 recv object=1 offset=8 len=4 peer=200 fd=7
    405ms 101 syscall_enter name=epoll_wait fd=4 count=8 timeout_ns=0
  ]]
  # 400 ms + -1 ns is no deadline 7 ms before the 407 ms the next wait aims at
  expect no edge 101 -> 101 kind timer at 402ms
  # 402 ms + 5 ms = 407 ms and 404 ms + 0 = 404 ms: 3 ms apart, but 404 ms is no deadline
  expect no edge 101 -> 101 kind timer at 404ms
  expect no edge 101 -> 101 kind timer at 405ms
}
