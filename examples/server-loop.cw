# A user pack for the demo server: serve_loop() serves one client per request it
# receives, so each received request starts an independent item.
pack demo.server {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "Cut the demo server's serve_loop into one item per request"
}

batch serve_loop.requests {
  within call where fn == "serve_loop"
  item recv
  neighbour none
}

test "each request the loop receives is its own item" {
  trace [[
    causeway-trace 1
    process 10 comm=server
    thread 11 pid=10 comm=server
    1ms 11 call_enter fn=serve_loop
    2ms 11 recv object=1 offset=0 len=32 peer=200
    3ms 11 send object=2 offset=0 len=64 peer=200
    4ms 11 recv object=3 offset=0 len=32 peer=300
    5ms 11 send object=4 offset=0 len=64 peer=300
    6ms 11 call_exit fn=serve_loop
    7ms 11 recv object=5 offset=0 len=8 peer=400
  ]]
  expect split 11 at 2ms rule serve_loop.requests
  expect split 11 at 4ms rule serve_loop.requests
  expect no split 11 at 7ms rule serve_loop.requests
}
