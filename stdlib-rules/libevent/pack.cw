# libevent (libevent-2.1.so.7, libevent_core-2.1.so.7): the timers of its event loop live
# in the process's memory, where the kernel sees nothing.
#
# A thread in event_base_loop waits in epoll_wait (or poll, or select: tmux asks for poll)
# for its descriptors and its timers at once. The timers are a min-heap in the event_base:
# evtimer_add / event_add(ev, &tv) in a callback only puts a deadline in the heap, and
# before every wait the loop computes the wait's timeout from the earliest deadline
# (timeout_next: that deadline minus libevent's clock, CLOCK_MONOTONIC_COARSE, as cached
# when the previous wait returned; the epoll and poll backends round it up to a
# millisecond). When no descriptor is ready by then the wait times out and the loop runs
# the timer's callback in the turn that follows.
#
# What the kernel sees is a wait that its own timer ended: linux.kernel prunes that wake-up
# (a thread's own timeout wakes it on nobody's behalf), so the turn that ran the timer's
# callback is joined only, by the weak edge of the loop's cut, to the turn before it:
# whatever the loop did last, often another client's request that has nothing to do with
# the timer. What armed the timer was the turn before the first wait that had that
# deadline. Between the two, every wait of the loop, however it returned, aimed at the same
# deadline (each timeout is the same deadline minus a later clock). The rule below joins
# each wait to the next one when both aim at the same deadline, so that the turn a timer
# ended leads, wait by wait, back to the turn that armed it.
#
# What the kernel does see needs nothing here: a hand-off to a loop from another thread
# is a write to an eventfd or a pipe that the loop reads (libevent's own notification under
# evthread, memcached's per-worker eventfd and queue), which linux.kernel pairs as a
# message; a signal reaches the loop through libevent's socketpair, a message too; and a
# loop turn per request is linux.kernel's loop.wait and loop.request, by the system calls.

pack libevent {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "libevent's event loop: a turn its timer ran is owed to the turn that armed the timer"
  # libevent-2.1.so.7, libevent_core-2.1.so.7, libevent_pthreads…: a program linked with
  # libevent maps one of them; a stack unwound through the loop names event_base_loop.
  applies library("libevent*"), symbol("event_base_loop")
}

lua [[
  -- Two waits aim at the same deadline when their ends (entry + timeout) are within 15 ms:
  -- libevent reads a coarse clock (one tick, 1 to 10 ms by the kernel's HZ, behind the real
  -- one), rounds each timeout up to a millisecond, and computes it before the turn's
  -- callbacks, from the clock it read when the previous wait returned.
  function same_deadline(a, b)
    return math.abs(a - b) <= 15000000
  end
]]

# ---- a pending timer, from wait to wait -----------------------------------------------

# Each loop wait with a timeout (linux.kernel's loop_waits), paired with the thread's next
# loop wait.
link timer.pending {
  from syscall_enter
  from_where name in loop_waits and timeout_ns > 0
  to syscall_enter
  to_where name in loop_waits
  join from.tid == to.tid
  pick next
  where to.timeout_ns > 0 and lua.same_deadline(from.ts + from.timeout_ns, to.ts + to.timeout_ns)
}

# The next wait aims at the deadline the previous one did: the same timer is still pending,
# and what runs when it fires is owed to the turn before the first wait of the run, not to
# the turns the loop served meanwhile. Weak, and cheaper than the loop's own weak cut (cost
# 3, as a boosted weak edge): it carries a deadline from turn to turn, it does not start
# work; any strong edge from another thread (a message, a connect) explains a turn better.
edge timer.still-pending {
  link timer.pending
  strength weak
  kind timer
  cost 3
}
