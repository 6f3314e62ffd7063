# cw-scn-wserver (wserver.c): reply_and_receive() sends the reply to the previous request
# and receives the next one in one io_uring_enter (the Argus paper, §3.1, WindowServer's
# mach_msg(SEND|RCV)). The recorder does not decode io_uring: all it sees of the call is the
# wake-ups it makes and its block. Naming the function makes `causeway record --rules`
# trace its entry and exit, so these rules can tell which is which.
pack scn.wserver {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "cw-scn-wserver's piggyback call: reply, then wait for the next request"
}

# The reply goes out first; when the call then blocks, the server has finished the
# previous request and waits for the next one: back to its loop. Any switch away but a
# preemption (R) is the block, as linux.kernel's waits say it: a switch the kernel did not
# report comes as `?`.
split receive.wait {
  at switch_out
  where call.fn == "reply_and_receive" and state != "R"
  cut before
  neighbour weak
  loop
}

# A wake-up the call makes is the reply reaching the app that waits for it.
edge reply {
  link wakeup
  where from.call.fn == "reply_and_receive"
  strength strong
  kind reply
  priority 30
}

# A wake-up that ends the call's block is an app's request arriving.
edge request {
  link wakeup
  where to.call.fn == "reply_and_receive"
  strength strong
  kind request
  priority 30
}

# cw-wserver (100) replies to cw-app-a (300) and waits for the next request in one call;
# cw-app-b's (200) request wakes it, it composes for 500 ms and replies in the next call.
# The io_uring_enter itself leaves no system-call event.
test "the call's block starts the next request; its wake-ups are replies and requests" {
  trace [[
    causeway-trace 1
    process 100 comm=cw-wserver
    thread 100 pid=100 comm=cw-wserver
    process 200 comm=cw-app-b
    thread 200 pid=200 comm=cw-app-b
    process 300 comm=cw-app-a
    thread 300 pid=300 comm=cw-app-a
    1ms 300 syscall_enter name=read fd=5 stack=main;run_app;read
    1ms 300 switch_out state=S
    2ms 100 call_enter fn=reply_and_receive
    2ms 100 wakeup target=300
    2ms 100 switch_out state=S
    3ms 300 switch_in
    3ms 300 syscall_exit name=read ret=16
    50ms 200 syscall_enter name=write fd=4
    50ms 200 wakeup target=100
    50ms 200 syscall_exit name=write ret=16
    50ms 200 syscall_enter name=read fd=5 stack=main;run_app;read
    50ms 200 switch_out state=S
    51ms 100 switch_in
    51ms 100 call_exit fn=reply_and_receive
    551ms 100 call_enter fn=reply_and_receive
    551ms 100 wakeup target=200
    551ms 100 switch_out state=S
    552ms 200 switch_in
    552ms 200 syscall_exit name=read ret=16
  ]]
  hang "100@0.3"
  expect split 100 at 2ms rule receive.wait
  expect split 100 at 551ms rule receive.wait
  expect edge 100 -> 300 kind reply strength strong at 3ms
  expect edge 200 -> 100 kind request strength strong at 51ms
  expect edge 100 -> 200 kind reply strength strong at 552ms
  expect hang 100 kind LongRunning
  expect root_cause 100 kind LongRunning
}
