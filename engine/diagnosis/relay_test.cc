// Requests passed on by relays, diagnosed with the standard packs as they ship: the path
// shown begins where the request began, not at the last thread that passed it on (the
// Argus paper, §4.2: the request a batch of work served).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::build_with_stdlib;
using testing::Built;

// The threads on the path by name, "COMM → COMM …", consecutive steps of one name once.
std::string path_names(const Built& b, const Diagnosis& d) {
  std::string out, last;
  for (const PathStep& s : d.path) {
    const ThreadInfo* t = b.trace.thread(b.graph().segments[s.segment].tid);
    const std::string c = t ? std::string(b.trace.strings.get(t->comm)) : "?";
    if (c == last) continue;
    out += (out.empty() ? "" : " → ") + c;
    last = c;
  }
  return out;
}

// A D-Bus call to a GLib service as a recording with calls from the scheduler writes it:
// no transfers, only the wake-ups, each marked when the call that raised it delivered a
// stream's bytes (`delivers`). Every process does its socket I/O on a thread of its own
// (GDBus's worker) and hands work to its main loop's thread through that loop's eventfd,
// an 8-byte write that wakes the owner in poll (glib.gio's context.handoff).
//
// cw-caller (300) asks for a slow report at 10 ms: it hands the call to its I/O thread (301),
// which sends it to cw-bus (400), which relays it to cw-service's I/O thread (201), which
// hands it to the service's main loop (200). The main loop computes 500 ms on it. cw-b
// (100) sends a quick call at 20 ms; it reaches the service's I/O thread at once, whose
// hand-off wakes nobody: the main loop is busy. At 510 ms the main loop answers cw-caller
// and, in its next turn, cw-b, whose answer goes back through the I/O thread and the bus.
std::string glib_bus_relay() {
  std::string t =
      "process 100 comm=cw-b\nthread 100 pid=100 comm=cw-b\n"
      "process 200 comm=cw-service\nthread 200 pid=200 comm=cw-service\n"
      "thread 201 pid=200 comm=cw-io\n"
      "process 300 comm=cw-caller\nthread 300 pid=300 comm=cw-caller\n"
      "thread 301 pid=300 comm=cw-callio\n"
      "process 400 comm=cw-bus\nthread 400 pid=400 comm=cw-bus\n";
  // A thread waits in its loop's poll (the bus in epoll_wait); is woken in it; writes `count`
  // bytes to `object` on descriptor `fd`, waking `wake` (0: nobody).
  auto waits = [](const char* at, Tid tid) {
    return fmt::format(
        "{0} {1} syscall_enter name={2} fd=-1 count=2 timeout_ns=-1\n{0} {1} switch_out "
        "state=S\n",
        at, tid, tid == 400 ? "epoll_wait" : "poll");
  };
  auto woken = [](const char* at, Tid tid) {
    return fmt::format("{0} {1} switch_in\n{0} {1} syscall_exit name={2} ret=1\n", at, tid,
                       tid == 400 ? "epoll_wait" : "poll");
  };
  auto writes = [](const char* at, Tid tid, const char* call, int fd, const char* object, int count,
                   Tid wake) {
    return fmt::format(
        "{0} {1} syscall_enter name={2} fd={3} resource={4} count={5}\n{6}"
        "{0} {1} syscall_exit name={2} ret={5}\n",
        at, tid, call, fd, object, count,
        wake ? fmt::format("{} {} wakeup target={} delivers=1\n", at, tid, wake) : "");
  };
  t += waits("1ms", 200) + waits("1ms", 201) + waits("1ms", 301) + waits("1ms", 400);
  // cw-caller's call: its hand-off, its I/O thread's send, the bus's, the service's hand-off.
  t += writes("10ms", 300, "write", 4, "0xa1", 8, 301) + waits("10.01ms", 300);
  t += woken("10.02ms", 301) + writes("10.03ms", 301, "sendmsg", 5, "0xb1", 144, 400) +
       waits("10.04ms", 301);
  t += woken("10.05ms", 400) + writes("10.06ms", 400, "sendmsg", 6, "0xb2", 160, 201) +
       waits("10.07ms", 400);
  t += woken("10.08ms", 201) + writes("10.09ms", 201, "write", 7, "0xa2", 8, 200) +
       waits("10.1ms", 201);
  t += woken("10.11ms", 200);
  // cw-b's call: straight to the bus, relayed to the service's I/O thread, handed to a main
  // loop that is computing.
  t += writes("20ms", 100, "sendmsg", 3, "0xb3", 144, 400) + waits("20.01ms", 100);
  t += woken("20.02ms", 400) + writes("20.03ms", 400, "sendmsg", 6, "0xb2", 160, 201) +
       waits("20.04ms", 400);
  t += woken("20.05ms", 201) + writes("20.06ms", 201, "write", 7, "0xa2", 8, 0) +
       waits("20.07ms", 201);
  // 510 ms: the answer to cw-caller, then a turn that finds cw-b's call and answers it.
  t += writes("510ms", 200, "write", 8, "0xa3", 8, 201) +
       "510.01ms 200 syscall_enter name=poll fd=-1 count=2 timeout_ns=-1\n"
       "510.01ms 200 syscall_exit name=poll ret=1\n";
  t += woken("510.02ms", 201) + writes("510.03ms", 201, "sendmsg", 9, "0xb4", 80, 400) +
       waits("510.04ms", 201);
  t += woken("510.05ms", 400) + writes("510.06ms", 400, "sendmsg", 10, "0xb5", 90, 301) +
       waits("510.07ms", 400);
  t += woken("510.08ms", 301) + writes("510.09ms", 301, "write", 11, "0xa4", 8, 300) +
       waits("510.1ms", 301) + woken("510.11ms", 300);
  t += writes("511ms", 200, "write", 8, "0xa3", 8, 201) + waits("511.01ms", 200);
  t += woken("511.02ms", 201) + writes("511.03ms", 201, "sendmsg", 9, "0xb4", 80, 400) +
       waits("511.04ms", 201);
  t += woken("511.05ms", 400) + writes("511.06ms", 400, "sendmsg", 12, "0xb6", 90, 100) +
       waits("511.07ms", 400);
  t += woken("511.08ms", 100);
  return t;
}

TEST_CASE("a call handed to a GLib loop through relays: the path begins at the caller") {
  // The step before the culprit (the service's I/O thread) only passed cw-caller's call on;
  // so did the bus and cw-caller's own I/O thread, each woken by the one before it. A GLib
  // hand-off carries a request as the bytes of a stream do: the walk back goes through
  // cw-callio to cw-caller, whose call kept the main loop busy.
  Built b = build_with_stdlib(glib_bus_relay());
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-b";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  REQUIRE(!d.root_causes.empty());
  CHECK(b.graph().segments[d.root_causes[0].segment].tid == 200);
  CHECK(path_names(b, d) ==
        "cw-caller → cw-callio → cw-bus → cw-io → cw-service → cw-io → "
        "cw-bus → cw-b");
}

}  // namespace
}  // namespace cw::engine
