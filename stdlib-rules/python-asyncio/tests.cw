# Tests of python.asyncio: each fails when the rule it names is removed or broken.
#
# The traces are an asyncio program (process 100: its main thread 100 runs the event loop,
# thread 101 is a worker of a run_in_executor pool) as `causeway record` sees it, cut down
# to what the rules read. Times, descriptors and call order follow a recording of
# tests/real/29-asyncio-executor-queue: the loop's epoll descriptor is 4, its self-pipe's
# read end 5 and write end 6 (socket.socketpair), the worker sends one byte on 6.

test "a pool worker's send on the loop's self-pipe is a strong threadsafe edge" {
  trace [[
    causeway-trace 1
    process 100 comm=report-app
    thread 100 pid=100 comm=report-app
    thread 101 pid=100 comm=report-app
    10ms 100 syscall_enter name=epoll_wait fd=4 count=3 timeout_ns=-1
    10ms 100 switch_out state=S
    1500ms 101 syscall_enter name=sendto fd=6 count=1
    1500ms 101 wakeup target=100
    1500ms 101 syscall_exit name=sendto ret=1
    1500ms 101 send object=0x77 offset=0 len=1 peer=100 fd=6
    1501ms 100 switch_in
    1501ms 100 syscall_exit name=epoll_wait ret=1
    1501ms 100 ready fd=5 events=1
  ]]
  expect edge 101 -> 100 kind threadsafe strength strong rule threadsafe.wake at 1501ms
  expect no edge 101 -> 100 kind wakeup
}

# The same wake-up from another process (a client's send on a unix socket the loop polls)
# is no call_soon_threadsafe: linux.kernel's plain wake-up, the message on the read.
test "a send from another process that wakes the loop is not a threadsafe edge" {
  trace [[
    causeway-trace 1
    process 100 comm=report-app
    thread 100 pid=100 comm=report-app
    process 200 comm=client
    thread 200 pid=200 comm=client
    10ms 100 syscall_enter name=epoll_wait fd=4 count=3 timeout_ns=-1
    10ms 100 switch_out state=S
    500ms 200 syscall_enter name=sendto fd=3 count=10
    500ms 200 wakeup target=100
    500ms 200 syscall_exit name=sendto ret=10
    500ms 200 send object=0x88 offset=0 len=10 peer=100 fd=3
    501ms 100 switch_in
    501ms 100 syscall_exit name=epoll_wait ret=1
  ]]
  expect no edge 200 -> 100 kind threadsafe
  expect edge 200 -> 100 kind wakeup strength weak rule wakeup.default
}

# A thread of the process woken in a read (not in the selector's wait) by a send is a
# message between two threads, which linux.kernel's stream edges say; not the loop's
# self-pipe.
test "a send that wakes a thread blocked in a read is not a threadsafe edge" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 100 pid=100 comm=app
    thread 101 pid=100 comm=app
    10ms 100 syscall_enter name=recvfrom fd=5 count=4096
    10ms 100 switch_out state=S
    300ms 101 syscall_enter name=sendto fd=6 count=1
    300ms 101 wakeup target=100
    300ms 101 syscall_exit name=sendto ret=1
    300ms 101 send object=0x77 offset=0 len=1 peer=100 fd=6
    301ms 100 switch_in
    301ms 100 syscall_exit name=recvfrom ret=1
    301ms 100 recv object=0x77 offset=0 len=1 peer=100 fd=5
  ]]
  expect no edge 101 -> 100 kind threadsafe
  expect edge 101 -> 100 kind message strength strong
}

# The loop waits 1.5 s in epoll_wait for a run_in_executor call whose worker is blocked in
# the call (a sleep here): the worker's send on the self-pipe ends the wait. That is the
# cause of the loop's next turn, not one possibility among others: no question.
test "the loop's wait for an executor call is explained by the worker without a question" {
  trace [[
    causeway-trace 1
    process 100 comm=report-app
    thread 100 pid=100 comm=report-app
    thread 101 pid=100 comm=report-app
    0ms 101 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=1500000000
    0ms 101 switch_out state=S
    10ms 100 syscall_enter name=epoll_wait fd=4 count=3 timeout_ns=-1
    10ms 100 switch_out state=S
    1500ms 101 switch_in
    1500ms 101 syscall_exit name=clock_nanosleep ret=0
    1500ms 101 syscall_enter name=sendto fd=6 count=1
    1500ms 101 wakeup target=100
    1500ms 101 syscall_exit name=sendto ret=1
    1500ms 101 send object=0x77 offset=0 len=1 peer=100 fd=6
    1501ms 101 syscall_enter name=futex op=wait_bitset resource=0x28e533f0 timeout_ns=-1
    1501ms 101 switch_out state=S
    1501ms 100 switch_in
    1501ms 100 syscall_exit name=epoll_wait ret=1
    1501ms 100 ready fd=5 events=1
    1502ms 100 syscall_enter name=recvfrom fd=5 count=4096
    1502ms 100 syscall_exit name=recvfrom ret=1
    1502ms 100 recv object=0x77 offset=0 len=1 peer=100 fd=5
    1503ms 100 syscall_enter name=epoll_wait fd=4 count=3 timeout_ns=-1
    1503ms 100 switch_out state=S
  ]]
  hang "100@0.5"
  expect hang 100 kind LongWait
  expect root_cause 101 kind LongWait
  expect questions == 0
}

# The loop thread comes back from epoll_wait while a worker runs Python code: it waits for
# the GIL in take_gil (a bare frame in Debian's python3, between libc's
# pthread_cond_timedwait and PyEval_RestoreThread), and the worker's drop_gil wakes it.
# Stacks as `causeway record --call-graph dwarf` unwinds them (outermost frame first).
test "a wake-up that ends a wait for the GIL after a blocking call is a gil edge" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 100 pid=100 comm=app
    thread 101 pid=100 comm=app-worker
    1ms 100 syscall_enter name=futex op=wait_bitset resource=0xa5b8f0 stack=main;Py_RunMain;_PyEval_EvalFrameDefault;0x6921d6;PyEval_RestoreThread;0x4f94ee;pthread_cond_timedwait;__futex_abstimed_wait_common
    1ms 100 switch_out state=S
    5ms 101 syscall_enter name=futex op=wake resource=0xa5b8f0
    5ms 101 wakeup target=100
    5ms 101 syscall_exit name=futex ret=1
    6ms 100 switch_in
    6ms 100 syscall_exit name=futex ret=0
  ]]
  expect edge 101 -> 100 kind gil strength strong rule gil.handoff
  expect no edge 101 -> 100 kind futex
}

# A worker running Python code that was asked to let the loop run (its switch interval is
# over) waits in the eval loop's take_gil for its turn back.
test "a wake-up that ends a wait for the GIL in the eval loop is a gil edge" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 100 pid=100 comm=app
    thread 101 pid=100 comm=app-worker
    1ms 101 syscall_enter name=futex op=wait_bitset resource=0xa5b8f4 stack=clone3;start_thread;_PyEval_EvalFrameDefault;_PyFunction_Vectorcall;_PyEval_EvalFrameDefault;0x4f94ee;pthread_cond_timedwait;__futex_abstimed_wait_common
    1ms 101 switch_out state=S
    3ms 100 syscall_enter name=futex op=wake resource=0xa5b8f4
    3ms 100 wakeup target=101
    3ms 100 syscall_exit name=futex ret=1
    4ms 101 switch_in
    4ms 101 syscall_exit name=futex ret=0
  ]]
  expect edge 100 -> 101 kind gil strength strong rule gil.handoff
}

# A condition variable an extension waits on from a function of its own (a named frame
# above libc's wait) is not the GIL: linux.kernel's futex edge.
test "a condition-variable wait that is not take_gil stays a futex edge" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 100 pid=100 comm=app
    thread 101 pid=100 comm=app-worker
    1ms 101 syscall_enter name=futex op=wait_bitset resource=0x7f0010 stack=clone3;start_thread;blas_thread_server;pthread_cond_wait;__futex_abstimed_wait_common
    1ms 101 switch_out state=S
    3ms 100 syscall_enter name=futex op=wake resource=0x7f0010
    3ms 100 wakeup target=101
    3ms 100 syscall_exit name=futex ret=1
    4ms 101 switch_in
    4ms 101 syscall_exit name=futex ret=0
  ]]
  expect no edge 100 -> 101 kind gil
  expect edge 100 -> 101 kind futex strength strong rule futex.wake
}
