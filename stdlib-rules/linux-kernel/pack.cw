# Linux kernel semantics: which system calls are blocking waits, which events pair up
# across threads, and how strong each pairing is. Argus's grapher rules (the published
# Argus design; the Argus paper, §4) expressed over the Linux recorder's events.

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
  "msgrcv", "semop", "semtimedop", "mq_timedreceive", "flock",
  "fsync", "fdatasync", "sync_file_range"
]

# Waits for data (bytes on a stream, a ready descriptor): the bytes' message edge lands on
# the event that took them, inside the call.
list data_waits = [
  "read", "readv", "pread64", "preadv", "preadv2", "recvfrom", "recvmsg", "recvmmsg",
  "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6"
]

# The waits an event loop makes when it has nothing to do: it returns to them after
# each event it handled.
list loop_waits = ["epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6"]

# A select or poll on no descriptors (perl's select(undef, undef, undef, $t), poll(NULL, 0,
# t)) is a sleep, not an event loop's wait for its next event.
list sleep_selects = ["select", "pselect6"]

# Waits for a child's end. wait4/waitid with WNOHANG return at once (the recorder does not
# record the options), so they cut only when they do block, as a read.
list reap_waits = ["wait4", "waitid"]

list futex_waits = ["wait", "wait_bitset", "lock_pi", "lock_pi2", "wait_requeue_pi", "waitv"]

# Writes to a file descriptor, whose changes file notifications report.
list file_writes = ["write", "pwrite64", "writev", "pwritev", "pwritev2"]

# System calls that write bytes to a stream (a pipe, a socket).
list stream_writes = [
  "write", "writev", "pwrite64", "pwritev", "pwritev2",
  "sendto", "sendmsg", "sendmmsg", "sendfile", "splice"
]

# System calls that change a folder's entries, which file notifications report (a file
# created, renamed, linked or removed).
list entry_changes = [
  "open", "openat", "creat", "mkdir", "mkdirat", "rename", "renameat", "renameat2",
  "unlink", "unlinkat", "rmdir", "link", "linkat", "symlink", "symlinkat"
]

# Waits that a file notification or a device's data ends.
list file_change_waits = [
  "read", "readv", "poll", "ppoll", "select", "pselect6",
  "epoll_wait", "epoll_pwait", "epoll_pwait2"
]

# fcntl commands that set a record lock (the recorder puts the lock type in `value`:
# F_RDLCK 0, F_WRLCK 1, F_UNLCK 2) and flock operations that take one (`value` holds the
# whole operation: LOCK_SH 1, LOCK_EX 2, LOCK_NB 4, LOCK_UN 8).
list lock_sets = ["setlk", "setlkw", "ofd_setlk", "ofd_setlkw"]
# Of those, the ones that wait until the lock is free (F_SETLKW, F_OFD_SETLKW); the others
# are tries that fail at once.
list lock_waits = ["setlkw", "ofd_setlkw"]
list flock_takes = ["sh", "ex"]

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
  where name in loop_waits and not (name in sleep_selects and count == 0)
  cut before
  neighbour weak
  loop
}

# A blocking wait usually ends one step of event processing (the Argus paper, §4.2): the wait
# starts the next segment. A flock with LOCK_NB (4 in `value`) is a try that never waits:
# a loop of tries and sleeps is cut at its sleeps only, so it is one polling loop. fcntl
# waits only for a record lock asked with F_SETLKW (fcntl's other commands return at once).
split wait.entry {
  at syscall_enter
  where (name in blocking_syscalls and name not in data_waits and name not in reap_waits
      and not (name == "flock" and (value / 4) % 2 == 1))
    or (name == "futex" and op in futex_waits)
    or (name == "fcntl" and op in lock_waits)
  cut before
  neighbour weak
}

# A wait for data cuts only when it does block: the cut is made when the thread leaves its
# CPU to sleep inside the call, and placed before the call's entry. A read that finds its
# data already there is part of the work its last real wait began, so the message that
# data carries lands on the segment that waited for it.
split data.wait {
  at switch_out
  where state != "R" and syscall.name in data_waits
  cut syscall
  neighbour weak
}

# Bytes that waited in a stream while their reader did something else (a request queued
# behind another client's, sent while the server worked or napped): the read that takes
# them begins the work they ask for (the Argus paper, §4.2: each request an item). A
# recording of every transfer cuts such reads in an event loop (loop.request, after the
# loop's wait that returned at once); one that writes only the transfers no wake-up explains
# (record --calls scheduler) sees no wait that returned at once, and marks the reads of
# bytes that waited (`queued`).
split request.queued {
  at recv
  where queued == 1
  cut syscall
  neighbour weak
}

# A wait for a child that does block (wait4 or waitid without WNOHANG, no child ended yet)
# is cut when the thread sleeps inside it, before the call's entry. One that returns at once
# (WNOHANG, or a child already ended) is a look in a polling loop, no wait: a loop of such
# looks and timed sleeps is one RepeatedYield that the reaped child's exit ends (exit.reaped).
split reap.wait {
  at switch_out
  where state != "R" and syscall.name in reap_waits
  cut syscall
  neighbour weak
}

# A write that blocks waits for room: a pipe or socket whose buffer is full until its reader
# drains it (a writer ahead of a slow reader). As a read that blocks, it is cut when the
# thread sleeps inside the call, and the wake-up that ended it lands on the segment that
# waited.
split write.wait {
  at switch_out
  where state != "R" and syscall.name in stream_writes
  cut syscall
  neighbour weak
}

# A thread serving clients from its event loop (a single-threaded server around epoll,
# poll or select) reads a request from one client's descriptor, works on it, writes the
# reply there, and goes on with the next ready descriptor. Each request is an item (the
# Argus paper, §4.2, batching): it starts at the read that took the request, so the
# client's message is what started the work, and ends where the next client's read
# begins. Reads of one descriptor in a row are one request (a request in pieces); the
# first read after each return to the loop starts an item whichever client it is for.
# Consecutive items are joined weakly: a server busy with one client's request delays the
# next. This needs no symbols: a stripped server is cut the same.
batch loop.request {
  within loop
  item recv
  per fd
  cut syscall
  neighbour weak
}

# Two consecutive messages with disjoint peers belong to different requests (when no other
# cut parts them already).
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

# A process's exit and the wait4 that reaped it (wait4 returns the child's pid). Only a
# wait4's return is an end (to_where): other calls' returns are most of a trace's events,
# and none would pair.
link exit.wait {
  from exit
  to syscall_exit
  to_where name == "wait4"
  join from.pid == to.ret
  where from.tid == from.pid
  pick latest
}

# A file lock's release and the next successful acquire of the same file by another
# process. A process that polls a lock (a try that fails, a sleep, another try) gets it
# once the holder lets go, and no wake-up says so: the release is what ends its polling.
# A close is no release here: it releases only the locks its own process held, and the
# recorder cannot tell whether it held any, so a reader's close of a database file would
# join the lock holder's next lock (sqlite opens and closes its file around its locks).
link lock.release {
  from syscall_enter
  from_where (name == "flock" and op == "un")
    or (name == "fcntl" and op in lock_sets and value == 2)
  to syscall_exit
  to_where ret == 0
    and ((syscall.name == "flock" and syscall.op in flock_takes)
      or (syscall.name == "fcntl" and syscall.op in lock_sets and syscall.value != 2))
  join from.resource == to.syscall.resource
  where from.pid != to.pid
  pick next
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

# A lock a thread was still waiting for when the recording ended, and who held it then
# (the recorder reads /proc/locks and the packs' holder rules at the end, docs/recording.md):
# a hang still in progress has no waker yet; the holder's last segment is what it waits on.
link lock.wait {
  from lock_held
  to lock_wait
  join from.object == to.object
  where from.waiter == to.tid
  pick latest
}

# A thread still blocked reading (or writing) a pipe or a TCP socket when the recording
# ends waits for whoever is at its other end: the recorder finds that process then
# (docs/recording.md) and lock.wait joins it to the wait.
holder stream.peer {
  syscall "read", "readv", "recvfrom", "recvmsg", "recvmmsg", "write", "writev", "sendto", "sendmsg"
  peer fd
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
  ends_polling
}

# The release ends the other process's polling of the lock: a RepeatedYield of tries and
# sleeps that it ends is explained by the holder.
edge lock.handover {
  link lock.release
  strength strong
  kind lock
  ends_polling
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

# A timer's signal (alarm, setitimer, timer_create) raised by its expiry in an interrupt is
# sent on behalf of the thread that armed the timer, not the thread the interrupt landed on.
edge signal.timer {
  link signal
  where from.cause != 0 and from.cause != to.tid
  from_thread cause
  strength strong
  kind timer
  priority 10
}

# A process's own timer signalling it (its alarm): no other thread sent it. Classified weak
# here only to be pruned below, so that signal.delivered never credits the thread the
# interrupt landed on.
edge signal.own-timer {
  link signal
  where from.cause != 0 and from.cause == to.tid
  strength weak
  kind timer
  priority 10
}

edge signal.own-timer.prune {
  link signal
  where from.cause != 0 and from.cause == to.tid
  strength prune
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
    and not from.irq and not from.softirq and from.interrupt != 1
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
# held, not for the write: it is left to the other rules. A wake-up an interrupt makes
# during the write (another thread's poll timing out, a disk's completion) is not the
# write's: a busy writer of a file is interrupted all the time.
edge file.change {
  link wakeup
  where from.syscall.name in file_writes and to.syscall.name in file_change_waits
    and from.syscall.resource > 0 and from.syscall.resource < 0x100000000
    and to.syscall.resource != from.syscall.resource
    and not from.irq and not from.softirq and from.interrupt != 1
  strength strong
  kind file_change
  priority 10
}

# A change to a folder's entries that wakes a thread waiting in a read or a poll: the
# watcher's inotify or fanotify descriptor reported the create, rename or removal from
# inside the call (opening a file wakes nobody else who waits in a read or a poll).
edge file.entry-change {
  link wakeup
  where from.syscall.name in entry_changes and to.syscall.name in file_change_waits
    and not from.irq and not from.softirq and from.interrupt != 1
  strength strong
  kind file_change
  priority 10
}

# A thread's exit closes its files, releases its locks, clears the word its joiners wait on
# and tells its parent: whatever wait the exit itself wakes was waiting for that exit. A
# poll or a read on a pipe or socket the exiting process held open (the hang-up), a parent
# in wait4 or waitid, a process blocked in flock or F_SETLKW on a lock the exiting one held,
# a pthread_join: a build tool polling its job's output pipe is woken so when the job's last
# process exits. The wake-ups an interrupt makes meanwhile are not the exit's.
edge exit.wake {
  link wakeup
  where from.exit and not from.irq and not from.softirq and from.interrupt != 1
  strength strong
  kind exit
  priority 10
}

# A close (or shutdown) wakes whoever waited on what it closed: the reader of a pipe or
# socket at its end of stream, a writer at the broken pipe, a poller at the hang-up, a
# process blocked on a record lock the closer's process held (closing any descriptor of a
# file releases its POSIX locks). Each such wait was waiting for the close. The wake-ups an
# interrupt makes meanwhile are not the close's.
edge close.wake {
  link wakeup
  where from.syscall.name in ["close", "shutdown"] and not from.irq and not from.softirq
    and from.interrupt != 1
  strength strong
  kind close
  priority 10
}

# A send on a stream (a socket, a pipe, an eventfd) that wakes the thread waiting to read
# it, blocked in a read of that same stream or waiting in a poll for it, delivered the bytes
# it waited for. A recording that writes the transfers has their message edge (send to
# recv); one that leaves out those a wake-up explains (record --calls scheduler) marks the
# wake-up instead (`delivers`), and it is the message.
edge stream.wake {
  link wakeup
  where from.delivers == 1 and to.syscall.name in data_waits
    and (to.syscall.resource == from.syscall.resource or to.syscall.name in loop_waits)
  strength strong
  kind message
  priority 10
  request
}

# Any other wake-up may or may not be causal (the Argus paper, §4.1).
edge wakeup.default {
  link wakeup
  strength weak
  kind wakeup
  priority -100
}

# Over loopback the kernel hands a stream's bytes to the reader from inside the writer's
# own send: the transmit raises the network-receive softirq on the writer's CPU, which runs
# before the call returns and wakes the reader. The wake-up carries the interrupt mark, but
# unlike a device's or a timer's interrupt, which lands on whatever thread happens to run,
# this softirq is the writer's own work: a receive softirq, outside any hardware handler,
# inside the writer's own stream write. Strong edges are final, so wakeup.from-irq below
# prunes only the interrupts that are not.
edge wakeup.own-send {
  link wakeup
  where from.softirq.name == "NET_RX" and not from.irq and from.syscall.name in stream_writes
  strength strong
  kind message
  priority 10
  request
}

# A connection over loopback is made the same way: the connecting side's SYN is handed
# over in a receive softirq inside its own connect, which completes the handshake and wakes
# the listener blocked in accept (or polling its listening socket).
edge wakeup.own-connect {
  link wakeup
  where from.softirq.name == "NET_RX" and not from.irq and from.syscall.name == "connect"
  strength strong
  kind connect
  priority 10
}

# The end of a loopback stream reaches the reader the same way: the closing side's FIN is
# handed over in a receive softirq inside its own close or shutdown, or inside its exit
# when the process ends with the socket open. The reader blocked for more data is woken to
# read the end of the stream: the closer's doing.
edge wakeup.own-close {
  link wakeup
  where from.softirq.name == "NET_RX" and not from.irq
    and (from.syscall.name in ["close", "shutdown"] or from.exit)
  strength strong
  kind close
  priority 10
}

# A timer's expiry wakes its waiter from an interrupt, on whatever thread the CPU ran: the
# recorder says in `cause` which thread armed the timer (a timerfd, a POSIX or interval
# timer another thread set), and the wake-up is that thread's doing. A thread's own timer
# (a timed sleep, a wait's timeout: cause is the woken thread) wakes on nobody's behalf,
# and is pruned below with the wake-ups of unknown cause.
edge wakeup.timer {
  link wakeup
  where from.interrupt == 1 and from.cause != 0 and from.cause != to.tid
  from_thread cause
  strength strong
  kind timer
  priority 20
}

# Interrupt handlers wake whoever their device or timer was serving, not on behalf of
# the thread they happened to interrupt. Device handlers show as irq spans; a local
# timer's expiry (a timed wait running out) only as the wake-up's `interrupt` mark.
edge wakeup.from-irq {
  link wakeup
  where from.irq or from.softirq or from.interrupt == 1
  strength prune
}

# Kernel workers serve unrelated requests one after another (the published Argus design).
edge wakeup.kworker {
  link wakeup
  where from.thread.kernel and to.thread.kernel
  strength prune
}

# A wake-up of unknown purpose between threads whose stacks share code is more likely
# causal (the published Argus design). Wake-ups another pack has classified (a mutex
# hand-off) keep the strength that pack gave them.
edge wakeup.shared-stack {
  link wakeup
  where edge.kind == "wakeup" and shared_symbols(from.stack, to.stack, ubiquitous_frames) > 0
  strength boost
}

# Who holds what a still-blocked thread waits for: not a wake-up that happened, but the
# reason none has happened yet.
edge lock.holder {
  link lock.wait
  strength strong
  kind holder
}
