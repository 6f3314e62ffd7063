# A data flag (the Argus paper, §3.2): a worker sets a global, the main thread polls it.
pack test.flags {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "Flag write -> read edges for a declared flag"
}

flag need_display {
  symbol "need_display"
  binary "demo-app"
  size 4
  set value != 0
}

test "a setting write joins the first read that sees it on each thread" {
  trace [[
    causeway-trace 1
    process 100 comm=demo-app
    thread 101 pid=100 comm=main
    thread 102 pid=100 comm=worker
    thread 103 pid=100 comm=painter
    1ms 102 flag_write flag=need_display addr=0x601040 value=1
    2ms 101 flag_read flag=need_display addr=0x601040 value=1
    3ms 101 flag_read flag=need_display addr=0x601040 value=1
    3ms 103 flag_read flag=need_display addr=0x601040 value=1
    4ms 102 flag_write flag=need_display addr=0x601040 value=0
    5ms 101 flag_read flag=need_display addr=0x601040 value=0
  ]]
  expect edge 102 -> 101 kind flag strength strong rule need_display at 2ms
  expect edge 102 -> 103 kind flag strength strong at 3ms
  expect no edge 102 -> 101 at 3ms
  expect no edge 102 -> 101 at 5ms
  expect stat flag_edges == 2
  expect stat data_flags_used == 1
}

test "a read recorded just before the write that stored its value still joins it" {
  # A watchpoint records a write at its trap, after the store: a thread polling on
  # another CPU can be recorded reading the new value a few microseconds earlier.
  trace [[
    causeway-trace 1
    process 100 comm=demo-app
    thread 101 pid=100 comm=main
    thread 102 pid=100 comm=worker
    1ms 101 flag_read flag=need_display addr=0x601040 value=0
    2000us 101 flag_read flag=need_display addr=0x601040 value=1
    2003us 102 flag_write flag=need_display addr=0x601040 value=1
    3ms 101 flag_read flag=need_display addr=0x601040 value=1
    10ms 101 flag_read flag=need_display addr=0x601040 value=2
    12ms 102 flag_write flag=need_display addr=0x601040 value=2
  ]]
  expect edge 102 -> 101 kind flag strength strong at 2ms
  expect no edge 102 -> 101 at 3ms
  # 2 ms before its write: too early to have seen it.
  expect no edge 102 -> 101 at 10ms
  expect stat flag_edges == 1
}

test "an undeclared flag makes no edge" {
  trace [[
    causeway-trace 1
    process 100 comm=demo-app
    thread 101 pid=100 comm=main
    thread 102 pid=100 comm=worker
    1ms 102 flag_write flag=other_flag addr=0x601080 value=1
    2ms 101 flag_read flag=other_flag addr=0x601080 value=1
  ]]
  expect no edge 102 -> 101
  expect stat flag_edges == 0
}
