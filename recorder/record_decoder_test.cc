#include "recorder/record_decoder.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/records.h"
#include "recorder/kallsyms.h"
#include "recorder/lock_wait.h"
#include "trace/text_format.h"
#include "trace/text_test_support.h"

namespace cw {
namespace {

SyscallNaming test_naming() {
  return {[](uint32_t nr) -> std::string_view {
            switch (nr) {
              case 0: return "read";
              case 1: return "write";
              case 202: return "futex";
              default: return "";
            }
          },
          [](uint32_t nr, uint32_t op) -> std::string_view {
            if (nr == 202) return op == 0 ? "wait" : op == 1 ? "wake" : "";
            return "";
          },
          [](uint32_t vec) -> std::string_view { return vec == 1 ? "TIMER" : ""; }};
}

template <typename R>
R make(uint32_t type, uint64_t ts, uint32_t pid, uint32_t tid, uint32_t cpu = 0) {
  R r;
  std::memset(&r, 0, sizeof r);
  r.h.type = type;
  r.h.size = sizeof r;
  r.h.ts = ts;
  r.h.pid = pid;
  r.h.tid = tid;
  r.h.cpu = cpu;
  return r;
}

using testing_text::events_text;

TEST_CASE("records from two CPUs come out as events sorted by time") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.add_process(100, 1, "app", "/usr/bin/app");
  d.add_thread(101, 100, "app", false);
  d.add_thread(102, 100, "worker", false);

  auto enter = make<cw_rec_sys_enter>(CW_REC_SYS_ENTER, 1000, 100, 101, 0);
  enter.seq = 7;
  enter.nr = 202;
  enter.fd = -1;
  enter.resource = 0x1000;
  enter.op = 0;
  enter.timeout_ns = -1;
  auto sw = make<cw_rec_switch>(CW_REC_SWITCH, 1100, 100, 101, 0);
  sw.prev_state = 'S';
  sw.next_tid = 0;
  auto wake = make<cw_rec_wake>(CW_REC_WAKING, 3000, 100, 102, 1);
  wake.target_pid = 100;
  wake.target_tid = 101;
  auto in = make<cw_rec_switch>(CW_REC_SWITCH, 3500, 0, 0, 0);
  in.next_pid = 100;
  in.next_tid = 101;
  // The second CPU's wake-up is read before the first CPU's older records.
  d.decode(&wake, sizeof wake);
  d.decode(&enter, sizeof enter);
  d.decode(&sw, sizeof sw);
  d.decode(&in, sizeof in);
  CHECK(d.release(2000) == 2);
  CHECK(d.release_all() == 2);
  CHECK(events_text(t) ==
        "1000 101 syscall_enter name=futex fd=-1 resource=4096 op=wait timeout_ns=-1\n"
        "1100 101 switch_out state=S\n"
        "3000 102 wakeup cpu=1 target=101\n"
        "3500 101 switch_in\n");
  CHECK(d.stats().malformed == 0);
}

TEST_CASE("an exit whose return value the recorder did not see has no return value a call gives") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.add_thread(101, 100, "app", false);
  // A call taken at the scheduler: its end is known, its return value is not.
  auto unseen = make<cw_rec_sys_exit>(CW_REC_SYS_EXIT, 1000, 100, 101, 0);
  unseen.nr = 202;
  unseen.ret = 0;
  unseen.h.flags = CW_EXIT_NO_RET;
  // One whose own timer ended it: the value such a call returns then (-ETIMEDOUT).
  auto timed_out = make<cw_rec_sys_exit>(CW_REC_SYS_EXIT, 2000, 100, 101, 0);
  timed_out.nr = 202;
  timed_out.ret = -110;
  d.decode(&unseen, sizeof unseen);
  d.decode(&timed_out, sizeof timed_out);
  d.release_all();
  REQUIRE(t.events.size() == 2);
  const int ret = t.schema.field_index(t.events[0].kind, "ret");
  REQUIRE(ret >= 0);
  CHECK(t.int_value(t.events[0], ret) == kUnknownReturn);
  CHECK(t.int_value(t.events[1], ret) == -110);
}

TEST_CASE("a timer's interrupt wake-up and signal carry the timer's owner as their cause") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.add_process(100, 1, "app", "/usr/bin/app");
  d.add_thread(101, 100, "waiter", false);
  d.add_thread(102, 100, "armer", false);
  d.add_process(300, 1, "busy", "/usr/bin/busy");
  d.add_thread(301, 300, "busy", false);
  auto sig = make<cw_rec_signal>(CW_REC_SIGNAL, 1000, 300, 301);
  sig.op = CW_SIGNAL_GENERATE;
  sig.sig = 34;
  sig.target_pid = 100;
  sig.target_tid = 101;
  sig.cause_tid = 102;
  auto wake = make<cw_rec_wake>(CW_REC_WAKING, 1001, 300, 301);
  wake.target_pid = 100;
  wake.target_tid = 101;
  wake.in_irq = 1;
  wake.cause_tid = 102;
  // A recorder before `cause_tid` wrote signal records 8 bytes shorter: still decoded.
  auto old = make<cw_rec_signal>(CW_REC_SIGNAL, 1002, 300, 301);
  old.op = CW_SIGNAL_GENERATE;
  old.sig = 14;
  old.target_pid = 100;
  old.target_tid = 101;
  old.cause_tid = 999;  // beyond the old size: never read
  old.h.size = offsetof(cw_rec_signal, cause_tid);
  d.decode(&sig, sizeof sig);
  d.decode(&wake, sizeof wake);
  d.decode(&old, offsetof(cw_rec_signal, cause_tid));
  d.release_all();
  CHECK(events_text(t) ==
        "1000 301 signal_send target=101 sig=34 cause=102\n"
        "1001 301 wakeup target=101 interrupt=1 cause=102\n"
        "1002 301 signal_send target=101 sig=14\n");
  CHECK(d.stats().malformed == 0);
}

TEST_CASE("a recorded thread whose switch away the kernel never reported is ended and lost") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.add_thread(75, 1, "agent", false);
  d.add_thread(201, 200, "app", false);
  d.add_thread(15, 15, "rcu", true);
  // CPU 1: app -> agent (recorded); the kernel hides agent -> rcu; then rcu -> app.
  auto to_agent = make<cw_rec_switch>(CW_REC_SWITCH, 1000, 200, 201, 1);
  to_agent.prev_state = 'R';
  to_agent.next_pid = 1;
  to_agent.next_tid = 75;
  to_agent.next_recorded = 1;
  auto from_rcu = make<cw_rec_switch>(CW_REC_SWITCH, 5000, 15, 15, 1);
  from_rcu.prev_state = 'I';
  from_rcu.next_pid = 200;
  from_rcu.next_tid = 201;
  from_rcu.next_recorded = 1;
  // app's own switch away is reported: nothing more is lost.
  auto app_out = make<cw_rec_switch>(CW_REC_SWITCH, 6000, 200, 201, 1);
  app_out.prev_state = 'S';
  d.decode(&to_agent, sizeof to_agent);
  d.decode(&from_rcu, sizeof from_rcu);
  d.decode(&app_out, sizeof app_out);
  d.release_all();
  CHECK(events_text(t) ==
        "1000 201 switch_out cpu=1 state=R\n"
        "1000 75 switch_in cpu=1\n"
        "5000 75 switch_out cpu=1 state=?\n"
        "5000 15 switch_out cpu=1 state=I\n"
        "5000 201 switch_in cpu=1\n"
        "6000 201 switch_out cpu=1 state=S\n");
  CHECK(d.stats().switches_unreported == 1);
  // A loss of its own kind in the trace, not the kernel buffer's: the recording says what
  // it missed.
  CHECK(t.lost_events() == 0);
  CHECK(t.losses_of(LossKind::SwitchUnreported) == 1);
  REQUIRE(t.losses.size() == 1);
  CHECK(t.losses[0].ts == 5000);
}

TEST_CASE("held waits: a wait written late keeps its start, and short waits are counted") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.set_waits_held(true);
  d.add_thread(201, 200, "app", false);
  d.add_thread(301, 300, "peer", false);
  // app gets CPU 0, blocks at 1 us; its wait is written at 3 ms, once it has lasted (held):
  // nothing about CPU 0 follows from it.
  auto in = make<cw_rec_switch>(CW_REC_SWITCH, 500, 0, 0, 0);
  in.next_pid = 200;
  in.next_tid = 201;
  in.next_recorded = 1;
  auto held = make<cw_rec_switch>(CW_REC_SWITCH, 1000, 200, 201, 0);
  held.h.flags = CW_SWITCH_HELD;
  held.prev_state = 'S';
  // Meanwhile peer, whose own short waits left no switches, writes on CPU 0: no sign of a
  // lost switch when waits are held.
  auto wake = make<cw_rec_wake>(CW_REC_WAKING, 3000000, 300, 301, 0);
  wake.target_pid = 200;
  wake.target_tid = 201;
  auto back = make<cw_rec_switch>(CW_REC_SWITCH, 3000100, 0, 0, 1);
  back.next_pid = 200;
  back.next_tid = 201;
  back.next_recorded = 1;
  auto shorts = make<cw_rec_short_waits>(CW_REC_SHORT_WAITS, 4000000, 300, 301, 1);
  shorts.since = 2000;
  shorts.count = 7;
  shorts.total_ns = 90000;
  shorts.uninterruptible_ns = 40000;
  shorts.waker_tid = 201;
  shorts.preempted = 3;
  shorts.runnable_ns = 20000;
  d.decode(&in, sizeof in);
  d.decode(&wake, sizeof wake);
  d.decode(&held, sizeof held);
  d.decode(&back, sizeof back);
  d.decode(&shorts, sizeof shorts);
  d.release_all();
  CHECK(events_text(t) ==
        "500 201 switch_in\n"
        "1000 201 switch_out state=S\n"
        "3000000 301 wakeup target=201\n"
        "3000100 201 switch_in cpu=1\n"
        "4000000 301 short_waits cpu=1 since=2000 count=7 total_ns=90000 uninterruptible_ns=40000 "
        "waker=201 preempted=3 runnable_ns=20000\n");
  CHECK(d.stats().switches_unreported == 0);
  CHECK(t.losses.empty());
}

TEST_CASE("a wait written later than the records already released keeps its thread's order") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.set_waits_held(true);
  d.add_thread(201, 200, "app", false);
  auto exit = make<cw_rec_sys_exit>(CW_REC_SYS_EXIT, 1000, 200, 201, 0);
  exit.nr = 0;
  d.decode(&exit, sizeof exit);
  d.release(5000);
  auto held = make<cw_rec_switch>(CW_REC_SWITCH, 2000, 200, 201, 0);
  held.h.flags = CW_SWITCH_HELD;
  held.prev_state = 'S';
  d.decode(&held, sizeof held);
  d.release_all();
  REQUIRE(t.events.size() == 2);
  CHECK(t.events[1].ts == 5001);  // after what was written, not before it
}

TEST_CASE("a send held until its bytes waited is stamped when made, or after what was written") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.set_waits_held(true);
  d.add_thread(201, 200, "client", false);
  d.add_thread(301, 300, "server", false);
  // The server's read at 3 ms (CPU 1) takes bytes the client sent at 1 ms on CPU 0: the send,
  // written then, is the client's at 1 ms, with no call around it.
  auto late = make<cw_rec_xfer>(CW_REC_XFER, 1000000, 200, 201, 0);
  late.h.flags = CW_XFER_QUEUED | CW_XFER_LATE;
  late.object = 7;
  late.offset = 0;
  late.len = 16;
  late.fd = 4;
  late.peer_pid = 300;
  late.is_send = 1;
  auto read = make<cw_rec_xfer>(CW_REC_XFER, 3000000, 300, 301, 1);
  read.h.flags = CW_XFER_QUEUED;
  read.object = 7;
  read.offset = 0;
  read.len = 16;
  read.fd = 5;
  read.peer_pid = 200;
  read.is_send = 0;
  d.decode(&read, sizeof read);
  d.decode(&late, sizeof late);
  d.release(2000000);
  // One written after records up to 2 ms were released keeps its place after them.
  auto later = late;
  later.h.ts = 1500000;
  later.offset = 16;
  d.decode(&later, sizeof later);
  d.release_all();
  CHECK(events_text(t) ==
        "1000000 201 send object=7 len=16 peer=300 fd=4 queued=1\n"
        "2000001 201 send object=7 offset=16 len=16 peer=300 fd=4 queued=1\n"
        "3000000 301 recv cpu=1 object=7 len=16 peer=200 fd=5 queued=1\n");
}

TEST_CASE("a switch to a thread the kernel never reported begins its run at its first record") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.add_thread(101, 100, "waiter", false);
  d.add_thread(102, 100, "waker", false);
  d.add_thread(103, 100, "other", false);
  // CPU 0: the waiter blocks; other runs. CPU 1: the waker runs and wakes the waiter.
  auto waiter_out = make<cw_rec_switch>(CW_REC_SWITCH, 1000, 100, 101, 0);
  waiter_out.prev_state = 'S';
  waiter_out.next_pid = 100;
  waiter_out.next_tid = 103;
  waiter_out.next_recorded = 1;
  auto waker_in = make<cw_rec_switch>(CW_REC_SWITCH, 1500, 0, 0, 1);
  waker_in.next_pid = 100;
  waker_in.next_tid = 102;
  waker_in.next_recorded = 1;
  auto wake = make<cw_rec_wake>(CW_REC_WAKING, 2000, 100, 102, 1);
  wake.target_pid = 100;
  wake.target_tid = 101;
  // The kernel hides other -> waiter on CPU 0 at 2100; the waiter's call returns there.
  auto waiter_back = make<cw_rec_sys_exit>(CW_REC_SYS_EXIT, 2200, 100, 101, 0);
  waiter_back.nr = 202;
  // It blocks again, and a timer wakes it much later: its first run began at 2200, not here.
  auto waiter_again = make<cw_rec_switch>(CW_REC_SWITCH, 3000, 100, 101, 0);
  waiter_again.prev_state = 'S';
  auto waiter_timer = make<cw_rec_switch>(CW_REC_SWITCH, 9000, 0, 0, 0);
  waiter_timer.next_pid = 100;
  waiter_timer.next_tid = 101;
  waiter_timer.next_recorded = 1;
  for (const auto* r : std::initializer_list<const void*>{&waiter_out, &waker_in, &wake})
    d.decode(r, static_cast<const cw_rec_header*>(r)->size);
  d.decode(&waiter_back, sizeof waiter_back);
  d.decode(&waiter_again, sizeof waiter_again);
  d.decode(&waiter_timer, sizeof waiter_timer);
  d.release_all();
  CHECK(events_text(t) ==
        "1000 101 switch_out state=S\n"
        "1000 103 switch_in\n"
        "1500 102 switch_in cpu=1\n"
        "2000 102 wakeup cpu=1 target=101\n"
        "2200 103 switch_out state=?\n"
        "2200 101 switch_in\n"
        "2200 101 syscall_exit name=futex\n"
        "3000 101 switch_out state=S\n"
        "9000 101 switch_in\n");
  // One switch lost, though both its ends were put back.
  CHECK(d.stats().switches_unreported == 1);
  CHECK(t.losses_of(LossKind::SwitchUnreported) == 1);
}

TEST_CASE("records that say nothing of who runs now put back no switch") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.add_thread(101, 100, "app", false);
  d.add_thread(102, 100, "worker", false);
  d.add_thread(103, 100, "helper", false);
  d.add_thread(300, 300, "stranger", false);
  // CPU 0: app blocks at 1000, worker runs from 1000.
  auto app_out = make<cw_rec_switch>(CW_REC_SWITCH, 1000, 100, 101, 0);
  app_out.prev_state = 'S';
  app_out.next_pid = 100;
  app_out.next_tid = 102;
  app_out.next_recorded = 1;
  // The app's syscall entry, sent when the call blocked (before its switch record, but
  // read after it): written long before, it is no sign of who runs on CPU 0 now.
  auto enter = make<cw_rec_sys_enter>(CW_REC_SYS_ENTER, 500, 100, 101, 0);
  enter.nr = 202;
  enter.fd = -1;
  enter.timeout_ns = -1;
  // An interrupt on CPU 0 while the app still ran, read after the switch (records of one
  // CPU may come a little out of time order): no sign of who runs there now either.
  auto irq = make<cw_rec_irq>(CW_REC_IRQ, 900, 100, 101, 0);
  irq.op = CW_SOFTIRQ_EXIT;
  irq.irq = 1;
  // CPU 1: the stranger (not recorded) leaves it to a recorded thread, which blocks; the
  // stranger's switch back in, between unrecorded threads, is never sent. It wakes the
  // app: a thread not recorded gets no switch_in put back, and the app is not made to
  // run by it.
  auto stranger_out = make<cw_rec_switch>(CW_REC_SWITCH, 1200, 300, 300, 1);
  stranger_out.prev_state = 'R';
  stranger_out.next_pid = 100;
  stranger_out.next_tid = 103;
  stranger_out.next_recorded = 1;
  auto idle_in = make<cw_rec_switch>(CW_REC_SWITCH, 1800, 100, 103, 1);
  idle_in.prev_state = 'S';
  auto wake = make<cw_rec_wake>(CW_REC_WAKING, 2000, 300, 300, 1);
  wake.target_pid = 100;
  wake.target_tid = 101;
  // On CPU 0, where the worker runs: the worker renames the app (pthread_setname_np
  // writes /proc/…/task/101/comm: the record is the app's), and a timer's interrupt on
  // CPU 1, idle now, wakes the worker on the app's behalf (the app armed it: the record is
  // the app's). Neither says the app runs.
  auto rename = make<cw_rec_comm>(CW_REC_COMM, 2100, 100, 101, 0);
  std::memcpy(rename.comm, "renamed", 8);
  auto timer_wake = make<cw_rec_wake>(CW_REC_WAKING, 2200, 100, 101, 1);
  timer_wake.target_pid = 100;
  timer_wake.target_tid = 102;
  timer_wake.in_irq = 1;
  timer_wake.cause_tid = 101;
  auto worker_out = make<cw_rec_switch>(CW_REC_SWITCH, 2500, 100, 102, 0);
  worker_out.prev_state = 'S';
  worker_out.next_pid = 100;
  worker_out.next_tid = 101;
  worker_out.next_recorded = 1;
  d.decode(&app_out, sizeof app_out);
  d.decode(&enter, sizeof enter);
  d.decode(&irq, sizeof irq);
  d.decode(&stranger_out, sizeof stranger_out);
  d.decode(&idle_in, sizeof idle_in);
  d.decode(&wake, sizeof wake);
  d.decode(&rename, sizeof rename);
  d.decode(&timer_wake, sizeof timer_wake);
  d.decode(&worker_out, sizeof worker_out);
  d.release_all();
  CHECK(events_text(t) ==
        "500 101 syscall_enter name=futex fd=-1 op=wait timeout_ns=-1\n"
        "900 101 softirq_exit vec=1\n"
        "1000 101 switch_out state=S\n"
        "1000 102 switch_in\n"
        "1200 300 switch_out cpu=1 state=R\n"
        "1200 103 switch_in cpu=1\n"
        "1800 103 switch_out cpu=1 state=S\n"
        "2000 300 wakeup cpu=1 target=101\n"
        "2100 101 comm name=renamed\n"
        "2200 101 wakeup cpu=1 target=102 interrupt=1 cause=101\n"
        "2500 102 switch_out state=S\n"
        "2500 101 switch_in\n");
  CHECK(d.stats().switches_unreported == 0);
  CHECK(t.losses.empty());
}

TEST_CASE("a thread not recorded (pid filter) may leave its CPU unseen: no loss") {
  Trace t;
  RecordDecoder d(t, test_naming());
  // app -> other (not recorded: next_recorded 0); other -> x -> y unseen; y -> app.
  auto to_other = make<cw_rec_switch>(CW_REC_SWITCH, 1000, 200, 201, 0);
  to_other.prev_state = 'S';
  to_other.next_pid = 300;
  to_other.next_tid = 300;
  auto back = make<cw_rec_switch>(CW_REC_SWITCH, 2000, 400, 400, 0);
  back.prev_state = 'S';
  back.next_pid = 200;
  back.next_tid = 201;
  back.next_recorded = 1;
  d.decode(&to_other, sizeof to_other);
  d.decode(&back, sizeof back);
  d.release_all();
  CHECK(d.stats().switches_unreported == 0);
  CHECK(t.lost.empty());
}

TEST_CASE("a lock still waited for at the end: lock_held on the holder, lock_wait on the waiter") {
  Trace t;
  RecordDecoder d(t, test_naming());
  LockWait w;
  w.waiter_pid = 100;
  w.waiter_tid = 101;
  w.holder_pid = 100;
  w.holder_tid = 102;
  w.object = 0x1000;
  w.lock = "owner (p/r)";
  d.add_lock_wait(5000, w);
  LockWait file;  // a process holds it: its main thread stands for it
  file.waiter_pid = file.waiter_tid = 300;
  file.holder_pid = 400;
  file.object = 77;
  file.lock = "FLOCK WRITE";
  d.add_lock_wait(6000, file);
  d.release_all();
  CHECK(events_text(t) ==
        "5000 102 lock_held object=4096 waiter=101 lock=\"owner (p/r)\"\n"
        "5001 101 lock_wait object=4096 holder=102\n"
        "6000 400 lock_held object=77 waiter=300 lock=\"FLOCK WRITE\"\n"
        "6001 300 lock_wait object=77 holder=400\n");
}

TEST_CASE("a stack taken when a syscall blocks is attached to that syscall's entry") {
  Trace t;
  RecordDecoder d(t, test_naming());
  auto enter = make<cw_rec_sys_enter>(CW_REC_SYS_ENTER, 1000, 100, 101);
  enter.seq = 3;
  enter.nr = 0;
  enter.fd = 5;
  d.decode(&enter, sizeof enter);
  cw_rec_stack stack;
  std::memset(&stack, 0, sizeof stack);
  stack.h = {CW_REC_STACK, 0, 1200, 100, 101, 0, 0};
  stack.seq = 3;
  stack.n = 2;
  stack.ips[0] = 0x401000;
  stack.ips[1] = 0x402000;
  size_t size = offsetof(cw_rec_stack, ips) + 2 * sizeof(uint64_t);
  stack.h.size = static_cast<uint32_t>(size);
  d.decode(&stack, size);
  // A stack for a syscall already handed over is counted, not attached elsewhere.
  d.release_all();
  stack.seq = 4;
  d.decode(&stack, size);
  REQUIRE(t.events.size() == 1);
  REQUIRE(t.events[0].stack != 0);
  CHECK(t.stacks[t.events[0].stack].ips == std::vector<uint64_t>{0x401000, 0x402000});
  CHECK(d.stats().stacks_attached == 1);
  CHECK(d.stats().stacks_late == 1);
}

TEST_CASE("a cpu-clock sample becomes a sample event with the stack that follows it") {
  Trace t;
  RecordDecoder d(t, test_naming());
  auto sample = make<cw_rec_sample>(CW_REC_SAMPLE, 5000, 100, 101, 1);
  sample.period = 1001001;
  sample.user = 1;
  d.decode(&sample, sizeof sample);
  cw_rec_stack stack;
  std::memset(&stack, 0, sizeof stack);
  size_t size = offsetof(cw_rec_stack, ips) + 2 * sizeof(uint64_t);
  stack.h = {CW_REC_STACK, static_cast<uint32_t>(size), 5001, 100, 101, 1, CW_STACK_OF_SAMPLE};
  stack.seq = 5000;  // the sample's time
  stack.n = 2;
  stack.ips[0] = 0x401000;
  stack.ips[1] = 0x402000;
  d.decode(&stack, size);
  // The same stack as a syscall's (no flag) has no syscall entry to go to.
  stack.h.flags = 0;
  d.decode(&stack, size);
  d.release_all();
  CHECK(events_text(t) ==
        "5000 101 sample cpu=1 event=cpu-clock period=1001001 stack=0x402000;0x401000\n");
  CHECK(d.stats().samples == 1);
  CHECK(d.stats().stacks_attached == 1);
  CHECK(d.stats().stacks_late == 1);
}

TEST_CASE("a stack copy is unwound when events are released, into the event's stack") {
  Trace t;
  RecordDecoder d(t, test_naming());
  auto sample = make<cw_rec_sample>(CW_REC_SAMPLE, 5000, 100, 101);
  sample.period = 1000000;
  d.decode(&sample, sizeof sample);
  auto copy = std::make_unique<cw_rec_ustack>();
  std::memset(copy.get(), 0, sizeof *copy);
  const uint32_t bytes = 24;
  size_t size = offsetof(cw_rec_ustack, data) + bytes;
  copy->h = {CW_REC_USTACK, static_cast<uint32_t>(size), 5001, 100, 101, 0, CW_STACK_OF_SAMPLE};
  copy->seq = 5000;
  copy->regs[7] = 0x7ffd0000;  // rsp
  copy->regs[16] = 0x401234;   // rip
  copy->size = bytes;
  for (uint32_t i = 0; i < bytes; ++i) copy->data[i] = static_cast<uint8_t>(i);

  // Before any unwinder: counted, and the sample keeps no stack.
  d.decode(copy.get(), size);
  CHECK(d.stats().stacks_not_unwound == 1);

  std::vector<std::string> calls;
  d.set_unwind([&](Pid pid, Tid tid, const uint64_t* regs, std::span<const uint8_t> stack) {
    calls.push_back(std::to_string(pid) + "/" + std::to_string(tid) +
                    " sp=" + std::to_string(regs[7]) + " ip=" + std::to_string(regs[16]) +
                    " bytes=" + std::to_string(stack.size()) +
                    " last=" + std::to_string(stack.back()));
    return std::vector<uint64_t>{regs[16], 0x500000, 0x600000};
  });
  d.decode(copy.get(), size);
  CHECK(calls.empty());  // not yet: the maps it needs may still be on their way
  d.release_all();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0] == "100/101 sp=2147287040 ip=4198964 bytes=24 last=23");
  CHECK(events_text(t) ==
        "5000 101 sample event=cpu-clock period=1000000 stack=0x600000;0x500000;0x401234\n");

  // A copy whose size goes beyond the record is malformed.
  copy->size = 64;
  d.decode(copy.get(), size);
  CHECK(d.stats().malformed == 1);
}

TEST_CASE("a kernel stack where a syscall blocked goes before its user stack, named") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.set_kernel_symbols(
      [](uint64_t addr) -> std::string_view {
        if (addr >= 0xffffffff81000000 && addr < 0xffffffff81000100) return "anon_pipe_read";
        if (addr >= 0xffffffff82000000 && addr < 0xffffffff82000100) return "schedule";
        return {};  // unknown: the frame keeps its address
      },
      [](uint64_t addr) { return addr >= 0xffffffffc0000000; });  // the probe's frames
  auto enter = make<cw_rec_sys_enter>(CW_REC_SYS_ENTER, 1000, 100, 101);
  enter.seq = 7;
  d.decode(&enter, sizeof enter);
  auto send = [&](uint32_t type, uint64_t seq, std::vector<uint64_t> ips) {
    cw_rec_stack rec;
    std::memset(&rec, 0, sizeof rec);
    const size_t size = offsetof(cw_rec_stack, ips) + ips.size() * sizeof(uint64_t);
    rec.h = {type, static_cast<uint32_t>(size), 1200, 100, 101, 0, 0};
    rec.seq = seq;
    rec.n = static_cast<uint32_t>(ips.size());
    std::copy(ips.begin(), ips.end(), rec.ips);
    d.decode(&rec, size);
  };
  send(CW_REC_STACK, 7, {0x401000, 0x402000});
  send(CW_REC_KSTACK, 7,
       {0xffffffffc0001000, 0xffffffffc0002000, 0xffffffff82000010, 0xffffffff81000020,
        0xffffffff90000000});
  send(CW_REC_KSTACK, 8, {0xffffffff82000010});  // another call's: not attached here
  d.release_all();
  REQUIRE(t.events.size() == 1);
  const Stack& s = t.stacks[t.events[0].stack];
  CHECK(s.ips == std::vector<uint64_t>{0xffffffff82000010, 0xffffffff81000020, 0xffffffff90000000,
                                       0x401000, 0x402000});
  CHECK(s.kernel == 3);
  REQUIRE(s.symbols.size() == 5);
  CHECK(t.strings.get(s.symbols[0]) == "schedule");
  CHECK(t.strings.get(s.symbols[1]) == "anon_pipe_read");
  CHECK(s.symbols[2] == 0);
  CHECK(s.symbols[3] == 0);  // user frames are named when the trace is read
  CHECK(d.stats().kernel_stacks == 1);
  CHECK(d.stats().kernel_frames_unnamed == 1);
  CHECK(d.stats().stacks_late == 1);
  // Read back from a file, the kernel frames are told apart by their addresses.
  Stack copy{s.ips, s.symbols};
  CHECK(t.stacks[t.add_stack(std::move(copy))].kernel == 3);
}

TEST_CASE("a kernel stack that comes before its user stack copy is unwound keeps its place") {
  // With --call-graph dwarf the user stack is unwound only at release, after the kernel
  // stack of the same blocked call has arrived: the kernel frames must still lead.
  Trace t;
  RecordDecoder d(t, test_naming());
  d.set_kernel_symbols([](uint64_t addr) -> std::string_view {
    return addr == 0xffffffff81000020 ? "anon_pipe_read" : "";
  });
  d.set_unwind([](Pid, Tid, const uint64_t* regs, std::span<const uint8_t>) {
    return std::vector<uint64_t>{regs[16], 0x402000};
  });
  auto enter = make<cw_rec_sys_enter>(CW_REC_SYS_ENTER, 1000, 100, 101);
  enter.seq = 7;
  d.decode(&enter, sizeof enter);
  auto copy = std::make_unique<cw_rec_ustack>();
  std::memset(copy.get(), 0, sizeof *copy);
  const size_t copy_size = offsetof(cw_rec_ustack, data) + 8;
  copy->h = {CW_REC_USTACK, static_cast<uint32_t>(copy_size), 1100, 100, 101, 0, 0};
  copy->seq = 7;
  copy->regs[16] = 0x401000;
  copy->size = 8;
  d.decode(copy.get(), copy_size);
  cw_rec_stack k;
  std::memset(&k, 0, sizeof k);
  const size_t k_size = offsetof(cw_rec_stack, ips) + sizeof(uint64_t);
  k.h = {CW_REC_KSTACK, static_cast<uint32_t>(k_size), 1200, 100, 101, 0, 0};
  k.seq = 7;
  k.n = 1;
  k.ips[0] = 0xffffffff81000020;
  d.decode(&k, k_size);
  d.release_all();
  REQUIRE(t.events.size() == 1);
  const Stack& s = t.stacks[t.events[0].stack];
  CHECK(s.ips == std::vector<uint64_t>{0xffffffff81000020, 0x401000, 0x402000});
  CHECK(s.kernel == 1);
  CHECK(t.strings.get(s.symbols[0]) == "anon_pipe_read");
}

// A syscall entry of thread `tid` (process 100) with the kernel's syscall number `seq`.
void decode_enter(RecordDecoder& d, uint64_t seq, uint64_t ts, uint32_t tid = 101) {
  auto rec = make<cw_rec_sys_enter>(CW_REC_SYS_ENTER, ts, 100, tid);
  rec.seq = seq;
  d.decode(&rec, sizeof rec);
}

// A stack record (CW_REC_STACK or CW_REC_KSTACK) of thread `tid` (101 unless said) with
// `ips` after its fixed part and `n` saying how many frames it has.
void decode_stack(RecordDecoder& d, uint32_t type, uint64_t seq, uint64_t ts, uint32_t flags,
                  const std::vector<uint64_t>& ips, uint32_t n, uint32_t tid = 101) {
  cw_rec_stack rec;
  std::memset(&rec, 0, sizeof rec);
  const size_t size = offsetof(cw_rec_stack, ips) + ips.size() * sizeof(uint64_t);
  rec.h = {type, static_cast<uint32_t>(size), ts, 100, tid, 0, flags};
  rec.seq = seq;
  rec.n = n;
  std::copy(ips.begin(), ips.end(), rec.ips);
  d.decode(&rec, size);
}

TEST_CASE("a kernel stack that repeats the thread's previous one gets its frames") {
  // A loop blocks in the same place every turn: the recorder walks the kernel stack once
  // and then says "as before" (CW_KSTACK_AS_BEFORE, the original's seq in ips[0]).
  Trace t;
  RecordDecoder d(t, test_naming());
  auto enter = [&](uint64_t seq, uint64_t ts) { decode_enter(d, seq, ts); };
  auto kstack = [&](uint64_t seq, uint64_t ts, uint32_t flags, std::vector<uint64_t> ips,
                    uint32_t n) { decode_stack(d, CW_REC_KSTACK, seq, ts, flags, ips, n); };
  enter(7, 1000);
  kstack(7, 1001, 0, {0xffffffff82000010, 0xffffffff81000020}, 2);
  enter(9, 2000);
  kstack(9, 2001, CW_KSTACK_AS_BEFORE, {7}, 0);
  enter(11, 3000);
  kstack(11, 3001, CW_KSTACK_AS_BEFORE, {5}, 0);  // its original never came: no frames
  enter(12, 4000);
  kstack(12, 4001, CW_KSTACK_AS_BEFORE, {7, 0xffffffff82000010}, 1);  // frames too: malformed
  d.release_all();
  REQUIRE(t.events.size() == 4);
  const std::vector<uint64_t> walked{0xffffffff82000010, 0xffffffff81000020};
  CHECK(t.stacks[t.events[0].stack].ips == walked);
  CHECK(t.stacks[t.events[1].stack].ips == walked);
  CHECK(t.stacks[t.events[1].stack].kernel == 2);
  CHECK(t.stacks[t.events[2].stack].ips.empty());
  CHECK(t.stacks[t.events[3].stack].ips.empty());
  CHECK(d.stats().kernel_stacks == 2);
  CHECK(d.stats().kernel_stacks_repeated == 1);
  CHECK(d.stats().kernel_stacks_unmatched == 1);
  CHECK(d.stats().malformed == 1);
}

TEST_CASE("a user stack that repeats the thread's previous one gets its frames") {
  // The recorder walks a loop's user stack once and then says "as before"
  // (CW_USTACK_AS_BEFORE, the original's seq in ips[0]); a sample's stack is never the
  // original of a repeat.
  Trace t;
  RecordDecoder d(t, test_naming());
  auto enter = [&](uint64_t seq, uint64_t ts) { decode_enter(d, seq, ts); };
  auto ustack = [&](uint64_t seq, uint64_t ts, uint32_t flags, std::vector<uint64_t> ips,
                    uint32_t n) { decode_stack(d, CW_REC_STACK, seq, ts, flags, ips, n); };
  const std::vector<uint64_t> walked{0x401000, 0x402000, 0x403000};
  enter(7, 1000);
  ustack(7, 1001, 0, walked, 3);
  enter(9, 2000);
  ustack(9, 2001, CW_USTACK_AS_BEFORE, {7}, 0);
  enter(11, 3000);
  ustack(11, 3001, CW_USTACK_AS_BEFORE, {5}, 0);  // its original never came: no frames
  enter(12, 4000);
  ustack(12, 4001, CW_USTACK_AS_BEFORE, {7, 0x401000}, 1);  // frames too: malformed
  enter(13, 5000);
  ustack(13, 5001, CW_USTACK_AS_BEFORE, {7}, 0);  // still the thread's last walked stack
  d.release_all();
  REQUIRE(t.events.size() == 5);
  CHECK(t.stacks[t.events[0].stack].ips == walked);
  CHECK(t.events[1].stack == t.events[0].stack);
  CHECK(t.events[2].stack == 0);
  CHECK(t.events[3].stack == 0);
  CHECK(t.events[4].stack == t.events[0].stack);
  CHECK(d.stats().stacks_attached == 3);
  CHECK(d.stats().user_stacks_repeated == 2);
  CHECK(d.stats().user_stacks_unmatched == 1);
  CHECK(d.stats().malformed == 1);
}

TEST_CASE("a repeated user stack gets the kernel stack walked for its own call") {
  // The two repeats are independent: the user stack as before, the kernel stack walked
  // anew (the same user place blocked elsewhere in the kernel), and the other way round.
  Trace t;
  RecordDecoder d(t, test_naming());
  auto enter = [&](uint64_t seq, uint64_t ts) { decode_enter(d, seq, ts); };
  enter(7, 1000);
  decode_stack(d, CW_REC_STACK, 7, 1001, 0, {0x401000, 0x402000}, 2);
  decode_stack(d, CW_REC_KSTACK, 7, 1002, 0, {0xffffffff82000010}, 1);
  enter(9, 2000);
  decode_stack(d, CW_REC_STACK, 9, 2001, CW_USTACK_AS_BEFORE, {7}, 0);
  decode_stack(d, CW_REC_KSTACK, 9, 2002, 0, {0xffffffff82000020}, 1);
  enter(11, 3000);
  decode_stack(d, CW_REC_STACK, 11, 3001, 0, {0x404000}, 1);
  decode_stack(d, CW_REC_KSTACK, 11, 3002, CW_KSTACK_AS_BEFORE, {9}, 0);
  d.release_all();
  REQUIRE(t.events.size() == 3);
  const auto ips = [&](size_t i) { return t.stacks[t.events[i].stack].ips; };
  CHECK(ips(0) == std::vector<uint64_t>{0xffffffff82000010, 0x401000, 0x402000});
  CHECK(ips(1) == std::vector<uint64_t>{0xffffffff82000020, 0x401000, 0x402000});
  CHECK(ips(2) == std::vector<uint64_t>{0xffffffff82000020, 0x404000});
  CHECK(t.stacks[t.events[1].stack].kernel == 1);
}

TEST_CASE("a repeat read before the stacks it repeats, from another CPU's block, gets them") {
  // Each CPU's records reach the ring a block at a time: a thread that blocked on CPU 1
  // and again, from the same place, on CPU 0 has its "as before" records read first when
  // CPU 0 sends its block before CPU 1 does. Call 9 repeats both of call 7's stacks; call
  // 11 repeats 7's user stack and has its own kernel stack, which attaches first. The
  // thread makes more calls before CPU 1's block comes.
  Trace t;
  RecordDecoder d(t, test_naming());
  const std::vector<uint64_t> user{0x401000, 0x402000};
  decode_enter(d, 9, 2000);  // CPU 0's block
  decode_stack(d, CW_REC_STACK, 9, 2001, CW_USTACK_AS_BEFORE, {7}, 0);
  decode_stack(d, CW_REC_KSTACK, 9, 2002, CW_KSTACK_AS_BEFORE, {7}, 0);
  decode_enter(d, 11, 3000);
  decode_stack(d, CW_REC_STACK, 11, 3001, CW_USTACK_AS_BEFORE, {7}, 0);
  decode_stack(d, CW_REC_KSTACK, 11, 3002, 0, {0xffffffff82000020}, 1);
  for (uint64_t seq = 12; seq < 20; ++seq) decode_enter(d, seq, 4000 + seq);  // more calls
  CHECK(d.stats().stacks_attached == 0);
  // CPU 1's block, after it: call 7's entry is not the thread's latest call.
  decode_enter(d, 7, 1000);
  decode_stack(d, CW_REC_STACK, 7, 1001, 0, user, 2);
  decode_stack(d, CW_REC_KSTACK, 7, 1002, 0, {0xffffffff82000010}, 1);
  d.release_all();
  REQUIRE(t.events.size() == 11);
  const auto ips = [&](size_t i) { return t.stacks[t.events[i].stack].ips; };
  CHECK(ips(0) == std::vector<uint64_t>{0xffffffff82000010, 0x401000, 0x402000});
  CHECK(t.events[1].stack == t.events[0].stack);
  CHECK(ips(2) == std::vector<uint64_t>{0xffffffff82000020, 0x401000, 0x402000});
  CHECK(t.stacks[t.events[2].stack].kernel == 1);
  CHECK(d.stats().stacks_attached == 3);
  CHECK(d.stats().user_stacks_repeated == 2);
  CHECK(d.stats().kernel_stacks_repeated == 1);
  CHECK(d.stats().user_stacks_unmatched == 0);
  CHECK(d.stats().kernel_stacks_unmatched == 0);
  CHECK(d.stats().stacks_late == 0);
}

TEST_CASE("the walked stacks of a thread are forgotten once its exit is released") {
  // An always-on recorder meets millions of threads: what a later "as before" could name
  // goes with the thread. Thread 101 exits; 102, whose exit is not released yet, keeps its.
  Trace t;
  RecordDecoder d(t, test_naming());
  decode_enter(d, 7, 1000);
  decode_stack(d, CW_REC_STACK, 7, 1001, 0, {0x401000}, 1);
  decode_enter(d, 8, 1100, 102);
  decode_stack(d, CW_REC_STACK, 8, 1101, 0, {0x402000}, 1, 102);
  auto exit = make<cw_rec_exit>(CW_REC_EXIT, 2000, 100, 101);
  d.decode(&exit, sizeof exit);
  auto later = make<cw_rec_exit>(CW_REC_EXIT, 5000, 100, 102);
  d.decode(&later, sizeof later);
  CHECK(d.threads_with_walked_stacks() == 2);
  d.release(1500);  // before the exit
  CHECK(d.threads_with_walked_stacks() == 2);
  d.release(3000);
  CHECK(d.threads_with_walked_stacks() == 1);
  d.release_all();
  CHECK(d.threads_with_walked_stacks() == 0);
}

TEST_CASE("a stack read before its call's entry waits for it while the entry can still come") {
  // A call entered on one CPU and blocked on another: its entry in the first CPU's block,
  // its stacks in the second's, which can reach the reader first. A stack whose entry does
  // not come before its time is released is lost, and counted.
  Trace t;
  RecordDecoder d(t, test_naming());
  decode_stack(d, CW_REC_STACK, 5, 1001, 0, {0x401000}, 1);
  decode_stack(d, CW_REC_KSTACK, 5, 1002, 0, {0xffffffff82000010}, 1);
  decode_stack(d, CW_REC_STACK, 6, 1500, 0, {0x409000}, 1);  // call 6's entry never comes
  decode_enter(d, 5, 1000);
  CHECK(d.release(1600) == 1);
  REQUIRE(t.events.size() == 1);
  CHECK(t.stacks[t.events[0].stack].ips == std::vector<uint64_t>{0xffffffff82000010, 0x401000});
  CHECK(d.stats().stacks_late == 1);
  decode_enter(d, 6, 1400);  // after its stack was given up: it stays without one
  d.release_all();
  REQUIRE(t.events.size() == 2);
  CHECK(t.events[1].stack == 0);
}

TEST_CASE("kernel symbols from a kallsyms file; all-zero addresses mean they are hidden") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("cw_kallsyms_{}", ::getpid());
  fs::create_directories(dir);
  {
    std::ofstream(dir / "shown") << "ffffffff80000100 t bpf_trace_run4\n"
                                    "ffffffff81000000 T _stext\n"
                                    "ffffffff81000100 t anon_pipe_read\n"
                                    "ffffffff81000200 D some_data\n"
                                    "ffffffff81000300 t mod_fn\t[some_module]\n"
                                    "ffffffffc0001000 t bpf_prog_1234_on_switch\t[bpf]\n";
    std::ofstream(dir / "hidden") << "0000000000000000 T _stext\n"
                                     "0000000000000000 t anon_pipe_read\n";
  }
  KernelSymbols shown((dir / "shown").string());
  KernelSymbols hidden((dir / "hidden").string());
  KernelSymbols missing((dir / "missing").string());
  fs::remove_all(dir);
  CHECK(shown.name(0xffffffff81000150) == "anon_pipe_read");
  CHECK(shown.name(0xffffffff81000250) == "anon_pipe_read");  // data symbols are skipped
  CHECK(shown.name(0xffffffff81000301) == "mod_fn");
  CHECK(shown.name(0xffffffff7fffff00) == "");
  CHECK(shown.name(0xffffffffa0000000) == "");  // far past the symbol before: not mod_fn
  CHECK(shown.is_probe(0xffffffffc0001010));
  CHECK(shown.is_probe(0xffffffff80000110));
  CHECK_FALSE(shown.is_probe(0xffffffff81000150));
  CHECK_FALSE(shown.restricted());
  CHECK(hidden.restricted());
  CHECK(hidden.name(0xffffffff81000150) == "");
  CHECK_FALSE(missing.readable());
  CHECK_FALSE(missing.restricted());
}

TEST_CASE("stream transfers, forks and exits become their trace events") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.add_process(100, 1, "parent", "/bin/p");
  d.add_thread(100, 100, "parent", false);
  auto fork = make<cw_rec_fork>(CW_REC_FORK, 10, 100, 100);
  fork.child_pid = 200;
  fork.child_tid = 200;
  std::strcpy(fork.child_comm, "parent");
  auto send = make<cw_rec_xfer>(CW_REC_XFER, 20, 100, 100);
  send.object = 0xabc;
  send.offset = 100;
  send.len = 50;
  send.is_send = 1;
  send.fd = 4;
  send.peer_pid = 200;
  auto exit = make<cw_rec_exit>(CW_REC_EXIT, 30, 200, 200);
  exit.code = 7 << 8;
  for (const void* r : {static_cast<const void*>(&fork), static_cast<const void*>(&send),
                        static_cast<const void*>(&exit)})
    d.decode(r, static_cast<const cw_rec_header*>(r)->size);
  d.release_all();
  CHECK(events_text(t) ==
        "10 100 fork child=200 child_pid=200\n"
        "10 200 thread_start parent=100\n"
        "20 100 send object=2748 offset=100 len=50 peer=200 fd=4\n"
        "30 200 exit code=1792\n");
  t.rebuild_indexes();
  REQUIRE(t.process(200) != nullptr);
  CHECK(t.process(200)->ppid == 100);
  CHECK(t.strings.get(t.thread(200)->comm) == "parent");
}

TEST_CASE("a child's fork, exec and rename read in any order name it as they happened") {
  // Records come a CPU's block at a time: the child's exec or rename on one CPU can reach
  // the decoder before its parent's fork on another. In every order the child ends as what
  // it last called itself, running what it exec'd, with its parent from the fork.
  auto fork = make<cw_rec_fork>(CW_REC_FORK, 10, 100, 100, 0);
  fork.child_pid = 200;
  fork.child_tid = 200;
  std::strcpy(fork.child_comm, "sh");
  auto exec = make<cw_rec_exec>(CW_REC_EXEC, 20, 200, 200, 1);
  std::strcpy(exec.path, "/bin/sleep");
  std::strcpy(exec.comm, "sleep");
  auto rename = make<cw_rec_comm>(CW_REC_COMM, 30, 200, 200, 1);
  std::strcpy(rename.comm, "cw-napper");
  std::vector<const cw_rec_header*> records = {&fork.h, &exec.h, &rename.h};
  std::sort(records.begin(), records.end());
  do {
    std::string order;
    for (const cw_rec_header* h : records) order += std::to_string(h->ts) + " ";
    CAPTURE(order);
    Trace t;
    RecordDecoder d(t, test_naming());
    d.add_process(100, 1, "sh", "/bin/sh");
    d.add_thread(100, 100, "sh", false);
    for (const cw_rec_header* h : records) d.decode(h, h->size);
    d.release_all();
    t.rebuild_indexes();
    REQUIRE(t.thread(200) != nullptr);
    CHECK(t.strings.get(t.thread(200)->comm) == "cw-napper");
    REQUIRE(t.process(200) != nullptr);
    CHECK(t.strings.get(t.process(200)->comm) == "cw-napper");
    CHECK(t.strings.get(t.process(200)->exe) == "/bin/sleep");
    CHECK(t.process(200)->ppid == 100);
  } while (std::next_permutation(records.begin(), records.end()));
}

TEST_CASE("a main thread's rename renames its process; another thread's does not") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.add_process(100, 1, "prog", "/bin/prog");
  d.add_thread(100, 100, "prog", false);
  d.add_thread(101, 100, "prog", false);
  auto main_rename = make<cw_rec_comm>(CW_REC_COMM, 10, 100, 100);
  std::strcpy(main_rename.comm, "cw-client");
  auto worker_rename = make<cw_rec_comm>(CW_REC_COMM, 20, 100, 101);
  std::strcpy(worker_rename.comm, "cw-worker");
  d.decode(&main_rename, sizeof main_rename);
  d.decode(&worker_rename, sizeof worker_rename);
  d.release_all();
  t.rebuild_indexes();
  CHECK(t.strings.get(t.process(100)->comm) == "cw-client");
  CHECK(t.strings.get(t.thread(101)->comm) == "cw-worker");
  CHECK(t.strings.get(t.process(100)->exe) == "/bin/prog");
}

TEST_CASE("short and unknown records are counted as malformed and skipped") {
  Trace t;
  RecordDecoder d(t, test_naming());
  auto sw = make<cw_rec_switch>(CW_REC_SWITCH, 1, 1, 1);
  d.decode(&sw, sizeof(cw_rec_header));  // cut short
  auto odd = make<cw_rec_exit>(99, 1, 1, 1);
  d.decode(&odd, sizeof odd);
  d.decode(&sw, 3);
  d.release_all();
  CHECK(t.events.empty());
  CHECK(d.stats().malformed == 3);
}

}  // namespace
}  // namespace cw

namespace cw {
namespace {

TEST_CASE("held events come out in time order, arrival order among equal times, at every release") {
  // Against a model: at each release, every pending event stamped at or before the horizon
  // leaves, sorted by time (stable). Events arrive in runs sorted by time, from several
  // sources whose runs interleave (a CPU's block at a time), some late, a few far ahead.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Trace t;
    RecordDecoder d(t, test_naming());
    std::vector<std::pair<uint64_t, Tid>> pending, expected;  // (ts, tid) in arrival order
    uint64_t clock = 1000;
    Tid next_tid = 1;
    auto release = [&](uint64_t horizon) {
      std::stable_sort(pending.begin(), pending.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      auto cut = std::upper_bound(pending.begin(), pending.end(), horizon,
                                  [](uint64_t h, const auto& e) { return h < e.first; });
      expected.insert(expected.end(), pending.begin(), cut);
      pending.erase(pending.begin(), cut);
      d.release(horizon);
    };
    const int releases = seed % 4 == 0 ? 6 : 30;
    for (int r = 0; r < releases; ++r) {
      // Seeds 1, 5, ...: many short runs (a part with more runs than merging suits).
      const int runs = seed % 4 == 1 ? 400 : static_cast<int>(rng() % 20);
      for (int run = 0; run < runs; ++run) {
        // A run: one CPU's records, sorted times from somewhat before now; now and then
        // one out of place (far ahead, or a marker stamped earlier).
        uint64_t ts = clock - std::min<uint64_t>(clock, rng() % 5000);
        const auto cpu = static_cast<uint32_t>(rng() % 4);
        const int n = seed % 4 == 0   ? 20000
                      : seed % 4 == 1 ? static_cast<int>(1 + rng() % 3)
                                      : static_cast<int>(1 + rng() % 40);
        for (int i = 0; i < n; ++i) {
          ts += rng() % 3;  // equal times happen
          const uint64_t odd = rng() % 500;
          uint64_t at = odd == 0   ? ts + 1'000'000'000
                        : odd == 1 ? ts - std::min<uint64_t>(ts, 700)
                                   : ts;
          Tid tid = next_tid++;
          if (odd == 1) {
            d.add_marker(at, tid, 1, "m");
          } else {
            auto exit = make<cw_rec_exit>(CW_REC_EXIT, at, tid, tid, cpu);
            d.decode(&exit, sizeof exit);
          }
          pending.emplace_back(at, tid);
        }
      }
      clock += 1000 + rng() % 4000;
      release(clock - 3000);
    }
    release(UINT64_MAX);
    REQUIRE(t.events.size() == expected.size());
    size_t mismatched = 0;
    for (size_t i = 0; i < expected.size(); ++i)
      if (t.events[i].ts != expected[i].first || t.events[i].tid != expected[i].second)
        ++mismatched;
    CHECK(mismatched == 0);
  }
}

TEST_CASE("an event far ahead in time does not keep the released ones, nor lose a stack") {
  // One event stamped far ahead stays held while everything after it is released; held
  // events are then renumbered, and a syscall entry held across that still gets its stack.
  Trace t;
  RecordDecoder d(t, test_naming());
  auto enter = make<cw_rec_sys_enter>(CW_REC_SYS_ENTER, 500'000'000'000, 100, 101);
  enter.seq = 3;
  enter.nr = 0;
  enter.fd = 5;
  for (uint64_t round = 0; round < 4; ++round) {
    for (uint64_t i = 0; i < 50000; ++i) {
      d.add_marker(1000 + round * 100000 + i, 7, 7, "m");
      if (round == 0 && i == 1000) d.add_marker(1'000'000'000'000, 9, 9, "far ahead");
      if (round == 1 && i == 1000) d.decode(&enter, sizeof enter);
    }
    CHECK(d.release(1000 + round * 100000 + 50000) == 50000);
  }
  cw_rec_stack stack;
  std::memset(&stack, 0, sizeof stack);
  stack.h = {CW_REC_STACK, 0, 500'000'000'100, 100, 101, 0, 0};
  stack.seq = 3;
  stack.n = 1;
  stack.ips[0] = 0x401000;
  size_t size = offsetof(cw_rec_stack, ips) + sizeof(uint64_t);
  stack.h.size = static_cast<uint32_t>(size);
  d.decode(&stack, size);
  CHECK(d.stats().stacks_attached == 1);
  CHECK(d.release_all() == 2);
  REQUIRE(t.events.size() == 200002);
  CHECK(t.events[200000].tid == 101);
  REQUIRE(t.events[200000].stack != 0);
  CHECK(t.stacks[t.events[200000].stack].ips == std::vector<uint64_t>{0x401000});
  CHECK(t.events[200001].tid == 9);
}

TEST_CASE("a marker does not move the decoder's notion of how far the kernel has got") {
  Trace t;
  RecordDecoder d(t, test_naming());
  auto exit = make<cw_rec_exit>(CW_REC_EXIT, 1000, 5, 5);
  d.decode(&exit, sizeof exit);
  d.add_marker(9000, 7, 7, "clicked");  // sent while older records were still queued
  CHECK(d.newest_ts() == 1000);
  CHECK(d.release(d.newest_ts()) == 1);  // the marker waits for the records before it
  CHECK(d.release_all() == 1);
}

}  // namespace
}  // namespace cw

namespace cw {
namespace {

TEST_CASE("interrupts on a thread become irq and softirq spans, named by the kernel's tables") {
  Trace t;
  RecordDecoder d(t, test_naming());
  auto hard = make<cw_rec_irq>(CW_REC_IRQ, 10, 5, 5);
  hard.op = CW_HARDIRQ_ENTER;
  hard.irq = 33;
  std::strcpy(hard.name, "nvme0q1");
  auto soft = make<cw_rec_irq>(CW_REC_IRQ, 20, 5, 5);
  soft.op = CW_SOFTIRQ_ENTER;
  soft.irq = 1;
  for (const cw_rec_irq* r : {&hard, &soft}) d.decode(r, sizeof *r);
  d.release_all();
  CHECK(events_text(t) ==
        "10 5 irq_enter irq=33 name=nvme0q1\n"
        "20 5 softirq_enter vec=1 name=TIMER\n");
}

}  // namespace
}  // namespace cw

namespace cw {
namespace {

InstrumentNaming test_instrument_naming() {
  InstrumentNaming naming;
  naming.functions = {"dispatch", "poll_once"};
  naming.flags = {"ready", "quit"};
  return naming;
}

cw_rec_flag flag_record(uint64_t ts, uint32_t flag, uint8_t access, uint8_t source,
                        uint64_t value) {
  auto r = make<cw_rec_flag>(CW_REC_FLAG, ts, 100, 101);
  r.flag_index = flag;
  r.access = access;
  r.source = source;
  r.size = 4;
  r.addr = 0x4000;
  r.value = value;
  r.ip = 0x1746;
  return r;
}

}  // namespace

TEST_CASE("function probe records become call_enter and call_exit named by their index") {
  Trace t;
  RecordDecoder d(t, test_naming());
  d.set_instrument_naming(test_instrument_naming());
  auto enter = make<cw_rec_call>(CW_REC_CALL, 1000, 100, 101);
  enter.fn_index = 1;
  enter.address = 0x5555000;
  auto exit = make<cw_rec_call>(CW_REC_CALL, 2000, 100, 101);
  exit.fn_index = 1;
  exit.is_exit = 1;
  auto unknown = make<cw_rec_call>(CW_REC_CALL, 3000, 100, 101);
  unknown.fn_index = 2;
  d.decode(&enter, sizeof enter);
  d.decode(&exit, sizeof exit);
  d.decode(&unknown, sizeof unknown);
  d.decode(&enter, sizeof enter - 1);
  d.release_all();
  CHECK(events_text(t) ==
        "1000 101 call_enter fn=poll_once addr=0x5555000\n"
        "2000 101 call_exit fn=poll_once\n");
  CHECK(d.stats().malformed == 2);
}

TEST_CASE("flag records become flag_read and flag_write; read/write watch hits are classified") {
  Trace t;
  RecordDecoder d(t, test_naming());
  InstrumentNaming naming = test_instrument_naming();
  std::vector<std::vector<uint8_t>> seen_bytes;
  // The instruction is the tail of the bytes: here its last byte says what it did.
  naming.classify_watch_hit = [&](std::span<const uint8_t> before, uint64_t ip, uint64_t addr) {
    CHECK(ip == 0x1746);
    CHECK(addr == 0x4000);
    seen_bytes.emplace_back(before.begin(), before.end());
    return before.empty() ? 0 : before.back();
  };
  d.set_instrument_naming(naming);

  auto probed_read = flag_record(1000, 0, CW_FLAG_READ, CW_FLAG_PROBE, 0);
  auto probed_write = flag_record(2000, 0, CW_FLAG_WRITE, CW_FLAG_PROBE, 1);
  auto watched_write = flag_record(3000, 1, CW_FLAG_WRITE, CW_FLAG_WATCH, 7);
  for (const auto* r : {&probed_read, &probed_write, &watched_write}) d.decode(r, sizeof *r);
  for (uint8_t how : {1, 2, 3, 0}) {
    auto hit = flag_record(4000 + how, 0, CW_FLAG_UNKNOWN, CW_FLAG_WATCH, how);
    hit.insn_len = 3;
    hit.insn[0] = 0x8b;
    hit.insn[1] = 0x05;
    hit.insn[2] = how;
    d.decode(&hit, sizeof hit);
  }
  auto empty = flag_record(5000, 0, CW_FLAG_UNKNOWN, CW_FLAG_WATCH, 9);  // no bytes readable
  d.decode(&empty, sizeof empty);
  d.release_all();
  CHECK(events_text(t) ==
        "1000 101 flag_read flag=ready addr=16384\n"  // zero values are not written
        "2000 101 flag_write flag=ready addr=16384 value=1\n"
        "3000 101 flag_write flag=quit addr=16384 value=7\n"
        "4000 101 flag_read flag=ready addr=16384\n"
        "4001 101 flag_read flag=ready addr=16384 value=1\n"
        "4002 101 flag_write flag=ready addr=16384 value=2\n"
        "4003 101 flag_write flag=ready addr=16384 value=3\n"
        "5000 101 flag_read flag=ready addr=16384 value=9\n");
  REQUIRE(seen_bytes.size() == 5);
  CHECK(seen_bytes[0] == std::vector<uint8_t>{0x8b, 0x05, 1});
  CHECK(seen_bytes[4].empty());
  CHECK(d.stats().watch_hits_unclassified == 2);
  CHECK(d.stats().malformed == 0);
}

TEST_CASE("flag records with unknown indexes, accesses or byte counts are malformed") {
  Trace t;
  RecordDecoder d(t, test_naming());
  auto hit = flag_record(1000, 0, CW_FLAG_UNKNOWN, CW_FLAG_WATCH, 1);
  // No classifier and no names yet: the flag index is unknown.
  d.decode(&hit, sizeof hit);
  CHECK(d.stats().malformed == 1);
  d.set_instrument_naming(test_instrument_naming());
  d.decode(&hit, sizeof hit);  // now a read, unclassified
  CHECK(d.stats().watch_hits_unclassified == 1);
  auto far = flag_record(1000, 2, CW_FLAG_READ, CW_FLAG_PROBE, 1);
  auto odd = flag_record(1000, 0, 9, CW_FLAG_PROBE, 1);
  auto long_insn = flag_record(1000, 0, CW_FLAG_UNKNOWN, CW_FLAG_WATCH, 1);
  long_insn.insn_len = 16;
  d.decode(&far, sizeof far);
  d.decode(&odd, sizeof odd);
  d.decode(&long_insn, sizeof long_insn);
  d.decode(&hit, sizeof hit - 8);
  CHECK(d.stats().malformed == 5);
  CHECK(d.release_all() == 1);
}

}  // namespace cw

namespace cw {
namespace {

// The builtin schema with its kinds, and each kind's fields, in reverse order.
Schema reversed_schema() {
  Schema s;
  const std::vector<KindDef>& kinds = Schema::builtin().kinds();
  for (auto it = kinds.rbegin(); it != kinds.rend(); ++it) {
    KindDef k = *it;
    std::reverse(k.fields.begin(), k.fields.end());
    s.add(std::move(k));
  }
  return s;
}

// Each event as "ts tid kind field=value ...", its fields by name in alphabetical order and
// its strings spelled out: the same for two traces whatever order their schemas give.
std::vector<std::string> events_by_name(const Trace& t) {
  std::vector<std::string> out;
  for (const Event& e : t.events) {
    const KindDef& kind = t.schema.kind(e.kind);
    std::map<std::string, std::string> fields;
    for (size_t f = 0; f < kind.fields.size(); ++f) {
      const uint64_t v = t.value(e, static_cast<int>(f));
      fields[kind.fields[f].name] = kind.fields[f].type == FieldType::Str
                                        ? std::string(t.strings.get(static_cast<StrId>(v)))
                                        : std::to_string(v);
    }
    std::string line = fmt::format("{} {} {}", e.ts, e.tid, kind.name);
    for (const auto& [name, value] : fields) line += fmt::format(" {}={}", name, value);
    out.push_back(line);
  }
  return out;
}

// The header of a record of type R from thread 101 of process 100.
template <typename R>
cw_rec_header header(uint32_t type) {
  return {.type = type, .size = sizeof(R), .pid = 100, .tid = 101};
}

// One record of each type the decoder turns into events, every value set and distinct
// from the others, so that a value in another field's place shows.
void decode_one_of_each(RecordDecoder& d) {
  d.add_process(100, 1, "app", "/usr/bin/app");
  d.add_thread(101, 100, "app", false);
  uint64_t ts = 1000;
  auto decode = [&](auto r) {
    r.h.ts = ts++;
    d.decode(&r, sizeof r);
  };
  decode(cw_rec_sys_enter{.h = header<cw_rec_sys_enter>(CW_REC_SYS_ENTER),
                          .nr = 202,
                          .fd = 3,
                          .resource = 4,
                          .value = 5,
                          .count = 6,
                          .timeout_ns = 7,
                          .op = 1});
  decode(cw_rec_sys_exit{.h = header<cw_rec_sys_exit>(CW_REC_SYS_EXIT), .nr = 202, .ret = 8});
  decode(cw_rec_switch{.h = header<cw_rec_switch>(CW_REC_SWITCH),
                       .next_pid = 100,
                       .next_tid = 102,
                       .prev_state = 'S'});
  decode(cw_rec_wake{.h = header<cw_rec_wake>(CW_REC_WAKING),
                     .target_pid = 100,
                     .target_tid = 102,
                     .in_irq = 1,
                     .cause_tid = 103});
  decode(cw_rec_wake{
      .h = header<cw_rec_wake>(CW_REC_WAKEUP_NEW), .target_pid = 100, .target_tid = 104});
  decode(cw_rec_fork{
      .h = header<cw_rec_fork>(CW_REC_FORK), .child_pid = 100, .child_tid = 104, .is_thread = 1});
  decode(cw_rec_exec{.h = header<cw_rec_exec>(CW_REC_EXEC), .path = "/bin/next"});
  decode(cw_rec_comm{.h = header<cw_rec_comm>(CW_REC_COMM), .comm = "renamed"});
  for (uint32_t send : {1, 0})
    decode(cw_rec_xfer{.h = header<cw_rec_xfer>(CW_REC_XFER),
                       .object = 10 + send,
                       .offset = 12 + send,
                       .len = 14 + send,
                       .fd = 16 + static_cast<int32_t>(send),
                       .peer_pid = 18 + static_cast<int32_t>(send),
                       .is_send = send});
  decode(
      cw_rec_ready{.h = header<cw_rec_ready>(CW_REC_READY), .n = 1, .fds = {20}, .events = {21}});
  for (uint32_t op : {CW_TIMER_ARM, CW_TIMER_FIRE, CW_TIMER_CANCEL})
    decode(cw_rec_timer{.h = header<cw_rec_timer>(CW_REC_TIMER),
                        .timer = 30 + op,
                        .expires_ns = 34,
                        .interval_ns = 35,
                        .op = op});
  for (uint32_t op : {CW_HARDIRQ_ENTER, CW_HARDIRQ_EXIT, CW_SOFTIRQ_ENTER, CW_SOFTIRQ_EXIT})
    decode(cw_rec_irq{.h = header<cw_rec_irq>(CW_REC_IRQ),
                      .op = op,
                      .irq = op < CW_SOFTIRQ_ENTER ? 40 : 1,
                      .name = "eth0"});
  for (uint32_t op : {CW_SIGNAL_GENERATE, CW_SIGNAL_DELIVER})
    decode(cw_rec_signal{.h = header<cw_rec_signal>(CW_REC_SIGNAL),
                         .op = op,
                         .sig = 50 + static_cast<int32_t>(op),
                         .target_pid = 100,
                         .target_tid = 102,
                         .cause_tid = 103});
  decode(cw_rec_sample{.h = header<cw_rec_sample>(CW_REC_SAMPLE), .period = 60});
  for (uint32_t is_exit : {0, 1})
    decode(cw_rec_call{
        .h = header<cw_rec_call>(CW_REC_CALL), .fn_index = 1, .is_exit = is_exit, .address = 70});
  for (uint8_t access : {CW_FLAG_READ, CW_FLAG_WRITE})
    decode(flag_record(0, access - 1u, access, CW_FLAG_PROBE, 80 + access));
  decode(cw_rec_exit{.h = header<cw_rec_exit>(CW_REC_EXIT), .code = 90});
  d.add_marker(ts++, 101, 100, "here");
  d.add_lock_wait(ts++, LockWait{.waiter_pid = 100,
                                 .waiter_tid = 101,
                                 .holder_pid = 100,
                                 .holder_tid = 102,
                                 .object = 95,
                                 .lock = "FLOCK WRITE"});
  d.release_all();
}

TEST_CASE("values go to their fields by name, whatever order the schema gives kinds and fields") {
  Trace builtin, reversed;
  reversed.schema = reversed_schema();
  RecordDecoder in_builtin(builtin, test_naming()), in_reversed(reversed, test_naming());
  for (RecordDecoder* d : {&in_builtin, &in_reversed}) {
    d->set_instrument_naming(test_instrument_naming());
    decode_one_of_each(*d);
  }
  CHECK(in_reversed.stats().malformed == 0);
  // Every kind the decoder writes (recorder/event_fields.h) is there.
  std::set<std::string_view> kinds;
  for (const Event& e : reversed.events) kinds.insert(reversed.schema.kind(e.kind).name);
  CHECK(kinds.size() == 31);
  CHECK(events_by_name(reversed) == events_by_name(builtin));
  const Event& enter = reversed.events.front();
  REQUIRE(reversed.schema.kind(enter.kind).name == "syscall_enter");
  auto field = [&](std::string_view name) {
    return reversed.value(enter, reversed.schema.field_index(enter.kind, name));
  };
  CHECK(reversed.strings.get(static_cast<StrId>(field("name"))) == "futex");
  CHECK(field("fd") == 3);
  CHECK(field("resource") == 4);
  CHECK(reversed.strings.get(static_cast<StrId>(field("op"))) == "wake");
  CHECK(field("value") == 5);
  CHECK(field("count") == 6);
  CHECK(field("timeout_ns") == 7);
}

TEST_CASE("a schema without a field the decoder writes is refused when the decoder is made") {
  Trace t;
  t.schema = Schema();
  for (KindDef k : Schema::builtin().kinds()) {
    if (k.name == "send") k.fields.erase(k.fields.begin() + 2);  // len
    t.schema.add(std::move(k));
  }
  CHECK_THROWS_WITH_AS(RecordDecoder(t, test_naming()), "schema kind send has no field len",
                       std::logic_error);
}

}  // namespace
}  // namespace cw
