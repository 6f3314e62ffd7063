# A user pack for the demo server: each turn of serve_loop() waits for one request and
# answers it, so each wait starts an independent item.
pack demo.server {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "Cut the demo server's serve_loop into one item per request"
}

batch serve_loop.requests {
  within call where fn == "serve_loop"
  item syscall_enter where name == "epoll_wait"
  neighbour none
}

test "each turn of the loop is its own item" {
  trace [[
    causeway-trace 1
    process 10 comm=server
    thread 11 pid=10 comm=server
    process 200 comm=client-a
    thread 201 pid=200 comm=client-a
    process 300 comm=client-b
    thread 301 pid=300 comm=client-b
    1ms 11 call_enter fn=serve_loop
    2ms 11 syscall_enter name=epoll_wait fd=3
    2ms 201 send object=1 offset=0 len=32 peer=10
    3ms 11 syscall_exit name=epoll_wait ret=1
    3ms 11 recv object=1 offset=0 len=32 peer=200
    3ms 11 send object=2 offset=0 len=64 peer=200
    4ms 201 recv object=2 offset=0 len=64 peer=10
    5ms 11 syscall_enter name=epoll_wait fd=3
    5ms 301 send object=3 offset=0 len=32 peer=10
    6ms 11 syscall_exit name=epoll_wait ret=1
    6ms 11 recv object=3 offset=0 len=32 peer=300
    6ms 11 send object=4 offset=0 len=64 peer=300
    7ms 301 recv object=4 offset=0 len=64 peer=10
    8ms 11 call_exit fn=serve_loop
    9ms 11 syscall_enter name=epoll_wait fd=3
  ]]
  expect split 11 at 2ms rule serve_loop.requests
  expect split 11 at 5ms rule serve_loop.requests
  expect no split 11 at 9ms rule serve_loop.requests
  expect stat over_connections == 0
}
