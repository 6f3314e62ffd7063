pack hostile.xpcall_handler_top {
  version "0.1.0"
  requires linux.kernel
}

lua [[
xpcall(error, function(m) while true do end end) function f(a, b) return true end
]]

edge hook.xpcall_handler_top {
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
