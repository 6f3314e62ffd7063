# cw-scn-needdisplay (needdisplay.c): cw-layout stores need_display = 1 when new content is
# laid out; cw-app's frame loop reads it on every frame. Declaring the global makes
# `causeway record --rules` trace its writes and reads, and the graph join the store to the
# frame that saw it.
pack scn.needdisplay {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "The flag cw-scn-needdisplay's main loop polls: need_display"
}

flag need_display {
  symbol "need_display"
  binary "cw-scn-needdisplay"
  size 4
}


# The frame loop in miniature: cw-app blocks 10 ms per frame in read() on its timer and
# reads the flag after each; cw-layout, on the CPU all along, stores 1 at 205 ms; the frame
# at 212 ms sees it.
test "the worker's store ends the main thread's run of frames" {
  trace [[
    causeway-trace 1
    process 100 comm=cw-app exe=/x/cw-scn-needdisplay
    thread 100 pid=100 comm=cw-app
    thread 101 pid=100 comm=cw-layout
    1ms 101 switch_in
    2ms 100 syscall_enter name=read fd=4
    2ms 100 switch_out state=S
    12ms 100 switch_in
    12ms 100 syscall_exit name=read ret=8
    12ms 100 flag_read flag=need_display addr=0x4010
    12ms 100 syscall_enter name=read fd=4
    12ms 100 switch_out state=S
    22ms 100 switch_in
    22ms 100 syscall_exit name=read ret=8
    22ms 100 flag_read flag=need_display addr=0x4010
    22ms 100 syscall_enter name=read fd=4
    22ms 100 switch_out state=S
    32ms 100 switch_in
    32ms 100 syscall_exit name=read ret=8
    32ms 100 flag_read flag=need_display addr=0x4010
    32ms 100 syscall_enter name=read fd=4
    32ms 100 switch_out state=S
    42ms 100 switch_in
    42ms 100 syscall_exit name=read ret=8
    42ms 100 flag_read flag=need_display addr=0x4010
    42ms 100 syscall_enter name=read fd=4
    42ms 100 switch_out state=S
    52ms 100 switch_in
    52ms 100 syscall_exit name=read ret=8
    52ms 100 flag_read flag=need_display addr=0x4010
    52ms 100 syscall_enter name=read fd=4
    52ms 100 switch_out state=S
    62ms 100 switch_in
    62ms 100 syscall_exit name=read ret=8
    62ms 100 flag_read flag=need_display addr=0x4010
    62ms 100 syscall_enter name=read fd=4
    62ms 100 switch_out state=S
    72ms 100 switch_in
    72ms 100 syscall_exit name=read ret=8
    72ms 100 flag_read flag=need_display addr=0x4010
    72ms 100 syscall_enter name=read fd=4
    72ms 100 switch_out state=S
    82ms 100 switch_in
    82ms 100 syscall_exit name=read ret=8
    82ms 100 flag_read flag=need_display addr=0x4010
    82ms 100 syscall_enter name=read fd=4
    82ms 100 switch_out state=S
    92ms 100 switch_in
    92ms 100 syscall_exit name=read ret=8
    92ms 100 flag_read flag=need_display addr=0x4010
    92ms 100 syscall_enter name=read fd=4
    92ms 100 switch_out state=S
    102ms 100 switch_in
    102ms 100 syscall_exit name=read ret=8
    102ms 100 flag_read flag=need_display addr=0x4010
    102ms 100 syscall_enter name=read fd=4
    102ms 100 switch_out state=S
    112ms 100 switch_in
    112ms 100 syscall_exit name=read ret=8
    112ms 100 flag_read flag=need_display addr=0x4010
    112ms 100 syscall_enter name=read fd=4
    112ms 100 switch_out state=S
    122ms 100 switch_in
    122ms 100 syscall_exit name=read ret=8
    122ms 100 flag_read flag=need_display addr=0x4010
    122ms 100 syscall_enter name=read fd=4
    122ms 100 switch_out state=S
    132ms 100 switch_in
    132ms 100 syscall_exit name=read ret=8
    132ms 100 flag_read flag=need_display addr=0x4010
    132ms 100 syscall_enter name=read fd=4
    132ms 100 switch_out state=S
    142ms 100 switch_in
    142ms 100 syscall_exit name=read ret=8
    142ms 100 flag_read flag=need_display addr=0x4010
    142ms 100 syscall_enter name=read fd=4
    142ms 100 switch_out state=S
    152ms 100 switch_in
    152ms 100 syscall_exit name=read ret=8
    152ms 100 flag_read flag=need_display addr=0x4010
    152ms 100 syscall_enter name=read fd=4
    152ms 100 switch_out state=S
    162ms 100 switch_in
    162ms 100 syscall_exit name=read ret=8
    162ms 100 flag_read flag=need_display addr=0x4010
    162ms 100 syscall_enter name=read fd=4
    162ms 100 switch_out state=S
    172ms 100 switch_in
    172ms 100 syscall_exit name=read ret=8
    172ms 100 flag_read flag=need_display addr=0x4010
    172ms 100 syscall_enter name=read fd=4
    172ms 100 switch_out state=S
    182ms 100 switch_in
    182ms 100 syscall_exit name=read ret=8
    182ms 100 flag_read flag=need_display addr=0x4010
    182ms 100 syscall_enter name=read fd=4
    182ms 100 switch_out state=S
    192ms 100 switch_in
    192ms 100 syscall_exit name=read ret=8
    192ms 100 flag_read flag=need_display addr=0x4010
    192ms 100 syscall_enter name=read fd=4
    192ms 100 switch_out state=S
    202ms 100 switch_in
    202ms 100 syscall_exit name=read ret=8
    202ms 100 flag_read flag=need_display addr=0x4010
    202ms 100 syscall_enter name=read fd=4
    202ms 100 switch_out state=S
    205ms 101 flag_write flag=need_display addr=0x4010 value=1
    212ms 100 switch_in
    212ms 100 syscall_exit name=read ret=8
    212ms 100 flag_read flag=need_display addr=0x4010 value=1
  ]]
  expect edge 101 -> 100 kind flag strength strong rule need_display at 212ms
  expect stat flag_edges == 1
  expect hang 100 kind RepeatedYield
  expect root_cause 101 kind LongRunning
}
