# Tests of node.libuv: each fails when the rule it names is removed or broken.
#
# The traces are a Node.js process (100: its main thread 100 runs the event loop, named
# file-server by process.title; 101 and 102 are two of libuv's pool workers) as
# `causeway record` sees it with the pack's functions hooked, cut down to what the rules
# read. Times, calls and futex operations follow a recording of
# tests/real/30-node-threadpool-queue: the loop queues a hash (uv__queue_work, Node's
# crypto.pbkdf2) for an idle worker, then, 290 ms later, a file open (uv__fs_work) while
# that worker is still computing; the worker takes the open right after the hash, with no
# system call in between.

test "a job queued while the worker is busy is joined to the start that ran it" {
  trace [[
    causeway-trace 1
    process 100 comm=file-server
    thread 100 pid=100 comm=file-server
    thread 101 pid=100 comm=node
    0ms 101 call_enter fn=uv_cond_wait addr=0x18bb4a0
    0ms 101 syscall_enter name=futex op=wait_bitset resource=0x566f9c8
    0ms 101 switch_out state=S
    10ms 100 call_enter fn=uv__work_submit addr=0x18a80b0
    10ms 100 call_enter fn=uv_cond_signal addr=0x18bb460
    10ms 100 syscall_enter name=futex op=wake resource=0x566f9c8 value=1
    10ms 100 wakeup target=101
    10ms 100 syscall_exit name=futex ret=1
    10ms 100 call_exit fn=uv_cond_signal
    10ms 100 call_exit fn=uv__work_submit
    11ms 101 switch_in
    11ms 101 syscall_exit name=futex ret=0
    11ms 101 call_exit fn=uv_cond_wait
    12ms 101 call_enter fn=uv__queue_work addr=0x18a7ab0
    300ms 100 call_enter fn=uv__work_submit addr=0x18a80b0
    300ms 100 call_exit fn=uv__work_submit
    300ms 100 syscall_enter name=epoll_pwait fd=14 count=1024
    300ms 100 switch_out state=S
    1200ms 101 call_exit fn=uv__queue_work
    1201ms 101 call_enter fn=uv__fs_work addr=0x18af750
    1201ms 101 syscall_enter name=openat
    1201ms 101 syscall_exit name=openat ret=22
    1201ms 101 call_exit fn=uv__fs_work
  ]]
  # The open waited in the queue from 300 ms: only the submission says who queued it.
  expect edge 100 -> 101 kind uv_work strength strong rule pool.queued at 1201ms
  # The hash came to an idle worker: its submission is joined too.
  expect edge 100 -> 101 kind uv_work strength strong rule pool.queued at 12ms
  # Each job is a segment of its own: the open does not continue the hash.
  expect split 101 at 12ms rule pool.job
  expect split 101 at 1201ms rule pool.job
}

# Node's crypto.pbkdf2 queues its job with uv_queue_work, into which the compiler inlined
# uv__work_submit (a recording of the pool with one worker: a short hash, a long one
# queued behind it, a file open behind that; no uv__work_submit for the hashes).
test "a job queued with uv_queue_work is joined to its start, once when it also calls uv__work_submit" {
  trace [[
    causeway-trace 1
    process 100 comm=file-server
    thread 100 pid=100 comm=file-server
    thread 101 pid=100 comm=node
    0ms 101 call_enter fn=uv_cond_wait addr=0x18bb4a0
    0ms 101 syscall_enter name=futex op=wait_bitset resource=0x566f9c8
    0ms 101 switch_out state=S
    10ms 100 call_enter fn=uv_queue_work addr=0x18a8290
    10ms 100 call_enter fn=uv_cond_signal addr=0x18bb460
    10ms 100 syscall_enter name=futex op=wake resource=0x566f9c8 value=1
    10ms 100 wakeup target=101
    10ms 100 syscall_exit name=futex ret=1
    10ms 100 call_exit fn=uv_cond_signal
    10ms 100 call_exit fn=uv_queue_work
    11ms 101 switch_in
    11ms 101 syscall_exit name=futex ret=0
    11ms 101 call_exit fn=uv_cond_wait
    12ms 101 call_enter fn=uv__queue_work addr=0x18a7ab0
    60ms 100 call_enter fn=uv_queue_work addr=0x18a8290
    60ms 100 call_enter fn=uv__work_submit addr=0x18a80b0
    60ms 100 call_exit fn=uv__work_submit
    60ms 100 call_exit fn=uv_queue_work
    60ms 100 syscall_enter name=epoll_pwait fd=14 count=1024
    60ms 100 switch_out state=S
    90ms 101 call_exit fn=uv__queue_work
    90ms 101 call_enter fn=uv__queue_work addr=0x18a7ab0
    400ms 100 switch_in
    400ms 100 syscall_exit name=epoll_pwait ret=1
    400ms 100 call_enter fn=uv__work_submit addr=0x18a80b0
    400ms 100 call_exit fn=uv__work_submit
    2000ms 101 call_exit fn=uv__queue_work
    2001ms 101 call_enter fn=uv__fs_work addr=0x18af750
    2001ms 101 call_exit fn=uv__fs_work
  ]]
  # The long hash waited behind the short one from 60 ms: queued by uv_queue_work.
  expect edge 100 -> 101 kind uv_work strength strong rule pool.queued at 90ms
  expect edge 100 -> 101 kind uv_work strength strong rule pool.queued at 12ms
  # The second hash's two calls were one job, taken by one start: the open is joined to
  # its own submission.
  expect edge 100 -> 101 kind uv_work strength strong rule pool.queued at 2001ms
}

test "the main thread's synchronous fs calls are not pool jobs" {
  trace [[
    causeway-trace 1
    process 100 comm=file-server
    thread 100 pid=100 comm=file-server
    thread 101 pid=100 comm=node
    0ms 100 syscall_enter name=getpid
    0ms 100 syscall_exit name=getpid ret=100
    1ms 100 call_enter fn=uv__work_submit addr=0x18a80b0
    1ms 100 call_exit fn=uv__work_submit
    2ms 100 call_enter fn=uv__fs_work addr=0x18af750
    2ms 100 syscall_enter name=openat
    2ms 100 syscall_exit name=openat ret=18
    2ms 100 call_exit fn=uv__fs_work
    3ms 101 syscall_enter name=getpid
    3ms 101 syscall_exit name=getpid ret=100
    4ms 101 call_enter fn=uv__fs_work addr=0x18af750
    4ms 101 syscall_enter name=openat
    4ms 101 syscall_exit name=openat ret=19
    4ms 101 call_exit fn=uv__fs_work
  ]]
  expect no split 100 at 2ms
  expect no edge 100 -> 100 kind uv_work
  expect split 101 at 4ms rule pool.job
  expect edge 100 -> 101 kind uv_work rule pool.queued at 4ms
}

test "a worker's wait for its next job is its loop's idle wait, its wait for the mutex is not" {
  trace [[
    causeway-trace 1
    process 100 comm=file-server
    thread 100 pid=100 comm=file-server
    thread 101 pid=100 comm=node
    0ms 101 syscall_enter name=getpid
    0ms 101 syscall_exit name=getpid ret=100
    1ms 101 call_enter fn=uv_cond_wait addr=0x18bb4a0
    1ms 101 syscall_enter name=futex op=wait_bitset resource=0x566f9c8
    1ms 101 switch_out state=S
    5ms 100 call_enter fn=uv_cond_signal addr=0x18bb460
    5ms 100 syscall_enter name=futex op=wake resource=0x566f9c8 value=1
    5ms 100 wakeup target=101
    5ms 100 syscall_exit name=futex ret=1
    5ms 100 call_exit fn=uv_cond_signal
    6ms 101 switch_in
    6ms 101 syscall_exit name=futex ret=0
    7ms 101 syscall_enter name=futex op=wait resource=0x566f960 value=2
    7ms 101 switch_out state=S
    8ms 100 syscall_enter name=futex op=wake resource=0x566f960 value=1
    8ms 100 wakeup target=101
    8ms 100 syscall_exit name=futex ret=1
    9ms 101 switch_in
    9ms 101 syscall_exit name=futex ret=0
    9ms 101 call_exit fn=uv_cond_wait
  ]]
  expect split 101 at 1ms rule pool.idle
  # Taking the mutex back inside uv_cond_wait (glibc waits with the value 2) is a lock
  # wait: linux.kernel's cut, no idle wait of the loop.
  expect split 101 at 7ms rule linux.kernel/wait.entry
  expect no split 101 at 7ms rule pool.idle
  expect edge 100 -> 101 kind condvar strength strong rule cond.signal at 6ms
}

test "the main thread's condition waits are not a pool's idle wait" {
  trace [[
    causeway-trace 1
    process 100 comm=file-server
    thread 100 pid=100 comm=file-server
    0ms 100 syscall_enter name=getpid
    0ms 100 syscall_exit name=getpid ret=100
    1ms 100 call_enter fn=uv_cond_wait addr=0x18bb4a0
    1ms 100 syscall_enter name=futex op=wait_bitset resource=0x7fff3943aeac
    1ms 100 switch_out state=S
  ]]
  expect split 100 at 1ms rule linux.kernel/wait.entry
  expect no split 100 at 1ms rule pool.idle
}

# From the same recording: the loop signals worker 101 (idle), but worker 102 holds the
# pool's mutex while it takes its own job, so 101 waits again inside uv_cond_wait for the
# mutex and 102's unlock lets it in. Only the signal handed 101 its work.
test "the unlock that lets a signalled worker take the mutex back is no cause" {
  trace [[
    causeway-trace 1
    process 100 comm=file-server
    thread 100 pid=100 comm=file-server
    thread 101 pid=100 comm=node
    thread 102 pid=100 comm=node
    0ms 101 call_enter fn=uv_cond_wait addr=0x18bb4a0
    0ms 101 syscall_enter name=futex op=wait_bitset resource=0x566f9c8
    0ms 101 switch_out state=S
    5ms 100 call_enter fn=uv_cond_signal addr=0x18bb460
    5ms 100 syscall_enter name=futex op=wake resource=0x566f9c8 value=1
    5ms 100 wakeup target=101
    5ms 100 syscall_exit name=futex ret=1
    5ms 100 call_exit fn=uv_cond_signal
    6ms 101 switch_in
    6ms 101 syscall_exit name=futex ret=0
    6ms 101 syscall_enter name=futex op=wait resource=0x566f960 value=2
    6ms 101 switch_out state=S
    7ms 102 syscall_enter name=futex op=wake resource=0x566f960 value=1
    7ms 102 wakeup target=101
    7ms 102 syscall_exit name=futex ret=1
    8ms 101 switch_in
    8ms 101 syscall_exit name=futex ret=0
    8ms 101 call_exit fn=uv_cond_wait
  ]]
  expect edge 100 -> 101 kind condvar strength strong rule cond.signal at 6ms
  expect no edge 102 -> 101
  expect stat pruned >= 1
}

test "two jobs that synchronise inside the library: no edge between them, one job each" {
  # Workers 101 and 102 each run a hash (uv__queue_work); inside it, 102 waits on a
  # condition variable of the library (futex wait_bitset) that 101's job broadcasts.
  trace [[
    causeway-trace 1
    process 100 comm=file-server
    thread 100 pid=100 comm=file-server
    thread 101 pid=100 comm=node
    thread 102 pid=100 comm=node
    1ms 101 call_enter fn=uv__queue_work addr=0x18a7ab0
    1ms 102 call_enter fn=uv__queue_work addr=0x18a7ab0
    2ms 102 syscall_enter name=futex op=wait_bitset resource=0x37307dd8 value=2
    2ms 102 switch_out state=S
    3ms 101 syscall_enter name=futex op=wake resource=0x37307dd8 value=2147483647
    3ms 101 wakeup target=102
    3ms 101 syscall_exit name=futex ret=1
    3ms 102 switch_in
    3ms 102 syscall_exit name=futex ret=0
    500ms 102 call_exit fn=uv__queue_work
    500ms 101 call_exit fn=uv__queue_work
  ]]
  # The broadcast ordered the two jobs; it did not start 102's.
  expect no edge 101 -> 102
  # The wait cuts 102's job, and the pieces stay one job (a strong neighbour edge).
  expect split 102 at 2ms rule job.wait
  expect edge 102 -> 102 strength strong rule job.wait
}
