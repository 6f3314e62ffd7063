# Tests of the postgresql pack. Processes: 10 the postmaster, 11 and 12 backends, 50 and
# 60 their clients (libpq), all postgres processes with the Debian binary's path.

test "a latch set by another backend (kill SIGURG into its epoll wait) is a strong latch edge" {
  trace [[
    causeway-trace 1
    process 11 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 11 pid=11 comm=postgres
    process 12 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 12 pid=12 comm=postgres
    1ms 12 syscall_enter name=epoll_wait fd=9 count=1 stack=main;PostmasterMain;PostgresMain;ProcSleep;WaitLatch;epoll_wait
    1ms 12 switch_out state=S
    500ms 11 syscall_enter name=kill fd=-1 resource=12 value=23
    500ms 11 wakeup target=12
    500ms 11 signal_send target=12 sig=23
    500ms 11 syscall_exit name=kill
    501ms 12 switch_in
    501ms 12 syscall_exit name=epoll_wait ret=1
  ]]
  expect edge 11 -> 12 kind latch strength strong rule latch.set
  expect no edge 11 -> 12 kind wakeup
}

test "a SIGURG from a process that is not postgres is no latch" {
  trace [[
    causeway-trace 1
    process 12 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 12 pid=12 comm=postgres
    process 40 comm=tool exe=/usr/bin/tool
    thread 40 pid=40 comm=tool
    1ms 12 syscall_enter name=epoll_wait fd=9 count=1
    1ms 12 switch_out state=S
    500ms 40 syscall_enter name=kill fd=-1 resource=12 value=23
    500ms 40 wakeup target=12
    500ms 40 syscall_exit name=kill
    501ms 12 switch_in
    501ms 12 syscall_exit name=epoll_wait ret=1
  ]]
  expect no edge 40 -> 12 kind latch
  expect edge 40 -> 12 kind wakeup strength weak
}

test "another signal between postgres processes is no latch" {
  trace [[
    causeway-trace 1
    process 10 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 10 pid=10 comm=postgres
    process 12 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 12 pid=12 comm=postgres
    1ms 12 syscall_enter name=epoll_wait fd=9 count=1
    1ms 12 switch_out state=S
    500ms 10 syscall_enter name=kill fd=-1 resource=12 value=10
    500ms 10 wakeup target=12
    500ms 10 syscall_exit name=kill
    501ms 12 switch_in
    501ms 12 syscall_exit name=epoll_wait ret=-4
  ]]
  expect no edge 10 -> 12 kind latch
}

test "a wake-up an interrupt makes during a SIGURG kill is not the latch's" {
  trace [[
    causeway-trace 1
    process 11 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 11 pid=11 comm=postgres
    process 12 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 12 pid=12 comm=postgres
    process 13 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 13 pid=13 comm=postgres
    1ms 13 syscall_enter name=epoll_wait fd=9 count=1
    1ms 13 switch_out state=S
    500ms 11 syscall_enter name=kill fd=-1 resource=12 value=23
    500ms 11 wakeup target=13 interrupt=1
    500ms 11 syscall_exit name=kill
    501ms 13 switch_in
    501ms 13 syscall_exit name=epoll_wait ret=0
  ]]
  expect no edge 11 -> 13
}

test "the postmaster's fork of a backend is weak; the client's startup packet is why the backend works" {
  trace [[
    causeway-trace 1
    process 10 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 10 pid=10 comm=postgres
    process 11 comm=postgres ppid=10 exe=/usr/lib/postgresql/15/bin/postgres
    thread 11 pid=11 comm=postgres
    process 50 comm=psql exe=/usr/lib/postgresql/15/bin/psql
    thread 50 pid=50 comm=psql
    1ms 50 syscall_enter name=sendto fd=3 resource=0x5000 count=41
    1ms 50 syscall_exit name=sendto ret=41
    1ms 50 send object=0x5000 offset=0 len=41 fd=3
    2ms 10 fork child=11 child_pid=11
    2ms 11 thread_start parent=10
    3ms 11 syscall_enter name=recvfrom fd=7 resource=0x5000 count=8192
    3ms 11 syscall_exit name=recvfrom ret=41
    3ms 11 recv object=0x5000 offset=0 len=41 fd=7
  ]]
  expect edge 10 -> 11 kind fork strength weak rule backend.fork
  expect no edge 10 -> 11 strength strong
  expect edge 50 -> 11 kind message strength strong
}

test "a backend's child that runs another program (COPY TO PROGRAM) keeps a strong fork" {
  trace [[
    causeway-trace 1
    process 11 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 11 pid=11 comm=postgres
    process 20 comm=sh ppid=11 exe=/usr/bin/dash
    thread 20 pid=20 comm=sh
    1ms 11 fork child=20 child_pid=20
    1ms 20 thread_start parent=11
  ]]
  expect edge 11 -> 20 kind fork strength strong rule linux.kernel/fork.child
  expect no edge 11 -> 20 rule backend.fork
}

# The scenario of tests/real/33-postgres-advisory-lock in miniature: holder (60) holds a
# lock through its backend (11) and sleeps on its side; psql (50) asks for the lock, its
# backend (12) sleeps in ProcSleep until 11, on holder's unlock, sets its latch; 12 then
# answers psql. The postmaster (10) forked both backends and waits in ServerLoop.
test "a client waiting for a lock another session's client holds: the holder, through the latch" {
  trace [[
    causeway-trace 1
    process 10 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 10 pid=10 comm=postgres
    process 11 comm=postgres ppid=10 exe=/usr/lib/postgresql/15/bin/postgres
    thread 11 pid=11 comm=postgres
    process 12 comm=postgres ppid=10 exe=/usr/lib/postgresql/15/bin/postgres
    thread 12 pid=12 comm=postgres
    process 50 comm=psql exe=/usr/lib/postgresql/15/bin/psql
    thread 50 pid=50 comm=psql
    process 60 comm=holder exe=/usr/bin/python3.11
    thread 60 pid=60 comm=holder
    1ms 10 fork child=11 child_pid=11
    1ms 11 thread_start parent=10
    2ms 10 syscall_enter name=pselect6 fd=-1 count=7 timeout_ns=60000000000
    2ms 10 switch_out state=S
    3ms 11 syscall_enter name=epoll_wait fd=5 count=1 stack=main;PostmasterMain;PostgresMain;pq_getbyte;secure_read;epoll_wait
    3ms 11 switch_out state=S
    10ms 60 syscall_enter name=sendto fd=3 resource=0x6000 count=33
    10ms 60 wakeup target=11
    10ms 60 syscall_exit name=sendto ret=33
    10ms 60 send object=0x6000 offset=0 len=33 fd=3
    10ms 60 syscall_enter name=poll fd=-1 count=1 timeout_ns=-1
    10ms 60 switch_out state=S
    11ms 11 switch_in
    11ms 11 syscall_exit name=epoll_wait ret=1
    11ms 11 syscall_enter name=recvfrom fd=7 resource=0x6000 count=8192
    11ms 11 syscall_exit name=recvfrom ret=33
    11ms 11 recv object=0x6000 offset=0 len=33 fd=7
    12ms 11 syscall_enter name=sendto fd=7 resource=0x6100 count=70
    12ms 11 wakeup target=60
    12ms 11 syscall_exit name=sendto ret=70
    12ms 11 send object=0x6100 offset=0 len=70 fd=7
    12ms 11 syscall_enter name=epoll_wait fd=5 count=1 stack=main;PostmasterMain;PostgresMain;pq_getbyte;secure_read;epoll_wait
    12ms 11 switch_out state=S
    13ms 60 switch_in
    13ms 60 syscall_exit name=poll ret=1
    13ms 60 syscall_enter name=recvfrom fd=3 resource=0x6100 count=16384
    13ms 60 syscall_exit name=recvfrom ret=70
    13ms 60 recv object=0x6100 offset=0 len=70 fd=3
    14ms 60 syscall_enter name=clock_nanosleep fd=-1
    14ms 60 switch_out state=S
    20ms 10 switch_in
    20ms 10 syscall_exit name=pselect6 ret=-4
    20ms 10 fork child=12 child_pid=12
    20ms 12 thread_start parent=10
    20ms 10 syscall_enter name=pselect6 fd=-1 count=7 timeout_ns=60000000000
    20ms 10 switch_out state=S
    21ms 12 syscall_enter name=epoll_wait fd=5 count=1 stack=main;PostmasterMain;PostgresMain;pq_getbyte;secure_read;epoll_wait
    21ms 12 switch_out state=S
    30ms 50 syscall_enter name=sendto fd=4 resource=0x5000 count=60
    30ms 50 wakeup target=12
    30ms 50 syscall_exit name=sendto ret=60
    30ms 50 send object=0x5000 offset=0 len=60 fd=4
    30ms 50 syscall_enter name=poll fd=-1 count=1 timeout_ns=-1 stack=main;PQgetResult;poll
    30ms 50 switch_out state=S
    31ms 12 switch_in
    31ms 12 syscall_exit name=epoll_wait ret=1
    31ms 12 syscall_enter name=recvfrom fd=7 resource=0x5000 count=8192
    31ms 12 syscall_exit name=recvfrom ret=60
    31ms 12 recv object=0x5000 offset=0 len=60 fd=7
    32ms 12 syscall_enter name=epoll_wait fd=9 count=1 stack=main;PostmasterMain;PostgresMain;PortalRun;LockAcquireExtended;ProcSleep;WaitLatch;epoll_wait
    32ms 12 switch_out state=S
    1514ms 60 switch_in
    1514ms 60 syscall_exit name=clock_nanosleep
    1515ms 60 syscall_enter name=sendto fd=3 resource=0x6000 count=35
    1515ms 60 wakeup target=11
    1515ms 60 syscall_exit name=sendto ret=35
    1515ms 60 send object=0x6000 offset=33 len=35 fd=3
    1515ms 60 syscall_enter name=poll fd=-1 count=1 timeout_ns=-1
    1515ms 60 switch_out state=S
    1516ms 11 switch_in
    1516ms 11 syscall_exit name=epoll_wait ret=1
    1516ms 11 syscall_enter name=recvfrom fd=7 resource=0x6000 count=8192
    1516ms 11 syscall_exit name=recvfrom ret=35
    1516ms 11 recv object=0x6000 offset=33 len=35 fd=7
    1517ms 11 syscall_enter name=kill fd=-1 resource=12 value=23
    1517ms 11 wakeup target=12
    1517ms 11 signal_send target=12 sig=23
    1517ms 11 syscall_exit name=kill
    1517ms 11 syscall_enter name=sendto fd=7 resource=0x6100 count=76
    1517ms 11 wakeup target=60
    1517ms 11 syscall_exit name=sendto ret=76
    1517ms 11 send object=0x6100 offset=70 len=76 fd=7
    1517ms 11 syscall_enter name=epoll_wait fd=5 count=1 stack=main;PostmasterMain;PostgresMain;pq_getbyte;secure_read;epoll_wait
    1517ms 11 switch_out state=S
    1518ms 12 switch_in
    1518ms 12 syscall_exit name=epoll_wait ret=1
    1519ms 12 syscall_enter name=sendto fd=7 resource=0x5100 count=71
    1519ms 12 wakeup target=50
    1519ms 12 syscall_exit name=sendto ret=71
    1519ms 12 send object=0x5100 offset=0 len=71 fd=7
    1519ms 12 syscall_enter name=epoll_wait fd=5 count=1 stack=main;PostmasterMain;PostgresMain;pq_getbyte;secure_read;epoll_wait
    1519ms 12 switch_out state=S
    1520ms 50 switch_in
    1520ms 50 syscall_exit name=poll ret=1
    1520ms 50 syscall_enter name=recvfrom fd=4 resource=0x5100 count=16384
    1520ms 50 syscall_exit name=recvfrom ret=71
    1520ms 50 recv object=0x5100 offset=0 len=71 fd=4
    1521ms 50 exit
  ]]
  hang "psql"
  expect edge 11 -> 12 kind latch strength strong rule latch.set
  expect hang 50 kind LongWait
  expect root_cause 60 kind LongWait
  expect questions == 0
}

# The postmaster forks a backend and goes back to ServerLoop; the backend runs psql's
# slow statement (pg_sleep) and exits when psql is done, which wakes the postmaster
# (SIGCHLD). The postmaster asked its backend nothing: its select is its idle wait, and
# psql is the one that went without an answer.
test "the postmaster idle in ServerLoop while its backend works is no hang" {
  trace [[
    causeway-trace 1
    process 10 comm=postgres exe=/usr/lib/postgresql/15/bin/postgres
    thread 10 pid=10 comm=postgres
    process 11 comm=postgres ppid=10 exe=/usr/lib/postgresql/15/bin/postgres
    thread 11 pid=11 comm=postgres
    process 50 comm=psql exe=/usr/lib/postgresql/15/bin/psql
    thread 50 pid=50 comm=psql
    1ms 10 syscall_enter name=accept fd=6 resource=0x4000
    1ms 10 syscall_exit name=accept ret=7
    1ms 10 fork child=11 child_pid=11
    1ms 11 thread_start parent=10
    2ms 10 syscall_enter name=pselect6 fd=-1 count=7 timeout_ns=60000000000
    2ms 10 switch_out state=S
    3ms 11 syscall_enter name=epoll_wait fd=5 count=1 stack=main;PostmasterMain;PostgresMain;pq_getbyte;secure_read;epoll_wait
    3ms 11 switch_out state=S
    5ms 50 syscall_enter name=sendto fd=4 resource=0x5000 count=60
    5ms 50 wakeup target=11
    5ms 50 syscall_exit name=sendto ret=60
    5ms 50 send object=0x5000 offset=0 len=60 fd=4
    5ms 50 syscall_enter name=poll fd=-1 count=1 timeout_ns=-1 stack=main;PQgetResult;poll
    5ms 50 switch_out state=S
    6ms 11 switch_in
    6ms 11 syscall_exit name=epoll_wait ret=1
    6ms 11 syscall_enter name=recvfrom fd=7 resource=0x5000 count=8192
    6ms 11 syscall_exit name=recvfrom ret=60
    6ms 11 recv object=0x5000 offset=0 len=60 fd=7
    7ms 11 syscall_enter name=epoll_wait fd=9 count=1 timeout_ns=1200000000 stack=main;PostmasterMain;PostgresMain;PortalRun;pg_sleep;WaitLatch;epoll_wait
    7ms 11 switch_out state=S
    1207ms 11 wakeup target=11 interrupt=1 cause=11
    1207ms 11 switch_in
    1207ms 11 syscall_exit name=epoll_wait ret=0
    1208ms 11 syscall_enter name=sendto fd=7 resource=0x5100 count=71
    1208ms 11 wakeup target=50
    1208ms 11 syscall_exit name=sendto ret=71
    1208ms 11 send object=0x5100 offset=0 len=71 fd=7
    1208ms 11 syscall_enter name=epoll_wait fd=5 count=1 stack=main;PostmasterMain;PostgresMain;pq_getbyte;secure_read;epoll_wait
    1208ms 11 switch_out state=S
    1209ms 50 switch_in
    1209ms 50 syscall_exit name=poll ret=1
    1209ms 50 syscall_enter name=recvfrom fd=4 resource=0x5100 count=16384
    1209ms 50 syscall_exit name=recvfrom ret=71
    1209ms 50 recv object=0x5100 offset=0 len=71 fd=4
    1210ms 50 syscall_enter name=close fd=4 resource=0x5000
    1210ms 50 wakeup target=11
    1210ms 50 syscall_exit name=close
    1210ms 50 exit
    1211ms 11 switch_in
    1211ms 11 syscall_exit name=epoll_wait ret=1
    1300ms 11 exit
    1300ms 11 wakeup target=10
    1300ms 11 signal_send target=10 sig=17
    1301ms 10 switch_in
    1301ms 10 syscall_exit name=pselect6 ret=-4
    1301ms 10 signal_deliver sig=17
    1302ms 10 syscall_enter name=pselect6 fd=-1 count=7 timeout_ns=60000000000
    1302ms 10 switch_out state=S
  ]]
  hang "auto"
  expect hang 50 kind LongWait
}
