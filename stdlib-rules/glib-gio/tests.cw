# Tests of glib.gio: each fails when context.handoff is removed or loosened.

# GDBus's worker thread (gdbus) hands a reply to the thread that waits for it in the poll
# of its private context (g_dbus_connection_call_sync): g_source_attach, then
# g_wakeup_signal's 8-byte write to the context's eventfd. The write's counter unit and the
# owner's read do not overlap here (the recorder's counts of an eventfd freed with a unit
# unread, carried over to a new one at the same address), so only the wake-up joins them.
test "a write of 8 bytes that wakes a thread of its process in poll is a strong hand-off" {
  trace [[
    causeway-trace 1
    process 100 comm=client
    thread 101 pid=100 comm=client
    thread 102 pid=100 comm=gdbus
    1ms 101 syscall_enter name=poll fd=-1 count=1 timeout_ns=25000000000
    1ms 101 switch_out state=S
    5ms 102 syscall_enter name=write fd=7 resource=0xffff888129f88700 count=8
    5ms 102 wakeup target=101
    5ms 102 syscall_exit name=write ret=8
    5ms 102 send object=0xffff888129f88700 offset=2 len=1 peer=-1 fd=7
    6ms 101 switch_in
    6ms 101 syscall_exit name=poll ret=1
    6ms 101 syscall_enter name=read fd=7 resource=0xffff888129f88700 count=16
    6ms 101 syscall_exit name=read ret=8
    6ms 101 recv object=0xffff888129f88700 offset=1 len=1 peer=-1 fd=7
  ]]
  expect edge 102 -> 101 kind glib_wakeup strength strong rule context.handoff at 6ms
  expect no edge 102 -> 101 kind wakeup
  expect no edge 102 -> 101 kind message
}

# Only GLib's GWakeup is meant: a wake-up from another process, a write of another size
# (a pipe's byte), or a thread that was not polling its context is left to linux.kernel.
test "another process, another size, or a wait that is no poll is no GLib hand-off" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=app
    thread 102 pid=100 comm=worker
    thread 103 pid=100 comm=reader
    process 200 comm=other
    thread 201 pid=200 comm=other
    1ms 101 syscall_enter name=poll fd=-1 count=2 timeout_ns=-1
    1ms 101 switch_out state=S
    2ms 103 syscall_enter name=read fd=9 resource=0xffff888100000100 count=16
    2ms 103 switch_out state=S
    5ms 201 syscall_enter name=write fd=5 resource=0xffff888100000200 count=8
    5ms 201 wakeup target=101
    5ms 201 syscall_exit name=write ret=8
    6ms 101 switch_in
    6ms 101 syscall_exit name=poll ret=1
    7ms 101 syscall_enter name=poll fd=-1 count=2 timeout_ns=-1
    7ms 101 switch_out state=S
    8ms 102 syscall_enter name=write fd=6 resource=0xffff888100000300 count=1
    8ms 102 wakeup target=101
    8ms 102 syscall_exit name=write ret=1
    9ms 101 switch_in
    9ms 101 syscall_exit name=poll ret=1
    10ms 102 syscall_enter name=write fd=8 resource=0xffff888100000400 count=8
    10ms 102 wakeup target=103
    10ms 102 syscall_exit name=write ret=8
    11ms 103 switch_in
  ]]
  expect no edge 201 -> 101 kind glib_wakeup
  expect edge 201 -> 101 kind wakeup strength weak
  expect no edge 102 -> 101 kind glib_wakeup
  expect edge 102 -> 101 kind wakeup strength weak
  expect no edge 102 -> 103 kind glib_wakeup
}

# A timer's interrupt that lands during the write wakes the poller on its owner's behalf,
# not the writer's: linux.kernel prunes it, and the hand-off rule does not claim it.
test "a wake-up from an interrupt during the write is not the hand-off" {
  trace [[
    causeway-trace 1
    process 100 comm=app
    thread 101 pid=100 comm=app
    thread 102 pid=100 comm=worker
    1ms 101 syscall_enter name=poll fd=-1 count=1 timeout_ns=3000000
    1ms 101 switch_out state=S
    4ms 102 syscall_enter name=write fd=7 resource=0xffff888100000500 count=8
    4ms 102 wakeup target=101 interrupt=1 cause=101
    4ms 102 syscall_exit name=write ret=8
    5ms 101 switch_in
  ]]
  expect no edge 102 -> 101
}

# The whole chain of a GLib client's synchronous D-Bus call: the client's main thread
# polls its private context; its gdbus thread writes the request to the service and reads
# the reply, then hands it over. The service took 300 ms. With the hand-off strong, the
# wait's waker leads through gdbus to the service with no edge question (the one question
# left is whether to diagnose the sleeping service in turn, always asked); as a plain
# wake-up it was one weak option among others, and the diagnosis asked which.
test "a client's synchronous call: the service is found through the gdbus thread's hand-off" {
  trace [[
    causeway-trace 1
    process 100 comm=client
    thread 101 pid=100 comm=client
    thread 102 pid=100 comm=gdbus
    process 200 comm=service
    thread 201 pid=200 comm=service
    1ms 201 syscall_enter name=poll fd=-1 count=1 timeout_ns=-1
    1ms 201 switch_out state=S
    2ms 102 syscall_enter name=poll fd=-1 count=2 timeout_ns=-1
    2ms 102 switch_out state=S
    10ms 101 syscall_enter name=write fd=5 resource=0xffff888100000600 count=8
    10ms 101 wakeup target=102
    10ms 101 syscall_exit name=write ret=8
    10ms 101 send object=0xffff888100000600 offset=0 len=1 peer=-1 fd=5
    11ms 101 syscall_enter name=poll fd=-1 count=1 timeout_ns=25000000000
    11ms 101 switch_out state=S
    12ms 102 switch_in
    12ms 102 syscall_exit name=poll ret=1
    12ms 102 syscall_enter name=read fd=5 resource=0xffff888100000600 count=16
    12ms 102 syscall_exit name=read ret=8
    12ms 102 recv object=0xffff888100000600 offset=0 len=1 peer=-1 fd=5
    13ms 102 syscall_enter name=sendmsg fd=6 resource=0xffff888100000700 count=64
    13ms 102 send object=0xffff888100000700 offset=0 len=64 peer=200 fd=6
    13ms 102 wakeup target=201
    13ms 102 syscall_exit name=sendmsg ret=64
    14ms 102 syscall_enter name=poll fd=-1 count=2 timeout_ns=-1
    14ms 102 switch_out state=S
    15ms 201 switch_in
    15ms 201 syscall_exit name=poll ret=1
    15ms 201 syscall_enter name=recvmsg fd=3 resource=0xffff888100000700 count=64
    15ms 201 syscall_exit name=recvmsg ret=64
    15ms 201 recv object=0xffff888100000700 offset=0 len=64 peer=100 fd=3
    16ms 201 syscall_enter name=nanosleep
    16ms 201 switch_out state=S
    316ms 201 switch_in
    316ms 201 syscall_exit name=nanosleep ret=0
    317ms 201 syscall_enter name=sendmsg fd=3 resource=0xffff888100000800 count=32
    317ms 201 send object=0xffff888100000800 offset=0 len=32 peer=100 fd=3
    317ms 201 wakeup target=102
    317ms 201 syscall_exit name=sendmsg ret=32
    318ms 102 switch_in
    318ms 102 syscall_exit name=poll ret=1
    318ms 102 syscall_enter name=recvmsg fd=6 resource=0xffff888100000800 count=32
    318ms 102 syscall_exit name=recvmsg ret=32
    318ms 102 recv object=0xffff888100000800 offset=0 len=32 peer=200 fd=6
    319ms 102 syscall_enter name=write fd=7 resource=0xffff888100000900 count=8
    319ms 102 wakeup target=101
    319ms 102 syscall_exit name=write ret=8
    319ms 102 send object=0xffff888100000900 offset=3 len=1 peer=-1 fd=7
    320ms 101 switch_in
    320ms 101 syscall_exit name=poll ret=1
    320ms 101 syscall_enter name=read fd=7 resource=0xffff888100000900 count=16
    320ms 101 syscall_exit name=read ret=8
    320ms 101 recv object=0xffff888100000900 offset=2 len=1 peer=-1 fd=7
    321ms 101 syscall_enter name=exit_group
  ]]
  hang "client"
  expect hang 101 kind LongWait
  expect root_cause 201 kind LongWait
  expect questions == 1
}
