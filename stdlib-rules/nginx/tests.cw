# Tests of the nginx pack: each fails when the rule it names is removed or broken.
#
# The traces are an nginx worker (process 100: its main thread 100 runs the event loop,
# thread 101 is the one thread of a pool) as `causeway record` sees it with the pack's
# functions hooked, cut down to what the rules read. Times and call order follow a
# recording of tests/real/35-nginx-thread-pool-queue.

# The worker posts client-a's read to an idle pool (the condition variable's futex wake
# wakes the pool thread) and, 290 ms later, client-b's read while the pool thread is
# still blocked in client-a's read: no system call at all says that this task waits.
test "a task posted while the pool thread is busy is joined to the take that ran it" {
  trace [[
    causeway-trace 1
    process 100 comm=nginx
    thread 100 pid=100 comm=nginx
    thread 101 pid=100 comm=nginx
    0ms 101 call_enter fn=ngx_thread_cond_wait addr=0x1b90
    0ms 101 syscall_enter name=futex op=wait_bitset resource=0x10
    0ms 101 switch_out state=S
    12ms 100 call_enter fn=ngx_thread_task_post addr=0x1520
    12ms 100 syscall_enter name=futex op=wake resource=0x10 value=1
    12ms 100 wakeup target=101
    12ms 100 syscall_exit name=futex ret=1
    12ms 100 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    12ms 100 call_exit fn=ngx_thread_mutex_unlock
    12ms 100 call_exit fn=ngx_thread_task_post
    13ms 101 switch_in
    13ms 101 syscall_exit name=futex ret=0
    13ms 101 call_exit fn=ngx_thread_cond_wait
    13ms 101 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    13ms 101 call_exit fn=ngx_thread_mutex_unlock
    14ms 101 syscall_enter name=pread64 fd=11 count=13
    14ms 101 switch_out state=D
    302ms 100 call_enter fn=ngx_thread_task_post addr=0x1520
    302ms 100 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    302ms 100 call_exit fn=ngx_thread_mutex_unlock
    302ms 100 call_exit fn=ngx_thread_task_post
    1200ms 101 switch_in
    1200ms 101 syscall_exit name=pread64 ret=13
    1202ms 101 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    1202ms 101 call_exit fn=ngx_thread_mutex_unlock
  ]]
  expect edge 100 -> 101 kind task strength strong rule pool.queued at 13ms
  expect edge 100 -> 101 kind task strength strong rule pool.queued at 1202ms
  # The worker's own unlock inside ngx_thread_task_post takes no task.
  expect no edge 100 -> 100 kind task
}

test "each task a pool thread takes begins an item, and its wait for the next is its loop's" {
  trace [[
    causeway-trace 1
    process 100 comm=nginx
    thread 100 pid=100 comm=nginx
    thread 101 pid=100 comm=nginx
    0ms 101 call_enter fn=ngx_thread_cond_wait addr=0x1b90
    0ms 101 syscall_enter name=futex op=wait_bitset resource=0x10
    0ms 101 switch_out state=S
    12ms 100 call_enter fn=ngx_thread_task_post addr=0x1520
    12ms 100 syscall_enter name=futex op=wake resource=0x10 value=1
    12ms 100 wakeup target=101
    12ms 100 syscall_exit name=futex ret=1
    12ms 100 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    12ms 100 call_exit fn=ngx_thread_mutex_unlock
    12ms 100 call_exit fn=ngx_thread_task_post
    13ms 101 switch_in
    13ms 101 syscall_exit name=futex ret=0
    13ms 101 call_exit fn=ngx_thread_cond_wait
    13ms 101 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    13ms 101 call_exit fn=ngx_thread_mutex_unlock
    14ms 101 syscall_enter name=write fd=9 count=8
    14ms 101 syscall_exit name=write ret=8
    15ms 101 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    15ms 101 call_exit fn=ngx_thread_mutex_unlock
    16ms 101 syscall_enter name=write fd=9 count=8
    16ms 101 syscall_exit name=write ret=8
    17ms 101 call_enter fn=ngx_thread_cond_wait addr=0x1b90
    17ms 101 syscall_enter name=futex op=wait_bitset resource=0x10
    17ms 101 switch_out state=S
  ]]
  expect split 101 at 13ms rule pool.tasks
  expect split 101 at 15ms rule pool.tasks
  expect split 101 at 17ms rule pool.idle
  expect split 101 at 0ms rule pool.idle
  expect no split 100 rule pool.tasks
}

# The worker never reads nginx's notification eventfd. Asleep in epoll_wait, it is woken
# (a weak wake-up in linux.kernel); busy, it is not woken at all, and finds the eventfd
# ready at its next epoll_wait, which returns at once.
test "a pool thread's notification joins the worker's next return from epoll_wait, woken or not" {
  trace [[
    causeway-trace 1
    process 100 comm=nginx
    thread 100 pid=100 comm=nginx
    thread 101 pid=100 comm=nginx
    1ms 100 call_enter fn=ngx_process_events_and_timers addr=0x33c0
    1ms 100 syscall_enter name=epoll_wait fd=8 count=512
    1ms 100 switch_out state=S
    10ms 101 syscall_enter name=write fd=9 count=8 resource=0xffff888603c49100
    10ms 101 wakeup target=100
    10ms 101 syscall_exit name=write ret=8
    11ms 100 switch_in
    11ms 100 syscall_exit name=epoll_wait ret=1
    12ms 101 syscall_enter name=write fd=9 count=8 resource=0xffff888603c49100
    12ms 101 syscall_exit name=write ret=8
    15ms 100 call_exit fn=ngx_process_events_and_timers
    15ms 100 call_enter fn=ngx_process_events_and_timers addr=0x33c0
    15ms 100 syscall_enter name=epoll_wait fd=8 count=512
    15ms 100 syscall_exit name=epoll_wait ret=1
  ]]
  expect edge 101 -> 100 kind notify strength strong rule pool.done at 11ms
  expect edge 101 -> 100 kind notify strength strong rule pool.done at 15ms
}

# libuv, a Python executor or any other threaded program wakes its loop the same way
# (8 bytes to an eventfd): without nginx's loop function around the epoll_wait, it is no
# notification of nginx's.
test "another program's eventfd write is no nginx notification" {
  trace [[
    causeway-trace 1
    process 100 comm=node
    thread 100 pid=100 comm=node
    thread 101 pid=100 comm=libuv-worker
    1ms 100 syscall_enter name=epoll_wait fd=8 count=1024
    1ms 100 switch_out state=S
    10ms 101 syscall_enter name=write fd=9 count=8 resource=0xffff888603c49100
    10ms 101 wakeup target=100
    10ms 101 syscall_exit name=write ret=8
    11ms 100 switch_in
    11ms 100 syscall_exit name=epoll_wait ret=1
  ]]
  expect no edge 101 -> 100 kind notify
  expect edge 101 -> 100 kind wakeup strength weak
}

# The whole round trip, cut down from tests/real/35-nginx-thread-pool-queue: client-a's
# read blocks the pool's only thread for 1.2 s (here on the device: state D); client-b's
# read, posted at 302 ms, waits in the queue; the pool thread reads it at once when it is
# back, and notifies the worker while the worker is still sending client-a's page (no
# wake-up). client-b's page leaves in the worker's next turn.
test "a page whose read waited in the pool's queue is traced back to the read before it" {
  trace [[
    causeway-trace 1
    process 100 comm=nginx
    thread 100 pid=100 comm=nginx
    thread 101 pid=100 comm=nginx
    process 200 comm=client-a
    thread 200 pid=200 comm=client-a
    process 300 comm=client-b
    thread 300 pid=300 comm=client-b
    0ms 101 call_enter fn=ngx_thread_cond_wait addr=0x1b90
    0ms 101 syscall_enter name=futex op=wait_bitset resource=0x10
    0ms 101 switch_out state=S
    1ms 100 call_enter fn=ngx_process_events_and_timers addr=0x33c0
    1ms 100 syscall_enter name=epoll_wait fd=8 count=512
    1ms 100 switch_out state=S
    10ms 200 syscall_enter name=sendto fd=3 count=90
    10ms 200 send object=0xa offset=0 len=90 fd=3 peer=100
    10ms 200 wakeup target=100
    10ms 200 syscall_exit name=sendto ret=90
    10ms 200 syscall_enter name=poll count=2
    10ms 200 switch_out state=S
    11ms 100 switch_in
    11ms 100 syscall_exit name=epoll_wait ret=1
    11ms 100 syscall_enter name=recvfrom fd=4 count=1024
    11ms 100 syscall_exit name=recvfrom ret=90
    11ms 100 recv object=0xa offset=0 len=90 fd=4 peer=200
    12ms 100 call_enter fn=ngx_thread_task_post addr=0x1520
    12ms 100 syscall_enter name=futex op=wake resource=0x10 value=1
    12ms 100 wakeup target=101
    12ms 100 syscall_exit name=futex ret=1
    12ms 100 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    12ms 100 call_exit fn=ngx_thread_mutex_unlock
    12ms 100 call_exit fn=ngx_thread_task_post
    12ms 100 call_exit fn=ngx_process_events_and_timers
    13ms 100 call_enter fn=ngx_process_events_and_timers addr=0x33c0
    13ms 100 syscall_enter name=epoll_wait fd=8 count=512
    13ms 100 switch_out state=S
    13ms 101 switch_in
    13ms 101 syscall_exit name=futex ret=0
    13ms 101 call_exit fn=ngx_thread_cond_wait
    13ms 101 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    13ms 101 call_exit fn=ngx_thread_mutex_unlock
    14ms 101 syscall_enter name=pread64 fd=11 count=13
    14ms 101 switch_out state=D
    300ms 300 syscall_enter name=sendto fd=3 count=90
    300ms 300 send object=0xb offset=0 len=90 fd=3 peer=100
    300ms 300 wakeup target=100
    300ms 300 syscall_exit name=sendto ret=90
    300ms 300 syscall_enter name=poll count=2
    300ms 300 switch_out state=S
    301ms 100 switch_in
    301ms 100 syscall_exit name=epoll_wait ret=1
    301ms 100 syscall_enter name=recvfrom fd=12 count=1024
    301ms 100 syscall_exit name=recvfrom ret=90
    301ms 100 recv object=0xb offset=0 len=90 fd=12 peer=300
    302ms 100 call_enter fn=ngx_thread_task_post addr=0x1520
    302ms 100 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    302ms 100 call_exit fn=ngx_thread_mutex_unlock
    302ms 100 call_exit fn=ngx_thread_task_post
    302ms 100 call_exit fn=ngx_process_events_and_timers
    303ms 100 call_enter fn=ngx_process_events_and_timers addr=0x33c0
    303ms 100 syscall_enter name=epoll_wait fd=8 count=512
    303ms 100 switch_out state=S
    1200ms 101 switch_in
    1200ms 101 syscall_exit name=pread64 ret=13
    1201ms 101 syscall_enter name=write fd=9 count=8 resource=0xffff888603c49100
    1201ms 101 wakeup target=100
    1201ms 101 syscall_exit name=write ret=8
    1202ms 100 switch_in
    1202ms 100 syscall_exit name=epoll_wait ret=1
    1202ms 101 call_enter fn=ngx_thread_mutex_unlock addr=0x1d60
    1202ms 101 call_exit fn=ngx_thread_mutex_unlock
    1203ms 101 syscall_enter name=write fd=9 count=8 resource=0xffff888603c49100
    1203ms 101 syscall_exit name=write ret=8
    1204ms 101 call_enter fn=ngx_thread_cond_wait addr=0x1b90
    1204ms 101 syscall_enter name=futex op=wait_bitset resource=0x10
    1204ms 101 switch_out state=S
    1204ms 100 syscall_enter name=writev fd=4 count=250
    1204ms 100 send object=0xa offset=90 len=250 fd=4 peer=200
    1204ms 100 wakeup target=200
    1204ms 100 syscall_exit name=writev ret=250
    1205ms 100 call_exit fn=ngx_process_events_and_timers
    1205ms 100 call_enter fn=ngx_process_events_and_timers addr=0x33c0
    1205ms 100 syscall_enter name=epoll_wait fd=8 count=512
    1205ms 100 syscall_exit name=epoll_wait ret=1
    1206ms 100 syscall_enter name=writev fd=12 count=250
    1206ms 100 send object=0xb offset=90 len=250 fd=12 peer=300
    1206ms 100 wakeup target=300
    1206ms 100 syscall_exit name=writev ret=250
    1206ms 100 call_exit fn=ngx_process_events_and_timers
    1207ms 100 call_enter fn=ngx_process_events_and_timers addr=0x33c0
    1207ms 100 syscall_enter name=epoll_wait fd=8 count=512
    1207ms 100 switch_out state=S
    1205ms 200 switch_in
    1205ms 200 syscall_exit name=poll ret=1
    1205ms 200 recv object=0xa offset=90 len=250 fd=3 peer=100
    1207ms 300 switch_in
    1207ms 300 syscall_exit name=poll ret=1
    1207ms 300 recv object=0xb offset=90 len=250 fd=3 peer=100
  ]]
  hang "client-b"
  expect hang 300 kind LongWait
  expect root_cause 101 kind LongWait
  expect questions == 0
}

# slow-fs (a FUSE daemon) answers the pool thread's read by writing /dev/fuse, which wakes
# the pool thread inside its pread of the file (inode 2). A device's interrupt waking a
# pool thread, or a wake-up of the worker's main thread, is no task's I/O.
test "the thread that completes a pool thread's file read is what its task waited for" {
  trace [[
    causeway-trace 1
    process 100 comm=nginx
    thread 100 pid=100 comm=nginx
    thread 101 pid=100 comm=nginx
    thread 102 pid=100 comm=nginx
    process 400 comm=slow-fs
    thread 400 pid=400 comm=slow-fs
    14ms 101 syscall_enter name=pread64 fd=11 resource=2 count=13
    14ms 101 switch_out state=S
    15ms 102 syscall_enter name=pread64 fd=12 resource=7 count=13
    15ms 102 switch_out state=D
    16ms 100 syscall_enter name=openat
    16ms 100 switch_out state=S
    1200ms 400 syscall_enter name=writev fd=4 resource=0x5 count=29
    1200ms 400 wakeup target=101
    1200ms 400 syscall_exit name=writev ret=29
    1201ms 101 switch_in
    1201ms 101 syscall_exit name=pread64 ret=13
    1202ms 400 syscall_enter name=writev fd=4 resource=0x5 count=144
    1202ms 400 wakeup target=100
    1202ms 400 syscall_exit name=writev ret=144
    1203ms 100 switch_in
    1203ms 100 syscall_exit name=openat ret=11
    1300ms 400 irq_enter irq=33 name=nvme
    1300ms 400 wakeup target=102
    1300ms 400 irq_exit irq=33
    1301ms 102 switch_in
    1301ms 102 syscall_exit name=pread64 ret=13
  ]]
  expect edge 400 -> 101 kind io strength strong rule pool.io
  expect no edge 400 -> 100 kind io
  expect edge 400 -> 100 kind wakeup strength weak
  expect no edge 400 -> 102
}
