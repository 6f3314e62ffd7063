pack hostile.error_huge_top {
  version "0.1.0"
  requires linux.kernel
}

lua [[
error(string.rep("x", 10 * 1024 * 1024)) function f(a, b) return true end
]]

edge hook.error_huge_top {
  link wakeup
  where lua.f(from.ts, to.ts)
  strength weak
  kind hostile
}

test "the hook runs" {
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
