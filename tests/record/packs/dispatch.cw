# cw-prog-dispatch (tests/programs/dispatch.c): cw-daemon serves every ready client in one
# call of serve_ready(), one handle_request() per request. Naming the functions is all it
# takes for `causeway record --rules` to trace their entries and exits.
pack test.dispatch {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "cw-prog-dispatch's request boundaries, traced by causeway record --rules"
}

# One call serves many clients: each request handled in it is an item.
batch serve.requests {
  within call where fn == "serve_ready"
  item call_enter where fn == "handle_request"
  neighbour none
}
