# redis-server's I/O threads (io-threads N): the hand-offs between the main thread and
# the I/O threads go through memory, where the kernel sees nothing.
#
# redis-server serves every client from one event loop on its main thread (aeMain around
# epoll_wait; linux.kernel's loop.wait and loop.request already cut it per request, and
# the replies it writes in beforeSleep land on the turn's last request, which the reply
# did wait for). With `io-threads N` (N > 1) it starts N-1 I/O threads (io_thd_1 …) that
# read requests and write replies for it, in a fan-out and fan-in through memory
# (networking.c, handleClientsWithPendingWritesUsingThreads and
# handleClientsWithPendingReadsUsingThreads):
#
# - fan-out: when a turn of the loop leaves at least 2×N replies to send (or, with
#   `io-threads-do-reads yes`, requests to read), the main thread deals the clients out
#   to per-thread lists and sets each I/O thread's atomic pending counter; the I/O
#   thread, which spins on that counter (a million reads, then a lock and unlock of a
#   mutex nobody holds, and again: no system call while it is active), then calls
#   writeToClient (or readQueryFromClient) for each client of its list;
# - fan-in: the main thread spins until every counter is back to zero, then runs the
#   commands the I/O threads read (the second half of
#   handleClientsWithPendingReadsUsingThreads) and goes on with its turn;
# - a turn with fewer than 2×N clients to write to, and every serverCron that finds fewer,
#   stops the I/O threads by taking their mutexes (an I/O thread then blocks on its own:
#   a futex the kernel sees); the next busy turn unlocks them (a futex wake).
#
# So, while active, the kernel sees an I/O thread on a CPU all the time, sending replies
# and reading requests it was never woken for: one long segment that looks like work, and
# that takes the blame for every reply it wrote. The rules below cut an I/O thread per
# client it serves and state both hand-offs, through redis-server's exported functions
# (Debian's redis-server exports its whole API, ~4000 functions, for modules), which
# `causeway record` hooks because the rules name them. readQueryFromClient and
# writeToClient run only on the main thread and on the I/O threads: a call on a thread that
# is not the main one (tid != pid) is an I/O thread's job.

pack redis {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "redis-server: what its I/O threads do for the main thread, handed over through memory"
  applies program("redis-server*"), symbol("IOThreadMain"), symbol("aeProcessEvents")
}

# What an I/O thread does for one client: write its pending replies, or read (and parse)
# its request.
list io_jobs = ["writeToClient", "readQueryFromClient"]

# ---- an I/O thread's jobs ------------------------------------------------------------

# Each client an I/O thread serves is one job: it begins when the thread calls
# writeToClient or readQueryFromClient for it and ends when that returns. Between jobs
# the thread spins on its counter, doing nothing for anyone; that time is no part of the
# next client's job (neighbour none: a job owes nothing to the spin before it).
split io.job {
  at call_enter
  where fn in io_jobs and tid != pid
  cut before
  neighbour none
}

split io.job.end {
  at call_exit
  where fn in io_jobs and tid != pid
  cut after
  neighbour none
}

# ---- the hand-offs through memory ---------------------------------------------------

# Fan-out: an I/O thread serves the clients that the main thread's latest fan-out dealt
# it. The main thread enters handleClientsWithPendingWritesUsingThreads (then, in the
# next turn, handleClientsWithPendingReadsUsingThreads) in every beforeSleep; the jobs an
# I/O thread runs after it are the ones it handed over, whatever the thread was doing
# (spinning) before. The main thread's own calls (its share of the list, and all of them
# when the I/O threads are idle) are not hand-offs. `where` repeats the functions so that
# `causeway record` hooks them (it plans probes from a link's `where` only).
link io.fanout {
  from call_enter
  from_where fn in ["handleClientsWithPendingWritesUsingThreads", "handleClientsWithPendingReadsUsingThreads"]
  to call_enter
  to_where fn in io_jobs and tid != pid
  join from.pid == to.pid
  where from.tid != to.tid
    and from.fn in ["handleClientsWithPendingWritesUsingThreads", "handleClientsWithPendingReadsUsingThreads"]
    and to.fn in io_jobs
  pick latest
}

edge io.handoff {
  link io.fanout
  strength strong
  kind handoff
}

# Fan-in (io-threads-do-reads yes): the main thread waits until every I/O thread has read
# its clients' requests, then runs their commands before handleClientsWithPendingReads-
# UsingThreads returns. A request an I/O thread read is run by the main thread in the
# turn that next returns from it: the main thread's work there began with that read.
link io.fanin {
  from call_exit
  from_where fn == "readQueryFromClient" and tid != pid
  to call_exit
  to_where fn == "handleClientsWithPendingReadsUsingThreads"
  join from.pid == to.pid
  where from.tid != to.tid
    and from.fn == "readQueryFromClient" and to.fn == "handleClientsWithPendingReadsUsingThreads"
  pick next
}

edge io.handback {
  link io.fanin
  strength strong
  kind handback
}
