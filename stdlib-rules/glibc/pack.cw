# glibc's pthread primitives on top of futexes: which futex wake-ups mean causality.

pack glibc.pthread {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "Mutex wake-ups are mutual exclusion; condition-variable signals are causal"
}

# An unlock that wakes a waiter hands over a lock; it did not ask for the waiter's work
# (the Argus paper, §3.1, mutual exclusion). Outranks linux.kernel/futex.wake.
edge mutex.unlock {
  link wakeup
  where from.stack matches "*pthread_mutex_unlock*" or from.stack matches "*pthread_rwlock_unlock*"
  strength weak
  kind mutex
  priority 20
}

# Signalling a condition variable or posting a semaphore is meant to start the waiter.
edge condvar.signal {
  link wakeup
  where from.stack matches "*pthread_cond_signal*" or from.stack matches "*pthread_cond_broadcast*"
    or from.stack matches "*sem_post*"
  strength strong
  kind condvar
  priority 20
}

# glibc's pthread_mutex_t keeps the lock word a waiter sleeps on (futex) at offset 0 and
# the owner's thread id (__owner, an int) at offset 8, on x86-64 and aarch64 alike. A
# thread still blocked on a mutex when the recording ends waits for that owner: the
# recorder reads it then (docs/recording.md) and linux.kernel's lock.holder makes the edge.
holder mutex.owner {
  syscall "futex"
  owner 8
  size 4
}

test "an unlock that wakes a waiter is a weak mutex edge, not a strong futex edge" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=locker
    thread 102 pid=100 comm=unlocker
    1ms 101 syscall_enter name=futex op=wait resource=0x1000 stack=main;work;__pthread_mutex_lock_full
    1ms 101 switch_out state=S
    5ms 102 syscall_enter name=futex op=wake resource=0x1000 stack=main;work;__pthread_mutex_unlock_usercnt
    5ms 102 wakeup target=101
    6ms 101 switch_in
  ]]
  expect edge 102 -> 101 kind mutex strength weak rule mutex.unlock
  expect no edge 102 -> 101 kind futex
}

test "a condition-variable signal is a strong condvar edge" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=consumer
    thread 102 pid=100 comm=producer
    1ms 101 syscall_enter name=futex op=wait_bitset resource=0x2000 stack=main;consume;pthread_cond_wait
    1ms 101 switch_out state=S
    5ms 102 syscall_enter name=futex op=wake resource=0x2000 stack=main;produce;pthread_cond_signal
    5ms 102 wakeup target=101
    6ms 101 switch_in
  ]]
  expect edge 102 -> 101 kind condvar strength strong rule condvar.signal
}

test "a mutex still waited for at the end is joined to the owner its word names" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=waiter
    thread 102 pid=100 comm=owner
    1ms 102 syscall_enter name=nanosleep
    1ms 102 switch_out state=S
    2ms 101 syscall_enter name=futex op=wait resource=0x1000 stack=main;work;__lll_lock_wait
    2ms 101 switch_out state=S
    1s 102 lock_held object=0x1000 waiter=101 lock="owner (glibc.pthread/mutex.owner)"
    1000001us 101 lock_wait object=0x1000 holder=102
  ]]
  expect edge 102 -> 101 kind holder strength strong rule lock.holder
}
