# PostgreSQL's server: a family of single-threaded processes over shared memory. The
# postmaster forks one backend per client connection (and the auxiliary processes); a
# process that must wait for another one sleeps on its latch, and the other wakes it by
# setting that latch. Neither shows to the kernel as what it is: a latch is set with a
# signal that is never delivered, and a fork looks like a request the postmaster makes.
#
# "A postgres process" below is one whose executable is named postgres: the postmaster
# and everything it forks (backends, checkpointer, WAL writer, background workers) run
# the same binary without exec, so each is recorded with it.

pack postgresql {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "PostgreSQL: a latch set by another process is causal; a backend serves its client, not the postmaster that forked it"
  applies program("postgres"), symbol("PostmasterMain"), symbol("PostgresMain")
}

# ---- latches ---------------------------------------------------------------------------

# Every wait of a PostgreSQL process for another one (a heavyweight lock in ProcSleep, a
# condition variable, a synchronous commit, a checkpoint it asked for, pg_sleep, the
# client's next command) is WaitLatch: epoll_wait on a set that holds the process's latch.
# Another process wakes it with SetLatch, and SetLatch on another process's latch is a
# message: "what you wait for is here" (a lock released and granted to the waiter by
# ProcLockWakeup, a condition variable broadcast, a synchronous-commit or checkpoint
# waiter released, a request handed to the WAL writer or a background worker). Since
# PostgreSQL 14, on Linux, SetLatch is kill(owner, SIGURG), sent only when the owner may
# be asleep; the owner keeps SIGURG blocked and reads it from a signalfd in its epoll set.
# The kernel never delivers that signal, so linux.kernel has no signal edge to draw, only
# the wake-up inside kill, which it leaves weak (may or may not be causal). PostgreSQL
# sends SIGURG (23 on x86 and arm) for nothing but latches. A process setting its own
# latch (its signal handler: the deadlock-check timer, SIGHUP) signals itself and wakes
# nobody, so it is no candidate here.
edge latch.set {
  link wakeup
  where from.syscall.name == "kill" and from.syscall.value == 23
    and to.pid == from.syscall.resource
    and from.process.exe matches "*/postgres" and to.process.exe matches "*/postgres"
    and not from.irq and not from.softirq and from.interrupt != 1
  strength strong
  kind latch
  priority 20
}

# ---- one backend per client ------------------------------------------------------------

# The postmaster accepts each client connection and forks a backend for it. The backend
# reads the client's startup packet from the inherited socket, and everything it does
# after is what that client asks: the client's message, not the fork, is why it works.
# The postmaster asks its children nothing either: it goes back to its ServerLoop (select)
# at once, idle until the next connection or a child's end. A strong fork made the
# postmaster the side that opened a conversation with every backend, and the backend's
# exit the answer it waited for: the postmaster, idle in ServerLoop, was listed as a hung
# thread (causeway hangs), and a slice back from a backend's first steps went into the
# postmaster's accept loop instead of to the client. The fork is weak: it started the
# process, it asked for none of its work. Its other children are forked on others'
# behalf too (a background worker a backend registered) or run a loop of their own
# (checkpointer, WAL writer, autovacuum launcher). A child that executes another program
# (COPY ... TO PROGRAM, archive_command) is no postgres process, and linux.kernel's
# fork.child keeps its fork strong: the backend waits for that child.
edge backend.fork {
  link fork
  where from.process.exe matches "*/postgres" and to.process.exe matches "*/postgres"
  strength weak
  kind fork
  priority 10
}
