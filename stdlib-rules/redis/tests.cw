# Tests of the redis pack: an I/O thread's jobs, the fan-out that hands them over and the
# fan-in that hands read requests back; and a diagnosis that goes through them.

test "the main thread's fan-out hands an I/O thread the replies it writes; its own share is no hand-off" {
  trace [[
    causeway-trace 1
    process 100 comm=redis-server
    thread 100 pid=100 comm=redis-server
    thread 103 pid=100 comm=io_thd_1
    1ms 103 switch_in
    10ms 100 call_enter fn=handleClientsWithPendingWritesUsingThreads
    10ms 100 call_enter fn=writeToClient
    10ms 100 syscall_enter name=write fd=8 count=7
    10ms 100 send object=1 offset=0 len=7 peer=200 fd=8
    10ms 100 syscall_exit name=write ret=7
    10ms 100 call_exit fn=writeToClient
    11ms 103 call_enter fn=writeToClient
    11ms 103 syscall_enter name=write fd=9 count=7
    11ms 103 send object=2 offset=0 len=7 peer=300 fd=9
    11ms 103 syscall_exit name=write ret=7
    12ms 103 call_exit fn=writeToClient
    13ms 100 call_exit fn=handleClientsWithPendingWritesUsingThreads
    15ms 103 switch_out state=R
    16ms 103 switch_in
    20ms 103 call_enter fn=writeToClient
    20ms 103 syscall_enter name=write fd=9 count=7
    20ms 103 send object=2 offset=7 len=7 peer=300 fd=9
    20ms 103 syscall_exit name=write ret=7
    21ms 103 call_exit fn=writeToClient
  ]]
  expect edge 100 -> 103 kind handoff strength strong rule io.handoff at 11ms
  expect edge 100 -> 103 kind handoff at 20ms
  expect no edge 100 -> 100 kind handoff
  expect split 103 at 11ms rule io.job
  expect split 103 at 12ms rule io.job.end
  expect split 103 at 20ms rule io.job
  expect no split 100 at 10ms
  # the spin before the first job, the job, the spin (seen when it was preempted), the job
  expect segments 103 == 4
}

test "a request an I/O thread read is handed back to the main thread's next return from the fan-in" {
  trace [[
    causeway-trace 1
    process 100 comm=redis-server
    thread 100 pid=100 comm=redis-server
    thread 103 pid=100 comm=io_thd_1
    process 200 comm=client
    thread 200 pid=200 comm=client
    1ms 103 switch_in
    2ms 200 send object=5 offset=0 len=14 peer=100 fd=3
    10ms 100 call_enter fn=handleClientsWithPendingReadsUsingThreads
    10ms 100 call_enter fn=readQueryFromClient
    10ms 100 syscall_enter name=read fd=8 count=16384
    10ms 100 syscall_exit name=read ret=14
    10ms 100 recv object=6 offset=0 len=14 peer=300 fd=8
    10ms 100 call_exit fn=readQueryFromClient
    11ms 103 call_enter fn=readQueryFromClient
    11ms 103 syscall_enter name=read fd=9 count=16384
    11ms 103 syscall_exit name=read ret=14
    11ms 103 recv object=5 offset=0 len=14 peer=200 fd=9
    12ms 103 call_exit fn=readQueryFromClient
    15ms 100 call_exit fn=handleClientsWithPendingReadsUsingThreads
    20ms 100 call_enter fn=handleClientsWithPendingReadsUsingThreads
    20ms 100 call_exit fn=handleClientsWithPendingReadsUsingThreads
  ]]
  expect edge 100 -> 103 kind handoff rule io.handoff at 11ms
  expect edge 200 -> 103 kind message at 11ms
  expect edge 103 -> 100 kind handback strength strong rule io.handback at 15ms
  expect no edge 103 -> 100 kind handback at 20ms
  expect no edge 100 -> 100 kind handback
}

# ping-client's PING waits while the main thread runs busy-client's 1.5 s script; its
# reply then goes out through the I/O thread, which spun on the CPU all along. The I/O
# thread wrote the reply because the main thread handed it over; the time went into the
# main thread's script.
test "a reply written by an I/O thread blames the main thread's long request, not the thread's spin" {
  trace [[
    causeway-trace 1
    process 100 comm=redis-server
    thread 100 pid=100 comm=redis-server
    thread 103 pid=100 comm=io_thd_1
    process 200 comm=busy-client
    thread 200 pid=200 comm=busy-client
    process 300 comm=ping-client
    thread 300 pid=300 comm=ping-client
    0ms 103 switch_in
    0ms 100 syscall_enter name=epoll_wait fd=5
    0ms 100 switch_out state=S
    1ms 200 syscall_enter name=sendto fd=3 count=100
    1ms 200 send object=1 offset=0 len=100 peer=100 fd=3
    1ms 200 wakeup target=100
    1ms 200 syscall_exit name=sendto ret=100
    1ms 200 syscall_enter name=recvfrom fd=3 count=16384
    1ms 200 switch_out state=S
    2ms 100 switch_in
    2ms 100 syscall_exit name=epoll_wait ret=1
    2ms 100 syscall_enter name=read fd=7 count=16384
    2ms 100 syscall_exit name=read ret=100
    2ms 100 recv object=1 offset=0 len=100 peer=200 fd=7
    300ms 300 syscall_enter name=sendto fd=3 count=14
    300ms 300 send object=3 offset=0 len=14 peer=100 fd=3
    300ms 300 syscall_exit name=sendto ret=14
    300ms 300 syscall_enter name=recvfrom fd=3 count=16384
    300ms 300 switch_out state=S
    1500ms 100 call_enter fn=handleClientsWithPendingWritesUsingThreads
    1500ms 100 call_enter fn=writeToClient
    1500ms 100 syscall_enter name=write fd=7 count=5
    1500ms 100 send object=2 offset=0 len=5 peer=200 fd=7
    1500ms 100 wakeup target=200
    1500ms 100 syscall_exit name=write ret=5
    1500ms 100 call_exit fn=writeToClient
    1500ms 100 call_exit fn=handleClientsWithPendingWritesUsingThreads
    1501ms 200 switch_in
    1501ms 200 recv object=2 offset=0 len=5 peer=100 fd=3
    1501ms 200 syscall_exit name=recvfrom ret=5
    1501ms 100 syscall_enter name=epoll_wait fd=5
    1501ms 100 syscall_exit name=epoll_wait ret=1
    1501ms 100 syscall_enter name=read fd=8 count=16384
    1501ms 100 syscall_exit name=read ret=14
    1501ms 100 recv object=3 offset=0 len=14 peer=300 fd=8
    1502ms 100 call_enter fn=handleClientsWithPendingWritesUsingThreads
    1502ms 103 call_enter fn=writeToClient
    1502ms 103 syscall_enter name=write fd=8 count=7
    1502ms 103 send object=4 offset=0 len=7 peer=300 fd=8
    1502ms 103 wakeup target=300
    1502ms 103 syscall_exit name=write ret=7
    1502ms 103 call_exit fn=writeToClient
    1503ms 300 switch_in
    1503ms 300 recv object=4 offset=0 len=7 peer=100 fd=3
    1503ms 300 syscall_exit name=recvfrom ret=7
    1503ms 100 call_exit fn=handleClientsWithPendingWritesUsingThreads
    1504ms 100 syscall_enter name=epoll_wait fd=5
    1504ms 100 switch_out state=S
  ]]
  hang "ping-client"
  expect edge 100 -> 103 kind handoff at 1502ms
  expect hang 300 kind LongWait
  expect root_cause 100 kind LongRunning
}
