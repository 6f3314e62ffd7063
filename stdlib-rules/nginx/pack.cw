# nginx's worker processes: the thread pool behind `aio threads`, which the kernel sees
# only in part.
#
# An nginx worker serves every connection from one event loop on its main thread
# (ngx_process_events_and_timers around epoll_wait; linux.kernel's loop.wait and
# loop.request already cut it per request). With `aio threads` (and `thread_pool`) the
# worker does not read files itself: ngx_thread_read posts each read as a task to a pool
# of threads (ngx_thread_task_post: a queue under a mutex, and a condition variable's
# signal), a pool thread takes it, reads, puts it on a list of finished tasks and writes
# nginx's notification eventfd (ngx_notify), and the worker's next turn of its loop runs
# the finished tasks' handlers, which send the pages. Two hand-offs of that round trip go
# through memory, where the kernel sees nothing:
#
# - a task posted while every pool thread is busy waits in the queue: no thread is woken
#   (the condition variable has no waiter), and the thread that takes it later only
#   unlocks a mutex nobody else holds;
# - the worker never reads the eventfd (nginx registers it edge-triggered and reads it once
#   in 2^32 notifications), so the notification is no message; it is a wake-up only when
#   the worker happens to sleep in epoll_wait, and nothing at all when it is busy.
#
# The rules below state both hand-offs and cut the pool thread per task, through nginx's
# exported functions (an nginx binary exports its API for dynamic modules:
# ngx_thread_task_post, ngx_thread_mutex_unlock, ngx_thread_cond_wait,
# ngx_process_events_and_timers), which `causeway record` hooks because the rules name
# them. Every thread of an nginx process other than its main thread is a pool thread:
# nginx starts no other threads.

pack nginx {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel, glibc.pthread
  description "nginx workers: the thread pool's task queue, its tasks and its completion notification"
  applies program("nginx*"), symbol("ngx_*")
}

list loop_waits = ["epoll_wait", "epoll_pwait", "epoll_pwait2"]

# The system calls a pool task is made of: ngx_thread_read's pread, the writes of temporary
# files (ngx_thread_write_chain_to_file) and sendfile in threads.
list task_io = ["pread64", "preadv", "preadv2", "pwrite64", "pwritev", "pwritev2", "sendfile"]

# ---- the pool thread's loop ----------------------------------------------------------

# A pool thread with no task waits on the pool's condition variable
# (ngx_thread_cond_wait, in ngx_thread_pool_cycle): that is its loop's idle wait, not a
# hang, as a worker's epoll_wait is. It outranks linux.kernel's wait.entry, which cuts at
# the same futex wait, so that the wait is the loop's: a task that waited in the queue is
# traced back through the pool thread's earlier work only when the thread was busy
# meanwhile, not idle in this wait.
split pool.idle {
  at syscall_enter
  where name == "futex" and call.fn == "ngx_thread_cond_wait"
  cut before
  neighbour weak
  loop
  priority 1
}

# Each task the pool thread takes is one item of its loop: it takes the task off the
# queue under the pool's mutex, and runs the task's handler as soon as
# ngx_thread_mutex_unlock returns. A thread back from one task that finds the next already
# queued never waits, so without this cut two clients' reads are one segment.
batch pool.tasks {
  within loop
  item call_exit where fn == "ngx_thread_mutex_unlock" and tid != pid
  neighbour weak
}

# ---- the hand-offs through memory ---------------------------------------------------

# The worker posts a task (ngx_thread_task_post); the next task a pool thread of the same
# process takes is that one (the queue is first in, first out). When the pool was idle,
# the condition variable's futex wake says so too; when it was busy, this is the only
# trace of the hand-off: the task waited in the queue from its post to its take.
link pool.post {
  from call_enter
  from_where fn == "ngx_thread_task_post"
  to call_exit
  to_where fn == "ngx_thread_mutex_unlock" and tid != pid
  join from.pid == to.pid
  where from.fn == "ngx_thread_task_post" and to.fn == "ngx_thread_mutex_unlock"
  pick next
}

edge pool.queued {
  link pool.post
  strength strong
  kind task
}

# A pool thread that finished a task writes nginx's notification eventfd (8 bytes, from a
# thread that is not the worker's main thread); the worker's next return from epoll_wait
# in its loop (ngx_process_events_and_timers) reports it and runs the task's completion
# handler in that turn. The worker never reads the eventfd, so no message joins them, and
# when it was busy no wake-up does either.
link pool.notify {
  from syscall_enter
  from_where name == "write" and count == 8 and tid != pid
  to syscall_exit
  to_where name in loop_waits and tid == pid
  join from.pid == to.pid
  where to.call.fn == "ngx_process_events_and_timers"
  pick next
}

edge pool.done {
  link pool.notify
  strength strong
  kind notify
}

# ---- what a task waits for -----------------------------------------------------------

# A pool thread exists to block in its task's file I/O, one system call per task, so that
# the worker does not. When a thread wakes it there, that thread completed the I/O the
# task waited for: the daemon of a FUSE file system (a site served from sshfs, s3fs or
# rclone), which answers by writing /dev/fuse. linux.kernel cannot tell such a wake-up
# from one of unknown purpose (weak); for a pool thread blocked in a file's I/O (the call's
# resource is an inode, not a stream), the purpose is the task. An interrupt's wake-up (a
# local disk's completion) stays pruned, and a kernel worker's keeps its weak edge: the
# kernel finishing work is not a thread the task waited for.
edge pool.io {
  link wakeup
  where to.syscall.name in task_io and to.tid != to.pid and to.process.comm matches "nginx*"
    and to.syscall.resource > 0 and to.syscall.resource < 0x100000000
    and not from.thread.kernel and not from.irq and not from.softirq and from.interrupt != 1
  strength strong
  kind io
  priority 15
}
