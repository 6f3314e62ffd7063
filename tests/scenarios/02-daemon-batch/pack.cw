# cw-scn-fontd (fontd.c): serve_ready() is a server loop inside one call, and each
# handle_request() call in it serves one client's request (the Argus paper, §3.1, fontd's
# dispatch_mig_server). Naming the functions makes `causeway record --rules` trace them.
pack scn.fontd {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "cw-scn-fontd's batch: one item per handle_request() in serve_ready()"
}

# Each request served in the loop is its own segment. Consecutive items are joined by a
# weak edge: the daemon served one request after the other, so a long one delays the next
# (the head-of-line wait the diagnosis must find), but nothing else ties them.
batch serve.requests {
  within call where fn == "serve_ready"
  item call_enter where fn == "handle_request"
  neighbour weak
}

# cw-fontd (100) is woken by cw-client-b's doorbell (200) and renders 500 ms for it;
# cw-client-a (300) rings meanwhile and is served in the same serve_ready() call.
test "each request served in serve_ready() is its own segment, and the slow one is the culprit" {
  trace [[
    causeway-trace 1
    process 100 comm=cw-fontd
    thread 100 pid=100 comm=cw-fontd
    process 200 comm=cw-client-b
    thread 200 pid=200 comm=cw-client-b
    process 300 comm=cw-client-a
    thread 300 pid=300 comm=cw-client-a
    1ms 100 syscall_enter name=futex op=wait resource=0x1000 stack=main;wait_for_requests;syscall
    1ms 100 switch_out state=S
    10ms 200 syscall_enter name=futex op=wake resource=0x1000
    10ms 200 wakeup target=100
    10ms 200 syscall_exit name=futex ret=1
    10ms 200 syscall_enter name=futex op=wait resource=0x2000 stack=main;run_client;syscall
    10ms 200 switch_out state=S
    11ms 100 switch_in
    11ms 100 syscall_exit name=futex ret=0
    11ms 100 call_enter fn=serve_ready
    12ms 100 call_enter fn=handle_request
    150ms 300 syscall_enter name=futex op=wake resource=0x1000
    150ms 300 syscall_exit name=futex ret=0
    150ms 300 syscall_enter name=futex op=wait resource=0x3000 stack=main;run_client;syscall
    150ms 300 switch_out state=S
    512ms 100 syscall_enter name=futex op=wake resource=0x2000 stack=main;serve_ready;handle_request;syscall
    512ms 100 wakeup target=200
    512ms 100 syscall_exit name=futex ret=1
    512ms 100 call_exit fn=handle_request
    513ms 100 call_enter fn=handle_request
    513ms 100 syscall_enter name=futex op=wake resource=0x3000 stack=main;serve_ready;handle_request;syscall
    513ms 100 wakeup target=300
    513ms 100 syscall_exit name=futex ret=1
    513ms 100 call_exit fn=handle_request
    513ms 100 call_exit fn=serve_ready
    514ms 100 syscall_enter name=futex op=wait resource=0x1000 stack=main;wait_for_requests;syscall
    514ms 100 switch_out state=S
    515ms 200 switch_in
    515ms 200 syscall_exit name=futex ret=0
    516ms 300 switch_in
    516ms 300 syscall_exit name=futex ret=0
  ]]
  hang "300@0.3"
  expect split 100 at 12ms rule serve.requests
  expect split 100 at 513ms rule serve.requests
  expect edge 100 -> 300 kind futex strength strong at 516ms
  expect hang 300 kind LongWait
  expect root_cause 100 kind LongRunning
}
