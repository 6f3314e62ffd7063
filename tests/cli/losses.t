A recording says what it missed, every kind with its count: events the kernel ring buffer
had no room for (per CPU), events the in-process hooks' log had no room for, context
switches the kernel (or the VM) never delivered, memory maps the kernel dropped, and
hardware watchpoints that never fired. The fixture has each kind.

  $ causeway graph tests/cli/data/short-sleep.trace | sed -n 2p
  recording lost: nothing

  $ causeway graph tests/cli/data/losses.trace | sed -n 1,2p
  trace: 39 events, 2 processes, 2 threads, 12 lost events
  recording lost: 12 events in the kernel buffer (cpu 0: 5, cpu 1: 7), 40 events in the hook log, 3 context switches the kernel did not deliver, 3 memory maps, 1 watchpoint that never fired

  $ causeway debug tests/cli/data/losses.trace --auto | tail -1
  recording lost: 12 events in the kernel buffer (cpu 0: 5, cpu 1: 7), 40 events in the hook log, 3 context switches the kernel did not deliver, 3 memory maps, 1 watchpoint that never fired

In --json every kind has its key, zero or not; lost_events and lost_per_cpu stay the
kernel buffer's.

  $ causeway graph tests/cli/data/losses.trace --json | jq -c '.trace | {lost_events, lost_per_cpu, losses}'
  {"lost_events":12,"lost_per_cpu":{"0":5,"1":7},"losses":{"hook_log":40,"kernel_buffer":12,"maps":3,"switches_unreported":3,"watchpoints_silent":1}}

  $ causeway debug tests/cli/data/losses.trace --auto --json | jq -c .losses
  {"hook_log":40,"kernel_buffer":12,"maps":3,"switches_unreported":3,"watchpoints_silent":1}

  $ causeway debug examples/slow-server.trace --auto --json | jq -c .losses
  {"hook_log":0,"kernel_buffer":0,"maps":0,"switches_unreported":0,"watchpoints_silent":0}

The loss lines survive the binary form and back.

  $ causeway convert tests/cli/data/losses.trace -o $TMP_DIR/l.cwt 2>/dev/null && causeway convert $TMP_DIR/l.cwt -o $TMP_DIR/l.trace 2>/dev/null && grep -E '^(lost|loss) ' $TMP_DIR/l.trace
  lost cpu=0 count=5 at=5ms
  lost cpu=1 count=7 at=400ms
  loss hook_log count=40 at=300ms
  loss switches_unreported count=1 at=10500us
  loss switches_unreported count=2 at=500ms
  loss maps count=3 at=1ms
  loss watchpoints_silent count=1 at=820ms
