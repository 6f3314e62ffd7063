# Rules match frames by name, JIT-compiled ones too: a frame in anonymous memory is named
# after the line of the process's perf map that covers it (docs/recording.md, "JIT code:
# perf maps"), here a node program whose pull() reads jobs from a pipe.
pack test.jit {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "A loop wait known by the JIT-compiled JavaScript function it is in"
}

split pull.wait {
  at syscall_enter
  where name == "read" and stack matches "JS:*pull /*"
  loop
}

test "the read under JavaScript's pull() is the loop's wait; a read elsewhere is not" {
  trace [[
    causeway-trace 1
    process 100 comm=node
    thread 100 pid=100 comm=node
    jit 100 0x7f0000001000-0x7f0000001100 "JS:^pull /srv/app.js:4:14" at=1ms
    jit 100 0x7f0000002000-0x7f0000002100 "JS:^load /srv/app.js:9:1" at=1ms
    1ms 100 syscall_enter name=getpid
    1ms 100 syscall_exit name=getpid ret=100
    2ms 100 syscall_enter name=read fd=21 stack=0x7f0000001040;0x7f0000000010
    2ms 100 switch_out state=S
    9ms 100 switch_in
    9ms 100 syscall_exit name=read ret=8
    10ms 100 syscall_enter name=read fd=22 stack=0x7f0000002040;0x7f0000000010
    10ms 100 switch_out state=S
    11ms 100 switch_in
    11ms 100 syscall_exit name=read ret=8
  ]]
  expect split 100 at 2ms rule pull.wait
  expect no split 100 at 10ms rule pull.wait
}
