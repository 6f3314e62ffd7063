# cw-scn-yieldflag (yieldflag.c): cw-viewer's main thread spins with sched_yield until
# cw-loader stores image_loaded = 1. Declaring the global makes `causeway record --rules`
# trace its writes and reads, and the graph join the store to the poll that saw it.
pack scn.yieldflag {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "The flag cw-scn-yieldflag's viewer polls: image_loaded"
}

flag image_loaded {
  symbol "image_loaded"
  binary "cw-scn-yieldflag"
  size 4
}

# The yield loop in miniature: cw-viewer reads the flag and yields every 2 ms; cw-loader,
# blocked in read() until 51 ms, stores 1; the viewer's next read sees it.
test "the loader's store ends the viewer's yield loop" {
  trace [[
    causeway-trace 1
    process 100 comm=cw-viewer exe=/x/cw-scn-yieldflag
    thread 100 pid=100 comm=cw-viewer
    thread 101 pid=100 comm=cw-loader
    1ms 101 syscall_enter name=read fd=5
    1ms 101 switch_out state=S
    2ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    2.5ms 100 syscall_enter name=sched_yield
    2.6ms 100 syscall_exit name=sched_yield
    4ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    4.5ms 100 syscall_enter name=sched_yield
    4.6ms 100 syscall_exit name=sched_yield
    6ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    6.5ms 100 syscall_enter name=sched_yield
    6.6ms 100 syscall_exit name=sched_yield
    8ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    8.5ms 100 syscall_enter name=sched_yield
    8.6ms 100 syscall_exit name=sched_yield
    10ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    10.5ms 100 syscall_enter name=sched_yield
    10.6ms 100 syscall_exit name=sched_yield
    12ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    12.5ms 100 syscall_enter name=sched_yield
    12.6ms 100 syscall_exit name=sched_yield
    14ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    14.5ms 100 syscall_enter name=sched_yield
    14.6ms 100 syscall_exit name=sched_yield
    16ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    16.5ms 100 syscall_enter name=sched_yield
    16.6ms 100 syscall_exit name=sched_yield
    18ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    18.5ms 100 syscall_enter name=sched_yield
    18.6ms 100 syscall_exit name=sched_yield
    20ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    20.5ms 100 syscall_enter name=sched_yield
    20.6ms 100 syscall_exit name=sched_yield
    22ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    22.5ms 100 syscall_enter name=sched_yield
    22.6ms 100 syscall_exit name=sched_yield
    24ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    24.5ms 100 syscall_enter name=sched_yield
    24.6ms 100 syscall_exit name=sched_yield
    26ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    26.5ms 100 syscall_enter name=sched_yield
    26.6ms 100 syscall_exit name=sched_yield
    28ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    28.5ms 100 syscall_enter name=sched_yield
    28.6ms 100 syscall_exit name=sched_yield
    30ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    30.5ms 100 syscall_enter name=sched_yield
    30.6ms 100 syscall_exit name=sched_yield
    32ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    32.5ms 100 syscall_enter name=sched_yield
    32.6ms 100 syscall_exit name=sched_yield
    34ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    34.5ms 100 syscall_enter name=sched_yield
    34.6ms 100 syscall_exit name=sched_yield
    36ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    36.5ms 100 syscall_enter name=sched_yield
    36.6ms 100 syscall_exit name=sched_yield
    38ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    38.5ms 100 syscall_enter name=sched_yield
    38.6ms 100 syscall_exit name=sched_yield
    40ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    40.5ms 100 syscall_enter name=sched_yield
    40.6ms 100 syscall_exit name=sched_yield
    42ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    42.5ms 100 syscall_enter name=sched_yield
    42.6ms 100 syscall_exit name=sched_yield
    44ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    44.5ms 100 syscall_enter name=sched_yield
    44.6ms 100 syscall_exit name=sched_yield
    46ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    46.5ms 100 syscall_enter name=sched_yield
    46.6ms 100 syscall_exit name=sched_yield
    48ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    48.5ms 100 syscall_enter name=sched_yield
    48.6ms 100 syscall_exit name=sched_yield
    50ms 100 flag_read flag=image_loaded addr=0x4010 value=0
    50.5ms 100 syscall_enter name=sched_yield
    50.6ms 100 syscall_exit name=sched_yield
    51ms 101 switch_in
    51ms 101 syscall_exit name=read ret=4
    51.1ms 101 flag_write flag=image_loaded addr=0x4010 value=1
    52.2ms 100 flag_read flag=image_loaded addr=0x4010 value=1
  ]]
  expect edge 101 -> 100 kind flag strength strong rule image_loaded at 52.2ms
  expect stat flag_edges == 1
  expect hang 100 kind RepeatedYield
  expect root_cause 101 kind LongWait
}
