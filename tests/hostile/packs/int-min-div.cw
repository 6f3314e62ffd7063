pack hostile.min_div {
  version "0.1.0"
  requires linux.kernel
}

edge e {
  link wakeup
  where (to.ts - to.ts - 9223372036854775807 - 1) / (from.ts - from.ts - 1) != 0
  strength weak
  kind hostile
}

test "the rule runs" {
  trace [[
    causeway-trace 1
    process 10 comm=a
    thread 11 pid=10 comm=a
    process 20 comm=b
    thread 21 pid=20 comm=b
    1ms 11 switch_out state=S
    2ms 21 wakeup target=11
    3ms 11 switch_in
  ]]
  expect stat over_connections == 0
}
