# A user pack overriding the stdlib (docs/rules.md "Overriding another pack's rules"): a
# worker that waits for jobs in read() on a pipe is idle there, and a job it takes is a
# new stretch of work. The stdlib's data.wait would also cut at that read, as an ordinary
# wait; disabled, the pack's own rule names the cut and marks it as the loop's.
pack test.overrides {
  version "0.1.0"
  engine ">= 0.1"
  requires linux.kernel
  description "Disabling a stdlib split so a pack's loop rule takes its events"
}

disable linux.kernel/data.wait

split job.wait {
  at syscall_enter
  where name == "read" and fd == 3
  loop
}

test "the job pipe's read is the worker's loop wait, not the stdlib's wait" {
  trace [[
    causeway-trace 1
    process 100 comm=worker
    thread 101 pid=100 comm=worker
    1ms 101 syscall_enter name=getpid
    1ms 101 syscall_exit name=getpid ret=100
    2ms 101 syscall_enter name=read fd=3
    2ms 101 switch_out state=S
    9ms 101 switch_in
    9ms 101 syscall_exit name=read ret=8
    10ms 101 syscall_enter name=read fd=7
    10ms 101 switch_out state=S
    11ms 101 switch_in
    11ms 101 syscall_exit name=read ret=8
  ]]
  expect split 101 at 2ms rule job.wait
  expect no split 101 at 2ms rule linux.kernel/data.wait
  expect no split 101 at 10ms
  expect segments 101 == 2
}
