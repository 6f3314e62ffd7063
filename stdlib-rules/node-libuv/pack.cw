# libuv as Node.js runs it: the thread pool behind the event loop, which the kernel sees
# only in part.
#
# Node runs JavaScript on one thread, its event loop (uv_run on the main thread: timers,
# then uv__io_poll's epoll_wait and the callbacks of what it reported). What may block —
# every fs.* call, crypto.pbkdf2 and scrypt, zlib, dns.lookup — is sent to libuv's pool of
# worker threads (4 unless UV_THREADPOOL_SIZE says otherwise): the loop queues a job
# (uv__work_submit: the job on a list under the pool's mutex, and a condition variable's
# signal when a worker is idle), a worker takes it, runs it (uv__fs_work, uv__queue_work,
# uv__getaddrinfo_work…), puts it on the loop's list of finished jobs and calls
# uv_async_send, whose write to an eventfd wakes the loop; the loop's next turn runs the
# finished jobs' callbacks. linux.kernel already sees the eventfd (a message from the
# worker to the loop), the loop's turns (loop.wait, loop.request) and the signal that
# wakes an idle worker (futex.wake). What it does not see:
#
# - a job queued while every worker is busy waits on the list in memory: no thread is
#   woken, and the worker that takes it later does so without a system call, right after
#   its previous job;
# - so a worker's jobs run back to back in one stretch, and what the kernel shows as one
#   step is several clients' work;
# - a worker waiting for its next job and a worker waiting for a lock look alike (a
#   futex), as do the pool's lock hand-offs and its hand-offs of work.
#
# The rules below cut a worker per job, mark its idle wait as its loop's, join a job
# queued behind busy workers to the start that ran it, and tell the pool's signals from
# its lock hand-offs, through libuv's functions, which `causeway record` hooks because the
# rules name them. The exported ones (uv_cond_wait, uv_cond_signal, uv_sem_post) are in
# every libuv, Debian's libuv.so.1 as Node's own copy; the static ones (uv__work_submit
# and the job functions) only where the binary keeps its symbol table, as Node's builds do
# (nm /usr/bin/node): with a stripped libuv those rules find nothing to hook, and a
# worker's jobs stay one step (a cut after uv_async_send, the exported end of a job, was
# tried: docs/packs/node.libuv.md says why it is not here). libuv's loop runs on
# the thread that calls uv_run, in Node the main thread: a thread that is not its
# process's main thread is taken for a pool thread (Node's other threads, V8's platform
# workers, wait for their tasks the same way, on uv_cond_wait).

pack node.libuv {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "libuv's thread pool under Node.js: each job a worker runs, its idle wait, a job queued behind busy workers, signals versus lock hand-offs"
  applies library("libuv.so*"), program("node*"), symbol("uv_run")
}

# The functions a worker runs a job in, one per kind of request (libuv's threadpool.c
# calls them through the job's `work` pointer): file system requests, uv_queue_work (Node's
# crypto, zlib and addons), DNS look-ups, reverse look-ups, uv_random.
list pool_jobs = [
  "uv__fs_work", "uv__queue_work", "uv__getaddrinfo_work", "uv__getnameinfo_work",
  "uv__random_work"
]

# Where the loop queues a job. Every kind of request goes through uv__work_submit (static,
# in threadpool.c), but uv_queue_work (exported; Node's crypto, zlib and addons use it) is
# in the same file, and compilers inline the one into the other: Node 20's uv_queue_work
# takes the pool's mutex and signals its condition variable itself, with no call to
# uv__work_submit (objdump -d /usr/bin/node). Where both are called for one job, both
# are pending when the job starts and `pick next` pairs them with that one start.
list pool_submits = ["uv__work_submit", "uv_queue_work"]

# Where a pool thread waits for its next job (libuv's worker: uv_cond_wait on the pool's
# condition variable while the queue is empty).
list pool_waits = ["uv_cond_wait", "uv_cond_timedwait"]

# ---- the worker's loop ---------------------------------------------------------------

# A worker with no job waits on the pool's condition variable: that is its loop's idle
# wait, not a hang, as the event loop's epoll_wait is. Inside uv_cond_wait the thread also
# takes the mutex back after the signal; glibc waits for a held mutex with the value 2
# (__lll_lock_wait), which is a lock wait and stays linux.kernel's. It outranks
# linux.kernel's wait.entry, which cuts at the same futex wait, so that the wait is the
# loop's: time a worker spent idle is then not counted as time a queued job waited behind
# it.
split pool.idle {
  at syscall_enter
  where name == "futex" and op in futex_waits and not (op == "wait" and value == 2)
    and call.fn in pool_waits and tid != pid
  cut before
  neighbour weak
  loop
  priority 1
}

# Each job a worker runs begins a segment. A worker back from one job that finds the next
# already queued never waits, so without this cut two clients' jobs are one step of one
# thread: the second seems to have been started by whatever started the first. Consecutive
# jobs are joined weakly: a job queued behind the one before it waited for it. Node also
# runs the same functions on the main thread for the synchronous fs calls (fs.readFileSync
# runs uv__fs_work in place): those are no pool jobs and are not cut.
split pool.job {
  at call_enter
  where fn in pool_jobs and tid != pid
  cut before
  neighbour weak
}

# ---- the hand-offs -------------------------------------------------------------------

# The loop queues a job (pool_submits); the next job a worker of the same process
# starts is that one: the queue is first in, first out. When a worker was idle, the
# condition variable's futex wake says so too; when every worker was busy, this is the
# only trace of the hand-off, and the job waited in the queue from its submission to its
# start. Jobs queued in one turn of the loop come from one segment, so pairing them all
# with the first start loses nothing; the pairing is approximate only when jobs of several
# turns are queued at once (the first start gets all of them). Slow I/O jobs (DNS) have a
# queue of their own and may be passed by others.
link pool.submit {
  from call_enter
  from_where fn in pool_submits
  to call_enter
  to_where fn in pool_jobs and tid != pid
  join from.pid == to.pid
  # The names again where the recorder looks for the functions to hook (it reads a link's
  # `where`, not its from_where).
  where from.fn in pool_submits
  pick next
}

edge pool.queued {
  link pool.submit
  strength strong
  kind uv_work
}

# libuv signals its condition variables to hand a thread work: the pool's, when the loop
# queued a job and a worker is idle (uv__work_submit), and Node's task queues for V8's
# platform workers. The waiter was waiting for exactly that. glibc.pthread says the same
# from the stack, but the signaller's stack is not recorded (the wake does not block) and
# Node's frames carry no frame pointers: libuv's own function is what shows it.
edge cond.signal {
  link wakeup
  where from.call.fn in ["uv_cond_signal", "uv_cond_broadcast", "uv_sem_post"]
    and to.syscall.name == "futex"
  strength strong
  kind condvar
  priority 20
}

# A thread woken in uv_cond_wait takes the condition's mutex back before it returns; when
# another thread holds it (a worker taking its own job off the pool's list), it waits again
# (glibc: a futex wait with the value 2) and that thread's unlock lets it in. The signal
# before was what handed it work (cond.signal); the unlock only ordered it after a few
# instructions of the holder, and it carried no cause: without this the worker's job
# seems to have been started by another worker. Classified weak here only to be pruned
# below (futex.wake would make it strong, and strong edges are final).
edge cond.relock {
  link wakeup
  where to.call.fn in pool_waits and to.syscall.name == "futex" and to.syscall.value == 2
  strength weak
  kind mutex
  priority 20
}

edge cond.relock.prune {
  link wakeup
  where to.call.fn in pool_waits and to.syscall.name == "futex" and to.syscall.value == 2
  strength prune
}

# Jobs that run at once on several workers may synchronise inside the library they call
# (OpenSSL's locks under crypto.pbkdf2, a condition variable of node's own): one worker's
# job wakes another's inside both jobs. That orders the two jobs; it did not hand the
# woken one its work, which came from the loop's submission (pool.queued): without this,
# the woken job seems started by the other worker. Classified weak only to be pruned
# (futex.wake would make it strong, and strong edges are final).
edge job.sync {
  link wakeup
  where from.call.fn in pool_jobs and to.call.fn in pool_jobs and from.pid == to.pid
    and from.tid != to.tid and to.syscall.name == "futex"
  strength weak
  kind job_sync
  priority 20
}

edge job.sync.prune {
  link wakeup
  where from.call.fn in pool_jobs and to.call.fn in pool_jobs and from.pid == to.pid
    and from.tid != to.tid and to.syscall.name == "futex"
  strength prune
}

# A job that waits inside the library it calls (job.sync) is still one job: the wait cuts
# it (linux.kernel's wait.entry), and the pieces are joined strongly, so that the job's
# later piece leads back to the job's start and to the submission that queued it.
split job.wait {
  at syscall_enter
  where name == "futex" and op in futex_waits and call.fn in pool_jobs and tid != pid
  neighbour strong
  priority 2
}
