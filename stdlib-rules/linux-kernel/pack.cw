# Linux kernel semantics: which system calls are blocking waits, which events pair up
# across threads, and how strong each pairing is. Argus's grapher rules (seed 002,
# seed 000 §4) expressed over the Linux recorder's events.

pack linux.kernel {
  version "0.1.0"
  engine ">= 0.1"
  description "Scheduler wake-ups, futexes, streams, timers, signals and process life cycle"
}

# System calls in which a thread waits for something outside itself. The recorder names
# futex operations without the FUTEX_ prefix, in lower case ("wait", "wake", ...).
list blocking_syscalls = [
  "read", "readv", "pread64", "preadv", "preadv2",
  "recvfrom", "recvmsg", "recvmmsg",
  "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6",
  "nanosleep", "clock_nanosleep", "pause", "rt_sigsuspend", "rt_sigtimedwait",
  "wait4", "waitid", "accept", "accept4", "connect",
  "msgrcv", "semop", "semtimedop", "mq_timedreceive", "flock"
]

# The waits an event loop makes when it has nothing to do: it returns to them after
# each event it handled.
list loop_waits = ["epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6"]

list futex_waits = ["wait", "wait_bitset", "lock_pi", "lock_pi2", "wait_requeue_pi", "waitv"]

# Writes to a file descriptor, whose changes file notifications report.
list file_writes = ["write", "pwrite64", "writev", "pwritev", "pwritev2"]

# Waits that a file notification or a device's data ends.
list file_change_waits = [
  "read", "readv", "poll", "ppoll", "select", "pselect6",
  "epoll_wait", "epoll_pwait", "epoll_pwait2"
]

# Frames every stack shares; they say nothing about a common purpose.
list ubiquitous_frames = [
  "_start", "__libc_start_main", "__libc_start_call_main", "main",
  "start_thread", "clone", "clone3", "__clone", "__clone3"
]

# ---- segments ------------------------------------------------------------------------

# An event loop's wait for its next event: the thread has finished what it was doing and
# is idle until something happens, so the wait is not a hang. It comes before wait.entry,
# which would also cut here: of two split rules cutting at one event, the first in file
# order names the cut.
split loop.wait {
  at syscall_enter
  where name in loop_waits
  cut before
  neighbour weak
  loop
}

# A blocking wait usually ends one step of event processing (seed 000 §4.2): the wait
# starts the next segment.
split wait.entry {
  at syscall_enter
  where name in blocking_syscalls or (name == "futex" and op in futex_waits)
  cut before
  neighbour weak
}

# Two consecutive messages with disjoint peers belong to different requests.
split peers.disjoint {
  peers stream
  neighbour weak
}

# ---- pairings ------------------------------------------------------------------------

# The waker's wakeup event and the wakee's next time on a CPU.
link wakeup {
  from wakeup
  to switch_in
  join from.target == to.tid
  pick next
}

# Bytes written to a stream and the reads that took them, by stream byte offset.
link stream {
  from send
  to recv
  join from.object == to.object
  pick overlap
  range offset, len
}

link fork {
  from fork
  to thread_start
  join from.child == to.tid
  pick next
}

# A process's exit and the wait4 that reaped it (wait4 returns the child's pid).
link exit.wait {
  from exit
  to syscall_exit
  join from.pid == to.ret
  where from.tid == from.pid and to.name == "wait4"
  pick latest
}

link timer {
  from timer_arm
  to timer_fire
  join from.timer == to.timer
  pick latest
}

link signal {
  from signal_send
  to signal_deliver
  join from.target == to.tid
  pick next
}

link task {
  from task_post
  to task_begin
  join from.task == to.task
  pick next
}

# ---- edge strength -------------------------------------------------------------------

edge message {
  link stream
  strength strong
  kind message
}

edge fork.child {
  link fork
  strength strong
  kind fork
}

edge exit.reaped {
  link exit.wait
  strength strong
  kind exit
}

edge timer.fire {
  link timer
  strength strong
  kind timer
}

edge signal.delivered {
  link signal
  strength strong
  kind signal
}

edge task.run {
  link task
  strength strong
  kind task
}

# A futex wake that woke a waiter on the same address. glibc.pthread refines this for
# mutexes, whose wake-ups are mutual exclusion rather than causality.
edge futex.wake {
  link wakeup
  where from.syscall.name == "futex" and to.syscall.name == "futex"
    and from.syscall.resource == to.syscall.resource
  strength strong
  kind futex
  priority 10
}

# A write to a file that wakes a thread waiting in a read or a poll: the kernel's file
# notifications (inotify, fanotify) wake the watcher from inside the writer's system call,
# and a reader of a device file (a terminal) is woken by the data it waited for. The
# write's resource is then the file's inode number; pipes, sockets and eventfds are named
# by kernel addresses (negative as integers) or hashes and have message edges of their
# own. A reader of the same inode woken by the write is waiting for a lock the writer
# held, not for the write: it is left to the other rules.
edge file.change {
  link wakeup
  where from.syscall.name in file_writes and to.syscall.name in file_change_waits
    and from.syscall.resource > 0 and from.syscall.resource < 0x100000000
    and to.syscall.resource != from.syscall.resource
  strength strong
  kind file_change
  priority 10
}

# Any other wake-up may or may not be causal (seed 000 §4.1).
edge wakeup.default {
  link wakeup
  strength weak
  kind wakeup
  priority -100
}

# Interrupt handlers wake whoever their device or timer was serving, not on behalf of
# the thread they happened to interrupt. Device handlers show as irq spans; a local
# timer's expiry (a timed wait running out) only as the wake-up's `interrupt` mark.
edge wakeup.from-irq {
  link wakeup
  where from.irq or from.softirq or from.interrupt == 1
  strength prune
}

# Kernel workers serve unrelated requests one after another (seed 002).
edge wakeup.kworker {
  link wakeup
  where from.thread.kernel and to.thread.kernel
  strength prune
}

# A wake-up of unknown purpose between threads whose stacks share code is more likely
# causal (seed 002). Wake-ups another pack has classified (a mutex hand-off) keep the
# strength that pack gave them.
edge wakeup.shared-stack {
  link wakeup
  where edge.kind == "wakeup" and shared_symbols(from.stack, to.stack, ubiquitous_frames) > 0
  strength boost
}
