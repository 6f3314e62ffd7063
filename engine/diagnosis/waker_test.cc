// The wait matrix's rule (docs/diagnosis.md, "The wait matrix"): when another thread ended
// the hang's wait, that thread is the next step back, weak edge or not. These tests use the
// standard packs as they ship, on hand-made traces of the mechanisms the matrix lists.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

#include "engine/diagnosis/diagnose.h"
#include "engine/diagnosis/logical_wait.h"
#include "engine/graph/test_support.h"
#include "rules/loader.h"

namespace cw::engine {
namespace {

using testing::build_with_stdlib;
using testing::Built;

std::string comm_of(const Built& b, uint32_t segment) {
  const ThreadInfo* t = b.trace.thread(b.graph().segments[segment].tid);
  return t ? std::string(b.trace.strings.get(t->comm)) : "?";
}

// Root causes as "COMM KIND", deepest first; path as "COMM → COMM …", root cause first.
std::string causes(const Built& b, const Diagnosis& d) {
  std::string out;
  for (const RootCause& r : d.root_causes)
    out += (out.empty() ? "" : ", ") + comm_of(b, r.segment) + " " +
           std::string(hang_kind_name(r.kind));
  return out;
}

std::string path(const Built& b, const Diagnosis& d) {
  std::string out;
  for (const PathStep& s : d.path) {
    std::string c = comm_of(b, s.segment);
    if (out.size() >= c.size() && out.compare(out.size() - c.size(), c.size(), c) == 0) continue;
    out += (out.empty() ? "" : " → ") + c;
  }
  return out;
}

Diagnosis diagnose_at(const Built& b, Tid tid, uint64_t at_ms) {
  DiagnoseOptions o;
  o.symptom.mode = SymptomRequest::Mode::ThreadAt;
  o.symptom.tid = tid;
  o.symptom.at_ns = at_ms * 1000000;
  return diagnose(b.trace, b.result, b.rules, o);
}

// The hang of the threads named `name` (--hang NAME).
Diagnosis diagnose_named(const Built& b, const char* name) {
  DiagnoseOptions o;
  o.symptom.thread_name = name;
  return diagnose(b.trace, b.result, b.rules, o);
}

// Three processes: the one that hangs, the one that ends its wait, and a bystander that
// happens to be on the CPU when a timer expires.
const std::string kProcesses =
    "process 100 comm=cw-victim\nthread 100 pid=100 comm=cw-victim\n"
    "process 200 comm=cw-ender\nthread 200 pid=200 comm=cw-ender\n"
    "process 300 comm=cw-bystander\nthread 300 pid=300 comm=cw-bystander\n";

TEST_CASE("a writer blocked on a full pipe: the reader that drained it is the next step") {
  // cw-victim writes 1 MiB into a pipe whose reader, cw-ender, sleeps 1 s before it reads:
  // the write blocks once the pipe's 64 KiB are full, until the read makes room and wakes
  // it. The only edge into the writer's wait is that plain (weak) wake-up.
  Built b = build_with_stdlib(kProcesses + R"(
1ms 200 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=1000000000
1ms 200 switch_out state=S
2ms 100 syscall_enter name=write fd=3 count=1048576
2ms 100 send object=5 offset=0 len=65536 peer=200 fd=3
2ms 100 switch_out state=S
500ms 300 syscall_enter name=getpid
500ms 300 syscall_exit name=getpid ret=300
1001ms 300 wakeup target=200 interrupt=1
1001ms 200 switch_in
1001ms 200 syscall_exit name=clock_nanosleep ret=0
1001ms 200 syscall_enter name=read fd=4 count=1048576
1001ms 200 recv object=5 offset=0 len=65536 peer=100 fd=4
1001ms 200 wakeup target=100
1001ms 200 syscall_exit name=read ret=65536
1001ms 200 syscall_enter name=read fd=4 count=1048576
1001ms 200 switch_out state=S
1002ms 100 switch_in
1002ms 100 send object=5 offset=65536 len=983040 peer=200 fd=3
1002ms 100 wakeup target=200
1002ms 100 syscall_exit name=write ret=1048576
1003ms 200 switch_in
1003ms 200 recv object=5 offset=65536 len=983040 peer=100 fd=4
1003ms 200 syscall_exit name=read ret=983040
1004ms 100 exit code=0
1004ms 200 exit code=0
)");
  Diagnosis d = diagnose_at(b, 100, 500);
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
}

TEST_CASE("bytes read after a sleep did not end the sleep: the sleeper timed out") {
  // The same trace: cw-ender's sleep ended by its own timer. The bytes cw-victim wrote
  // during it were read by a later call; they are no waker of the sleep, and the report
  // does not say they ended it.
  Built b = build_with_stdlib(kProcesses + R"(
1ms 200 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=1000000000
1ms 200 switch_out state=S
2ms 100 syscall_enter name=write fd=3 count=1048576
2ms 100 send object=5 offset=0 len=65536 peer=200 fd=3
2ms 100 switch_out state=S
1001ms 300 wakeup target=200 interrupt=1
1001ms 200 switch_in
1001ms 200 syscall_exit name=clock_nanosleep ret=0
1001ms 200 syscall_enter name=read fd=4 count=1048576
1001ms 200 recv object=5 offset=0 len=65536 peer=100 fd=4
1001ms 200 wakeup target=100
1001ms 200 syscall_exit name=read ret=65536
1002ms 100 switch_in
1002ms 100 syscall_exit name=write ret=65536
)");
  const uint32_t sleep = b.graph().thread_segments(200)->begin;
  const ThreadEvents events(b.trace);
  const SegmentProfile p = profile_segment(b.trace, events, b.graph(), sleep);
  REQUIRE(p.longest_block_ns > 0);
  CHECK(wake_edge(b.trace, events, b.graph(), sleep, p) == kNoIndex);
  Diagnosis d = diagnose_at(b, 100, 500);
  REQUIRE(!d.root_causes.empty());
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(d.root_causes[0].what.find("ended by") == std::string::npos);
}

// cw-victim reads a pipe (fd 3) until cw-ender, asleep 1 s, acts on it with CALL (a close:
// the end of stream). Before the read, cw-bystander had sent a byte on another pipe (fd 4)
// and cw-victim's child had exited; cw-victim takes the byte and reaps the child after its
// read returns. Those edges are strong and land after the wake-up, in later calls.
std::string woken_after_queued(const std::string& call) {
  return kProcesses + fmt::format(R"(process 400 comm=cw-child ppid=100
thread 400 pid=400 comm=cw-child
1ms 300 syscall_enter name=write fd=5 count=1
1ms 300 send object=9 offset=0 len=1 peer=100 fd=5
1ms 300 syscall_exit name=write ret=1
1ms 200 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=1000000000
1ms 200 switch_out state=S
2ms 100 syscall_enter name=read fd=3 resource=7 count=64
2ms 100 switch_out state=S
3ms 400 exit code=0
3ms 400 switch_out state=Z
1001ms 300 wakeup target=200 interrupt=1 cause=200
1001ms 200 switch_in
1001ms 200 syscall_exit name=clock_nanosleep ret=0
1001ms 200 syscall_enter name={} fd=3 resource=7
1001ms 200 wakeup target=100
1001ms 200 syscall_exit name={} ret=0
1002ms 100 switch_in
1002ms 100 syscall_exit name=read ret=0
1002ms 100 syscall_enter name=read fd=4 count=64
1002ms 100 recv object=9 offset=0 len=1 peer=300 fd=4
1002ms 100 syscall_exit name=read ret=1
1003ms 100 syscall_enter name=wait4 resource=400
1003ms 100 syscall_exit name=wait4 ret=400
)",
                                  call, call);
}

TEST_CASE("what was queued before a wait began did not end it: the thread that woke it did") {
  // An ioctl's wake-up is of no kind a pack knows: it stays weak, and is still the waker.
  Built b = build_with_stdlib(woken_after_queued("ioctl"));
  Diagnosis d = diagnose_at(b, 100, 500);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
  const uint32_t waker =
      wake_edge(b.trace, ThreadEvents(b.trace), b.graph(), d.hang.segment, d.hang.profile);
  REQUIRE(waker != kNoIndex);
  CHECK(comm_of(b, b.graph().edges[waker].from) == "cw-ender");
  CHECK(b.graph().edges[waker].strength == Strength::Weak);
}

TEST_CASE("a close wakes the reader at the end of its pipe: the close's doing") {
  Built b = build_with_stdlib(woken_after_queued("close"));
  Diagnosis d = diagnose_at(b, 100, 500);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
  const uint32_t waker =
      wake_edge(b.trace, ThreadEvents(b.trace), b.graph(), d.hang.segment, d.hang.profile);
  REQUIRE(waker != kNoIndex);
  CHECK(b.graph().edges[waker].strength == Strength::Strong);
  CHECK(b.graph().kind_name(b.graph().edges[waker]) == "close");
}

// cw-victim blocked in a read of a pipe from 2 ms on; cw-ender busy.
const std::string kReaderBlocked = kProcesses + R"(
1ms 200 syscall_enter name=getpid
1ms 200 syscall_exit name=getpid
2ms 100 syscall_enter name=read fd=3 resource=7 count=8192
2ms 100 switch_out state=S
)";
// cw-ender closes the pipe while cw-victim, running again, blocks a moment on its lock
// (state D); the close wakes it, and it runs at 1003 ms.
const std::string kCloseWhileLocked = R"(
1000.52ms 200 syscall_enter name=close fd=5 resource=7
1000.9ms 100 switch_out state=D
1000.95ms 200 wakeup target=100
1001ms 200 syscall_exit name=close
1003ms 100 switch_in
)";

TEST_CASE("woken by a write, then blocked on the pipe's lock while its writer closed: the write") {
  // cw-ender computes 1 s, writes its answer into the pipe cw-victim reads, and closes it.
  // The write wakes the reader; the reader runs, then blocks a moment (state D) on the
  // pipe's lock, which the close holds, and the close wakes it again. Its read returns the
  // bytes written: the write ended the 1 s wait, not the close (a later, short block).
  Built b = build_with_stdlib(kReaderBlocked + R"(
1000ms 200 syscall_enter name=write fd=5 resource=7 count=9
1000.01ms 200 wakeup target=100
1000.1ms 100 switch_in
1000.5ms 200 syscall_exit name=write ret=9
1000.5ms 200 send object=7 offset=0 len=9 peer=-1 fd=5
)" + kCloseWhileLocked + R"(1003ms 100 syscall_exit name=read ret=9
1003ms 100 recv object=7 offset=0 len=9 peer=-1 fd=3
1004ms 100 syscall_enter name=exit_group
)");
  Diagnosis d = diagnose_at(b, 100, 500);
  CHECK(d.hang.tid == 100);
  CHECK(path(b, d) == "cw-ender → cw-victim");
  const uint32_t waker =
      wake_edge(b.trace, ThreadEvents(b.trace), b.graph(), d.hang.segment, d.hang.profile);
  REQUIRE(waker != kNoIndex);
  CHECK(comm_of(b, b.graph().edges[waker].from) == "cw-ender");
  CHECK(b.graph().kind_name(b.graph().edges[waker]) == "message");
  // The path's step into the hang is that edge (a report says the wait was ended by it).
  REQUIRE(d.path.size() >= 2);
  const uint32_t last = d.path[d.path.size() - 2].edge;
  REQUIRE(last != kNoIndex);
  CHECK(b.graph().kind_name(b.graph().edges[last]) == "message");
  // The close's wake-up is in the graph, as strong as the message and first to arrive.
  bool close_edge = false;
  for (const Edge& e : b.graph().edges) close_edge |= b.graph().kind_name(e) == "close";
  CHECK(close_edge);
}

TEST_CASE("a wake-up after the longest block is still the waker when nothing else came") {
  // The same wait, but the write's wake-up and bytes went unrecorded (events lost under
  // load): the close's wake-up, landing after the longest block, is all that explains it.
  Built b = build_with_stdlib(kReaderBlocked + R"(
1000.1ms 100 switch_in
)" + kCloseWhileLocked + R"(1003ms 100 syscall_exit name=read ret=0
1004ms 100 syscall_enter name=exit_group
)");
  Diagnosis d = diagnose_at(b, 100, 500);
  const uint32_t waker =
      wake_edge(b.trace, ThreadEvents(b.trace), b.graph(), d.hang.segment, d.hang.profile);
  REQUIRE(waker != kNoIndex);
  CHECK(b.graph().kind_name(b.graph().edges[waker]) == "close");
}

TEST_CASE("a read woken for nothing sleeps again: what ended its second sleep ended the wait") {
  // cw-victim blocks reading a socket. At 300 ms cw-bystander, reading its own end of the
  // same stream, drains bytes: the kernel wakes everyone waiting on the stream, and
  // cw-victim looks, finds nothing and sleeps again in the same read. At 1 s cw-ender's
  // call wakes it, and the read returns. Both wake-ups are plain (weak) ones; the first
  // only made it look.
  Built b = build_with_stdlib(kReaderBlocked + R"(
300ms 300 syscall_enter name=read fd=4 resource=8 count=16
300ms 300 wakeup target=100
300.01ms 300 syscall_exit name=read ret=16
300.1ms 100 switch_in
300.12ms 100 switch_out state=S
1000ms 200 syscall_enter name=ioctl fd=9
1000ms 200 wakeup target=100
1000.01ms 200 syscall_exit name=ioctl ret=0
1000.1ms 100 switch_in
1000.2ms 100 syscall_exit name=read ret=16
1001ms 100 syscall_enter name=exit_group
)");
  Diagnosis d = diagnose_at(b, 100, 200);
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongWait);
  // The wait is the whole call, from its first sleep.
  CHECK(d.hang.profile.longest_block_start == 2'000'000);
  CHECK(d.hang.profile.longest_block_ns == 998'100'000);
  const uint32_t waker =
      wake_edge(b.trace, ThreadEvents(b.trace), b.graph(), d.hang.segment, d.hang.profile);
  REQUIRE(waker != kNoIndex);
  CHECK(comm_of(b, b.graph().edges[waker].from) == "cw-ender");
  CHECK(path(b, d) == "cw-ender → cw-victim");
}

// cw-victim polls its pipe with a 20 ms timeout until cw-ender, asleep 600 ms, writes to
// it: 30 slices that time out, then one that the write ends. The loop is cut at each poll
// (linux.kernel's loop.wait).
// With `between` set, each slice is preceded by that call and a signal mask's change (a
// shell's `read -t` checks its descriptor with fcntl before each look): the poll is then a
// third of the calls.
std::string poll_slices(const char* between = nullptr) {
  std::string t = kProcesses +
                  "0ms 200 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=600000000\n"
                  "0ms 200 switch_out state=S\n";
  uint64_t us = 1000;
  const uint64_t slice = between ? 19980 : 20000;  // room for the call between
  auto call_between = [&] {
    if (!between) return;
    t += fmt::format("{}us 100 syscall_enter name={} fd=3\n{}us 100 syscall_exit name={}\n",
                     us - 15, between, us - 14, between);
    t += fmt::format("{}us 100 syscall_enter name=rt_sigprocmask\n", us - 12);
    t += fmt::format("{}us 100 syscall_exit name=rt_sigprocmask\n", us - 10);
  };
  for (int i = 0; i < 30; ++i, us += 20000) {
    call_between();
    t += fmt::format("{}us 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=20000000\n", us);
    t += fmt::format("{}us 100 switch_out state=S\n", us);
    t += fmt::format("{}us 100 switch_in\n{}us 100 syscall_exit name=poll ret=0\n", us + slice,
                     us + slice);
  }
  call_between();
  t += fmt::format("{}us 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=20000000\n", us);
  t += fmt::format("{}us 100 switch_out state=S\n", us);
  t += R"(600ms 200 switch_in
600ms 200 syscall_exit name=clock_nanosleep ret=0
600ms 200 syscall_enter name=write fd=4 count=16
600ms 200 send object=9 offset=0 len=16 peer=100 fd=4
600ms 200 wakeup target=100
600ms 200 syscall_exit name=write ret=16
601ms 100 switch_in
601ms 100 syscall_exit name=poll ret=1
601ms 100 syscall_enter name=read fd=3 count=16
601ms 100 recv object=9 offset=0 len=16 peer=200 fd=3
601ms 100 syscall_exit name=read ret=16
602ms 100 exit code=0
602ms 200 exit code=0
)";
  return t;
}

TEST_CASE("a poll retried after timeouts until another thread's write is one LongWait") {
  Built b = build_with_stdlib(poll_slices());
  Diagnosis d = diagnose_named(b, "cw-victim");
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(d.hang.end_ns - d.hang.start_ns >= 590000000);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
}

// cw-victim starts, then polls its pipe once (no timeout) until cw-ender, asleep 600 ms,
// writes to it, and reads what it wrote.
const std::string kPollOnceUntilWrite =
    R"(0ms 200 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=600000000
0ms 200 switch_out state=S
1ms 100 syscall_enter name=close fd=5
1ms 100 syscall_exit name=close ret=0
2ms 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=-1
2ms 100 switch_out state=S
600ms 200 switch_in
600ms 200 syscall_exit name=clock_nanosleep ret=0
600ms 200 syscall_enter name=write fd=4 count=16
600ms 200 send object=9 offset=0 len=16 peer=100 fd=4
600ms 200 wakeup target=100
600ms 200 syscall_exit name=write ret=16
601ms 100 switch_in
601ms 100 syscall_exit name=poll ret=1
601ms 100 syscall_enter name=read fd=3 count=16
601ms 100 recv object=9 offset=0 len=16 peer=200 fd=3
601ms 100 syscall_exit name=read ret=16
)";

// cw-victim polls its pipe, 200 ms and then with a timeout that fires at 600 ms, as
// cw-ender, asleep until then, writes to it: the timer fires first, and the bytes arrive
// 0.6 ms later while cw-victim waits for a CPU (runnable: nobody wakes it). When it runs at
// 602 ms its poll returns 0 and it reads the bytes at once; then it faults a page in (a
// block in state D, no call) and exits.
const std::string kTimeoutAsTheAnswerCame =
    R"(0ms 200 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=600500000
0ms 200 switch_out state=S
2ms 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=200000000
2ms 100 switch_out state=S
202ms 100 switch_in
202ms 100 syscall_exit name=poll ret=0
202010us 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=398000000
202010us 100 switch_out state=S
600500us 200 switch_in
600500us 200 syscall_exit name=clock_nanosleep ret=0
600600us 200 syscall_enter name=write fd=4 count=16
600600us 200 send object=9 offset=0 len=16 peer=100 fd=4 queued=1
600600us 200 syscall_exit name=write ret=16
602ms 100 switch_in
602ms 100 syscall_exit name=poll ret=0
602100us 100 syscall_enter name=read fd=3 count=16
602100us 100 recv object=9 offset=0 len=16 peer=200 fd=3 queued=1
602100us 100 syscall_exit name=read ret=16
602200us 100 switch_out state=D
602700us 100 switch_in
603ms 100 exit code=0
603ms 200 exit code=0
)";

TEST_CASE("a wait whose timeout fired as the answer came was for the answer") {
  // The timer and the bytes came within a millisecond of each other, and the bytes were
  // there before cw-victim ran: it read them at once and went on. What it waited for is
  // the answer, as when the bytes come first and wake it: cw-ender's sleep.
  Built b = build_with_stdlib(kProcesses + kTimeoutAsTheAnswerCame);
  Diagnosis d = diagnose_named(b, "cw-victim");
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
}

TEST_CASE("a retried wait whose woken slice is its longest is one wait from its first slice") {
  // cw-victim polls with a 20 ms timeout ten times, an fcntl before each; its eleventh poll
  // waits 25 ms, until cw-ender writes (a shell's `read -t` loop: the slice the data ended
  // lasts a little longer than the timed-out ones). The longest slice is the woken one,
  // and the wait began with the first slice: 225 ms, not 25.
  std::string t = kProcesses +
                  "0ms 200 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=226000000\n"
                  "0ms 200 switch_out state=S\n";
  uint64_t us = 1000;
  for (int i = 0; i < 10; ++i, us += 20000) {
    t += fmt::format("{}us 100 syscall_enter name=fcntl fd=3\n{}us 100 syscall_exit name=fcntl\n",
                     us - 5, us - 4);
    t += fmt::format("{}us 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=20000000\n", us);
    t += fmt::format("{}us 100 switch_out state=S\n", us);
    t += fmt::format("{}us 100 switch_in\n{}us 100 syscall_exit name=poll ret=0\n", us + 19990,
                     us + 19990);
  }
  t += fmt::format("{}us 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=20000000\n", us);
  t += fmt::format("{}us 100 switch_out state=S\n", us);
  t += R"(226ms 200 switch_in
226ms 200 syscall_exit name=clock_nanosleep ret=0
226ms 200 syscall_enter name=write fd=4 count=16
226ms 200 send object=9 offset=0 len=16 peer=100 fd=4
226ms 200 wakeup target=100
226ms 200 syscall_exit name=write ret=16
227ms 100 switch_in
227ms 100 syscall_exit name=poll ret=1
227ms 100 syscall_enter name=read fd=3 count=16
227ms 100 recv object=9 offset=0 len=16 peer=200 fd=3
227ms 100 syscall_exit name=read ret=16
228ms 100 exit code=0
228ms 200 exit code=0
)";
  Built b = build_with_stdlib(t);
  Diagnosis d = diagnose_named(b, "cw-victim");
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
}

TEST_CASE("the hang's own path reached only the nearer culprit: the path runs from it") {
  // A recording of a generated topology trimmed to what makes it (seed 160445610, index
  // 43): t43n0py computes 1.2 s, then drains the pipe t43n1py's 256 KiB write had filled;
  // t43n1py then writes to t43n2sh (a shell's `read -t` loop), which writes to t43n3py (a
  // poll loop), the hang. The beam search finds no path through t43n0py's busy segment
  // (run.sh's forks give it cheaper origins), and the hang's own wake-up path reaches
  // t43n1py but not t43n0py. The path runs along it from t43n1py, led by t43n0py: the
  // relay t43n2sh between them stays on it.
  Built b = build_with_stdlib(R"(process 11865 comm=run.sh
thread 11865 pid=11865 comm=run.sh
process 11868 comm=mktemp ppid=11865
thread 11868 pid=11868 comm=mktemp
process 11869 comm=mkdir ppid=11865
thread 11869 pid=11869 comm=mkdir
process 11879 comm=t43n0py ppid=11865
thread 11879 pid=11879 comm=t43n0py
process 11880 comm=t43n1py ppid=11865
thread 11880 pid=11880 comm=t43n1py
process 11881 comm=t43n2sh ppid=11865
thread 11881 pid=11881 comm=t43n2sh
process 11882 comm=t43n3py ppid=11865
thread 11882 pid=11882 comm=t43n3py
136675 11868 exit
223121 11868 wakeup target=11865
233859 11865 switch_in
239730 11865 syscall_exit name=wait4 ret=11868
560719 11865 fork child=11869 child_pid=11869
560719 11869 thread_start parent=11865
631000 11865 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff timeout_ns=-1
639510 11865 switch_out state=S
1935144 11869 exit
2038849 11869 signal_send target=11865 sig=17
2040247 11869 wakeup target=11865
2061912 11865 switch_in
2067657 11865 syscall_exit name=wait4 ret=11869
2080145 11865 signal_deliver sig=17
2288732 11865 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff timeout_ns=-1
2296995 11865 switch_out state=S
3888162 11865 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff timeout_ns=-1
3898035 11865 switch_out state=S
5493016 11865 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff timeout_ns=-1
5503246 11865 switch_out state=S
7025647 11865 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff timeout_ns=-1
7039564 11865 switch_out state=S
8563338 11865 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff timeout_ns=-1
10861187 11865 fork child=11879 child_pid=11879
10861187 11879 thread_start parent=11865
11178621 11865 fork child=11880 child_pid=11880
11178621 11880 thread_start parent=11865
11448755 11865 fork child=11881 child_pid=11881
11448755 11881 thread_start parent=11865
102421842 11879 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=31530227421701
103484903 11879 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=31530228484756
105614130 11879 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=31530230613989
105699961 11880 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=31530230697379
107094617 11881 send object=0xffff8884977ddcc0 len=11 peer=-1 fd=5
107110222 11881 recv object=0xffff8884977ddcc0 len=1 peer=-1
107152107 11881 syscall_enter name=pselect6 fd=-1 count=13 timeout_ns=49999000
107163949 11881 switch_out state=S
107346446 11880 syscall_enter name=write fd=4 resource=0xffff888339a22300 count=0x40000 timeout_ns=-1
107385101 11880 switch_out state=S
257697477 11881 syscall_enter name=pselect6 fd=-1 count=13 timeout_ns=49998000
288261060 11882 switch_out state=S
1212650215 11881 syscall_enter name=pselect6 fd=-1 count=13 timeout_ns=49998000
1307660144 11879 wakeup target=11880
1307663225 11879 recv object=0xffff888339a22300 offset=0x20041 len=0x10000 peer=-1 fd=4
1307665438 11880 switch_in
1307693636 11880 send object=0xffff888339a22300 offset=65 len=0x40000 peer=-1 fd=4
1307855686 11880 wakeup target=11881
1307864119 11880 send object=0xffff8884977dd840 offset=11 len=16 peer=-1 fd=5
1309576411 11881 switch_in
1309598259 11881 recv object=0xffff8884977dd840 offset=11 len=1 peer=-1 fd=12
1309949529 11881 syscall_enter name=write fd=1 resource=0xffff8884977dda80 count=1 timeout_ns=-1
1309951883 11881 wakeup target=11882
1309961210 11881 syscall_enter name=fcntl fd=14 resource=0x128532 timeout_ns=-1
1310163095 11881 syscall_exit name=close
1310533581 11881 switch_out state=X
1310585954 11865 switch_out state=S
1310585954 11882 switch_in
)");
  Diagnosis d = diagnose_named(b, "t43n3py");
  CHECK(causes(b, d) == "t43n0py LongRunning, t43n1py LongWait");
  CHECK(path(b, d) == "t43n0py → t43n1py → t43n2sh → t43n3py");
}

// A relay: cw-d waits to read cw-c's pipe, cw-c cw-b's, cw-b cw-a's; cw-a sleeps 1 s, then
// writes to cw-b.
const std::string kRelayChain =
    "process 100 comm=cw-a\nthread 100 pid=100 comm=cw-a\n"
    "process 200 comm=cw-b\nthread 200 pid=200 comm=cw-b\n"
    "process 300 comm=cw-c\nthread 300 pid=300 comm=cw-c\n"
    "process 400 comm=cw-d\nthread 400 pid=400 comm=cw-d\n"
    "0ms 200 syscall_enter name=read fd=3 resource=7 count=16\n0ms 200 switch_out state=S\n"
    "0ms 300 syscall_enter name=read fd=3 resource=8 count=16\n0ms 300 switch_out state=S\n"
    "0ms 400 syscall_enter name=read fd=3 resource=9 count=16\n0ms 400 switch_out state=S\n"
    "1ms 100 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=1000000000\n"
    "1ms 100 switch_out state=S\n"
    "1001ms 100 switch_in\n1001ms 100 syscall_exit name=clock_nanosleep ret=0\n"
    "1001ms 100 syscall_enter name=write fd=4 resource=7 count=16\n"
    "1001ms 100 send object=7 offset=0 len=16 peer=200 fd=4\n"
    "1001ms 100 wakeup target=200\n1001ms 100 syscall_exit name=write ret=16\n";

// The relay's hang (cw-d) diagnosed with a search depth too short for the beam search from
// it to reach cw-a (eight segments back or more), as a busy recording's graph can be too
// wide for it: the path comes from the slices. It runs from cw-a through each relay, every
// step joined to the next by an edge.
void check_relay_path(const Built& b) {
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-d";
  o.max_depth = 6;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 400);
  REQUIRE(!d.root_causes.empty());
  CHECK(comm_of(b, d.root_causes[0].segment) == "cw-a");
  CHECK(path(b, d) == "cw-a → cw-b → cw-c → cw-d");
  for (size_t k = 0; k + 1 < d.path.size(); ++k) CHECK(d.path[k].edge != kNoIndex);
}

TEST_CASE("a culprit found by a recursion leads the path through the threads between") {
  // cw-d waits for cw-c, which waits for cw-b, which waits for cw-a's 1 s sleep. Woken, cw-c
  // reads three files from the disk before it answers (a Python program importing its
  // modules): its answering segment is three weak cuts away from its wait, so the hang's own
  // path stops there, and cw-c (blocked while the hang lasted) is diagnosed in turn; that
  // finds cw-a through cw-b (a recording of generated topology 54054:26 trimmed to this). The path
  // shows cw-b too: the recursion's own path leads it, not cw-a alone with no edge to the next
  // step.
  std::string t =
      kRelayChain +
      std::string(
          "1001.1ms 200 switch_in\n1001.1ms 200 syscall_exit name=read ret=16\n"
          "1001.1ms 200 recv object=7 offset=0 len=16 peer=100 fd=3\n"
          "1001.2ms 200 syscall_enter name=write fd=4 resource=8 count=16\n"
          "1001.2ms 200 send object=8 offset=0 len=16 peer=300 fd=4\n"
          "1001.2ms 200 wakeup target=300\n1001.2ms 200 syscall_exit name=write ret=16\n"
          "1001.3ms 300 switch_in\n1001.3ms 300 syscall_exit name=read ret=16\n"
          "1001.3ms 300 recv object=8 offset=0 len=16 peer=200 fd=3\n");
  uint64_t us = 1001400;
  for (int i = 0; i < 3; ++i, us += 1100)
    t += fmt::format(
        "{}us 300 syscall_enter name=read fd=5 resource={} count=4096\n"
        "{}us 300 switch_out state=D\n{}us 300 switch_in\n"
        "{}us 300 syscall_exit name=read ret=4096\n",
        us, 0x5038d + i, us, us + 1000, us + 1000);
  t += fmt::format(
      "{0}us 300 syscall_enter name=write fd=4 resource=9 count=16\n"
      "{0}us 300 send object=9 offset=0 len=16 peer=400 fd=4\n"
      "{0}us 300 wakeup target=400\n{0}us 300 syscall_exit name=write ret=16\n"
      "{1}us 400 switch_in\n{1}us 400 syscall_exit name=read ret=16\n"
      "{1}us 400 recv object=9 offset=0 len=16 peer=300 fd=3\n",
      us, us + 100);
  check_relay_path(build_with_stdlib(t));
}

TEST_CASE("a culprit found two recursions down leads the path through both recursions") {
  // cw-d waits for cw-c, cw-c for cw-b, cw-b for cw-a's 1 s sleep; cw-b and cw-c each read
  // three files from the disk between their wake-up and their answer. The hang's own path
  // stops at cw-c's answer, the recursion into cw-c's wait stops at cw-b's, and the one into
  // cw-b's wait finds cw-a. The path goes from cw-a along the second recursion's path to
  // cw-b, and along the first's to cw-c.
  std::string t = kRelayChain;
  // `tid`, woken at `us`, reads `object`'s 16 bytes, reads three files from the disk, and
  // writes 16 bytes to `next` (read by thread `to`). Returns when the write was made.
  auto relay = [&](Tid tid, uint64_t us, int object, int next, Tid to) {
    t += fmt::format(
        "{0}us {1} switch_in\n{0}us {1} syscall_exit name=read ret=16\n"
        "{0}us {1} recv object={2} offset=0 len=16 peer=0 fd=3\n",
        us, tid, object);
    us += 100;
    for (int i = 0; i < 3; ++i, us += 1100)
      t += fmt::format(
          "{0}us {1} syscall_enter name=read fd=5 resource={2} count=4096\n"
          "{0}us {1} switch_out state=D\n{3}us {1} switch_in\n"
          "{3}us {1} syscall_exit name=read ret=4096\n",
          us, tid, 0x5038d + i + 16 * tid, us + 1000);
    t += fmt::format(
        "{0}us {1} syscall_enter name=write fd=4 resource={2} count=16\n"
        "{0}us {1} send object={2} offset=0 len=16 peer={3} fd=4\n"
        "{0}us {1} wakeup target={3}\n{0}us {1} syscall_exit name=write ret=16\n",
        us, tid, next, to);
    return us;
  };
  uint64_t us = relay(200, 1001100, 7, 8, 300);
  us = relay(300, us + 100, 8, 9, 400);
  t += fmt::format(
      "{0}us 400 switch_in\n{0}us 400 syscall_exit name=read ret=16\n"
      "{0}us 400 recv object=9 offset=0 len=16 peer=300 fd=3\n",
      us + 100);
  check_relay_path(build_with_stdlib(t));
}

TEST_CASE("a named thread's one wait in its loop is its hang, not an idle turn") {
  // cw-victim starts, then polls its pipe once (no timeout) until cw-ender's write at
  // 600 ms, and exits: it waits for its input, once; no loop of turns.
  Built b = build_with_stdlib(kProcesses + kPollOnceUntilWrite + R"(602ms 100 exit code=0
602ms 200 exit code=0
)");

  Diagnosis d = diagnose_named(b, "cw-victim");
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(d.hang.profile.longest_block_ns >= 590000000);
  CHECK(causes(b, d) == "cw-ender LongWait");
}

TEST_CASE("a retried wait whose slices alternate with other calls is one LongWait too") {
  // Two thirds of its calls are others: no yield loop of one call, and the profile's blocked
  // time says LongWait at once, with the longest slice 20 ms. Its time without a response is
  // the logical wait's, 600 ms, not that slice's.
  Built b = build_with_stdlib(poll_slices("fcntl"));
  SymptomRequest named;
  named.thread_name = "cw-victim";
  std::string why;
  const std::vector<HangCandidate> c =
      list_hangs(b.trace, b.graph(), ThreadEvents(b.trace), named, &why);
  auto victim =
      std::find_if(c.begin(), c.end(), [](const HangCandidate& h) { return h.hang.tid == 100; });
  REQUIRE(victim != c.end());
  CHECK(victim->hang.kind == HangKind::LongWait);
  CHECK(victim->score_ns >= 590000000);
  Diagnosis d = diagnose_named(b, "cw-victim");
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
}

TEST_CASE("a named thread's wait retried after timeouts is its hang, though its loop goes on") {
  // cw-victim polls its two pipes with a 20 ms timeout until cw-ender writes at 600 ms
  // (the slices of poll_slices), reads, and polls again for its second input, which
  // cw-bystander sends at 700 ms. It waits for its inputs, the first for 600 ms.
  std::string t = poll_slices();
  t.erase(t.find("602ms 100 exit code=0\n"), std::string("602ms 100 exit code=0\n").size());
  t += R"(602ms 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=20000000
602ms 100 switch_out state=S
622ms 100 switch_in
622ms 100 syscall_exit name=poll ret=0
622ms 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=20000000
622ms 100 switch_out state=S
700ms 300 syscall_enter name=write fd=6 count=16
700ms 300 send object=11 offset=0 len=16 peer=100 fd=6
700ms 300 wakeup target=100
700ms 300 syscall_exit name=write ret=16
701ms 100 switch_in
701ms 100 syscall_exit name=poll ret=1
701ms 100 syscall_enter name=read fd=7 count=16
701ms 100 recv object=11 offset=0 len=16 peer=300 fd=7
701ms 100 syscall_exit name=read ret=16
702ms 100 exit code=0
)";
  Built b = build_with_stdlib(t);
  Diagnosis d = diagnose_named(b, "cw-victim");
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(d.hang.end_ns - d.hang.start_ns >= 590000000);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
}

TEST_CASE(
    "a named thread that waits for its inputs one after the other: each wait is no idle turn") {
  // cw-victim polls its first pipe (no timeout) until cw-ender writes at 600 ms, then waits
  // in epoll for its second input, which cw-bystander sends at 700 ms, and exits. It never
  // waits again for what woke it: no event loop.
  Built b = build_with_stdlib(
      kProcesses + kPollOnceUntilWrite +
      R"(602ms 100 syscall_enter name=epoll_wait fd=8 resource=12 count=1 timeout_ns=-1
602ms 100 switch_out state=S
700ms 300 syscall_enter name=write fd=6 count=16
700ms 300 send object=11 offset=0 len=16 peer=100 fd=6
700ms 300 wakeup target=100
700ms 300 syscall_exit name=write ret=16
701ms 100 switch_in
701ms 100 syscall_exit name=epoll_wait ret=1
701ms 100 syscall_enter name=read fd=7 count=16
701ms 100 recv object=11 offset=0 len=16 peer=300 fd=7
701ms 100 syscall_exit name=read ret=16
702ms 100 exit code=0
702ms 200 exit code=0
)");
  Diagnosis d = diagnose_named(b, "cw-victim");
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(d.hang.profile.longest_block_ns >= 590000000);
  CHECK(causes(b, d) == "cw-ender LongWait");
}

TEST_CASE("a device waited on turn after turn is the writer's LongWait, and the path leaves it") {
  // cw-victim reads its pipe while cw-ender writes a record and fdatasyncs it, 20 times,
  // each sync 40 ms in uninterruptible sleep (state D) ended by the disk's interrupt; then
  // it writes to the pipe. No one block is long: the device's time is the wait.
  std::string t = kProcesses +
                  "1ms 100 syscall_enter name=read fd=3 resource=7 count=16\n"
                  "1ms 100 switch_out state=S\n";
  uint64_t us = 2000;
  for (int i = 0; i < 20; ++i, us += 41000) {
    t += fmt::format("{}us 200 syscall_enter name=pwrite64 fd=5 count=4096\n", us);
    t += fmt::format("{}us 200 syscall_exit name=pwrite64 ret=4096\n", us + 100);
    t += fmt::format("{}us 200 syscall_enter name=fdatasync fd=5\n", us + 200);
    t += fmt::format("{}us 200 switch_out state=D\n", us + 300);
    t += fmt::format("{}us 300 wakeup target=200 interrupt=1\n", us + 40300);
    t += fmt::format("{}us 200 switch_in\n{}us 200 syscall_exit name=fdatasync ret=0\n", us + 40400,
                     us + 40500);
  }
  t += fmt::format(R"({}us 200 syscall_enter name=write fd=4 resource=7 count=16
{}us 200 send object=9 offset=0 len=16 peer=100 fd=4
{}us 200 wakeup target=100
{}us 200 syscall_exit name=write ret=16
{}us 100 switch_in
{}us 100 syscall_exit name=read ret=16
{}us 100 recv object=9 offset=0 len=16 peer=200 fd=3
)",
                   us, us + 10, us + 20, us + 30, us + 100, us + 110, us + 120);
  Built b = build_with_stdlib(t);
  Diagnosis d = diagnose_at(b, 100, 500);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
  REQUIRE(!d.root_causes.empty());
  CHECK(d.root_causes[0].what.find("uninterruptible") != std::string::npos);
  CHECK(d.root_causes[0].what.find("fdatasync") != std::string::npos);
}

TEST_CASE("a wait its own timer ended has nothing behind it: its joiner is not blamed") {
  // cw-ender's worker thread (200) reads its own timerfd (armed for 1 s), then writes to
  // cw-victim and exits; the process's main thread (250) joins it. The timer's interrupt
  // lands on cw-bystander. The worker waited for time: the diagnosis stops there and does
  // not go on to blame the main thread that waited for the worker.
  Built b = build_with_stdlib(kProcesses + R"(thread 250 pid=200 comm=cw-main
0ms 250 syscall_enter name=futex resource=77 value=200
0ms 250 switch_out state=S
1ms 200 syscall_enter name=timerfd_settime fd=6
1ms 200 syscall_exit name=timerfd_settime ret=0
1ms 200 syscall_enter name=read fd=6 resource=55 count=8
1ms 200 switch_out state=S
2ms 100 syscall_enter name=read fd=3 resource=7 count=16
2ms 100 switch_out state=S
1001ms 300 wakeup target=200 interrupt=1 cause=200
1001ms 200 switch_in
1001ms 200 syscall_exit name=read ret=8
1001ms 200 syscall_enter name=write fd=4 resource=7 count=16
1001ms 200 send object=9 offset=0 len=16 peer=100 fd=4
1001ms 200 wakeup target=100
1001ms 200 syscall_exit name=write ret=16
1002ms 100 switch_in
1002ms 100 syscall_exit name=read ret=16
1002ms 100 recv object=9 offset=0 len=16 peer=200 fd=3
1003ms 200 exit code=0
1003ms 200 wakeup target=250
1003ms 250 switch_in
1003ms 250 syscall_exit name=futex ret=0
)");
  Diagnosis d = diagnose_at(b, 100, 500);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
  CHECK(std::any_of(d.notes.begin(), d.notes.end(), [](const std::string& n) {
    return n.find("a timer it had armed itself") != std::string::npos;
  }));
}

TEST_CASE("a wait its own timerfd ended: bytes it drained afterwards did not end it") {
  // Three threads of one process (so the messages' peers are not disjoint and one segment
  // holds the wait and what follows). cw-ender arms a timerfd and reads it; the timer fires
  // on an idle CPU (no wake-up recorded: the firing shows as the read returns). cw-writer
  // began a large write into cw-ender's pipe after that wait began and blocked on the full
  // pipe. Woken by its timer, cw-ender writes to cw-victim, then drains the pipe, waking
  // cw-writer. The writer's bytes came to cw-ender after its wait, not into it: nothing is
  // behind the ender, and the writer is not blamed.
  Built b = build_with_stdlib(R"(process 200 comm=cw-ender
thread 200 pid=200 comm=cw-ender
thread 150 pid=200 comm=cw-victim
thread 250 pid=200 comm=cw-writer
1ms 200 syscall_enter name=timerfd_settime fd=6
1ms 200 timer_arm timer=55 expires_ns=1001000000
1ms 200 syscall_exit name=timerfd_settime ret=0
1ms 200 syscall_enter name=read fd=6 resource=55 count=8
1ms 200 switch_out state=S
2ms 150 syscall_enter name=read fd=3 resource=9 count=16
2ms 150 switch_out state=S
5ms 250 syscall_enter name=write fd=7 resource=8 count=262144
5ms 250 switch_out state=S
1001ms 200 switch_in
1001ms 200 syscall_exit name=read ret=8
1001ms 200 timer_fire timer=55
1001ms 200 syscall_enter name=write fd=4 resource=9 count=16
1001ms 200 wakeup target=150
1001ms 200 syscall_exit name=write ret=16
1001ms 200 send object=9 offset=0 len=16 peer=-1 fd=4
1002ms 200 syscall_enter name=read fd=5 resource=8 count=262144
1002ms 200 wakeup target=250
1002ms 200 syscall_exit name=read ret=262144
1002ms 200 recv object=8 offset=0 len=262144 peer=-1 fd=5
1002ms 150 switch_in
1002ms 150 syscall_exit name=read ret=16
1002ms 150 recv object=9 offset=0 len=16 peer=-1 fd=3
1003ms 250 switch_in
1003ms 250 syscall_exit name=write ret=262144
1003ms 250 send object=8 offset=0 len=262144 peer=-1 fd=7
1004ms 200 exit code=0
1004ms 250 exit code=0
)");
  Diagnosis d = diagnose_at(b, 150, 500);
  CHECK(d.hang.tid == 150);
  CHECK(causes(b, d) == "cw-ender LongWait");
  CHECK(path(b, d) == "cw-ender → cw-victim");
  REQUIRE_FALSE(d.root_causes.empty());
  CHECK(d.root_causes.back().what.find("cw-writer") == std::string::npos);
}

TEST_CASE("a timer another thread armed: its owner ended the wait, not the thread that ran") {
  // cw-ender sets a POSIX timer (timer_create with SIGEV_THREAD_ID) that signals cw-victim,
  // which waits for the signal in sigwaitinfo. The expiry raises the signal and the wake-up
  // in an interrupt that lands on cw-bystander; the recorder names cw-ender, the timer's
  // owner, as their cause.
  Built b = build_with_stdlib(kProcesses + R"(
1ms 200 syscall_enter name=timer_settime
1ms 200 syscall_exit name=timer_settime ret=0
1ms 200 syscall_enter name=pause
1ms 200 switch_out state=S
2ms 100 syscall_enter name=rt_sigtimedwait
2ms 100 switch_out state=S
300ms 300 syscall_enter name=getpid
300ms 300 syscall_exit name=getpid ret=300
801ms 300 signal_send target=100 sig=34 cause=200
801ms 300 wakeup target=100 interrupt=1 cause=200
802ms 100 switch_in
802ms 100 syscall_exit name=rt_sigtimedwait ret=34
803ms 100 exit code=0
)");
  Diagnosis d = diagnose_at(b, 100, 500);
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(causes(b, d).find("cw-ender") != std::string::npos);
  CHECK(path(b, d).find("cw-ender") != std::string::npos);
  CHECK(causes(b, d).find("cw-bystander") == std::string::npos);
  CHECK(path(b, d).find("cw-bystander") == std::string::npos);
}

TEST_CASE("a process's own alarm: it is its own cause, never the thread the interrupt hit") {
  // cw-victim calls alarm() and pauses; the alarm's SIGALRM and wake-up are raised in an
  // interrupt on cw-bystander, with cw-victim itself as their cause.
  Built b = build_with_stdlib(kProcesses + R"(
1ms 100 syscall_enter name=alarm
1ms 100 syscall_exit name=alarm ret=0
2ms 100 syscall_enter name=pause
2ms 100 switch_out state=S
300ms 300 syscall_enter name=getpid
300ms 300 syscall_exit name=getpid ret=300
801ms 300 signal_send target=100 sig=14 cause=100
801ms 300 wakeup target=100 interrupt=1 cause=100
802ms 100 switch_in
802ms 100 signal_deliver sig=14
802ms 100 syscall_exit name=pause ret=-4
803ms 100 exit code=0
)");
  Diagnosis d = diagnose_at(b, 100, 500);
  CHECK(d.hang.tid == 100);
  REQUIRE(!d.root_causes.empty());
  CHECK(causes(b, d).find("cw-victim") != std::string::npos);
  CHECK(causes(b, d).find("cw-bystander") == std::string::npos);
  CHECK(path(b, d).find("cw-bystander") == std::string::npos);
}

// cw-reaper forks cw-job (sleeps 1 s) and cw-quick (exits at 4 ms), then polls for them
// as GNU parallel and some shells do: wait4(-1, WNOHANG), a 50 ms sleep (SLEEP: perl's
// select on no descriptors, or a nanosleep), until wait4 returns cw-job's pid.
std::string reaper_polling(const std::string& sleep) {
  std::string t =
      "process 100 comm=cw-reaper\nthread 100 pid=100 comm=cw-reaper\n"
      "process 200 comm=cw-job ppid=100\nthread 200 pid=200 comm=cw-job\n"
      "process 300 comm=cw-quick ppid=100\nthread 300 pid=300 comm=cw-quick\n"
      "0ms 100 switch_in\n1ms 100 fork child=200 child_pid=200\n1ms 200 thread_start parent=100\n"
      "1ms 100 fork child=300 child_pid=300\n1ms 300 thread_start parent=100\n"
      "2ms 200 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=1000000000\n"
      "2ms 200 switch_out state=S\n3ms 300 syscall_enter name=getpid\n"
      "3ms 300 syscall_exit name=getpid ret=300\n4ms 300 exit code=0\n4ms 300 switch_out state=Z\n";
  for (int ms = 10; ms <= 1010; ms += 50) {
    if (ms == 1010)
      t += "1002ms 200 switch_in\n1002ms 200 syscall_exit name=clock_nanosleep ret=0\n"
           "1003ms 200 exit code=0\n1003ms 200 switch_out state=Z\n";
    t += fmt::format(
        "{0}ms 100 syscall_enter name=wait4 fd=-1 resource=0xffffffffffffffff\n"
        "{0}ms 100 syscall_exit name=wait4 ret={1}\n",
        ms,
        ms == 10     ? 300
        : ms == 1010 ? 200
                     : 0);
    if (ms == 1010) break;
    t += fmt::format(
        "{0}.1ms 100 syscall_enter name={1} fd=-1 timeout_ns=50000000\n"
        "{0}.1ms 100 switch_out state=S\n{2}ms 100 switch_in\n"
        "{2}ms 100 syscall_exit name={1} ret=0\n",
        ms, sleep, ms + 50);
  }
  return t + "1011ms 100 exit code=0\n1011ms 100 switch_out state=X\n";
}

TEST_CASE("a parent polling wait4 WNOHANG between timed sleeps: the child it reaped is the cause") {
  for (const char* sleep : {"pselect6", "clock_nanosleep"}) {
    CAPTURE(sleep);
    Built b = build_with_stdlib(reaper_polling(sleep));
    Diagnosis d = diagnose_named(b, "cw-reaper");
    CHECK(d.hang.tid == 100);
    CHECK(d.hang.kind == HangKind::RepeatedYield);
    CHECK(d.hang.start_ns == 10'100'000);  // the first sleep; the reap of cw-quick is before
    CHECK(d.hang.end_ns == 960'100'000);   // the last turn, whose wait4 reaps cw-job, after
    CHECK_FALSE(d.yield_without_flag);
    CHECK(causes(b, d) == "cw-job LongWait, cw-reaper RepeatedYield");
    CHECK(d.root_causes[0].what.rfind("blocked 1000.0 ms in clock_nanosleep", 0) == 0);
    CHECK(path(b, d) == "cw-job → cw-reaper");
  }
}

TEST_CASE("a poll on a set is the same wait whether or not its set could be read") {
  // bash's `read -t` polls one FIFO in pselect6 with 13 descriptors' room: the recorder
  // names the descriptor when it read the set and not when the set's page was not there.
  const Trace t = testing::load_trace(
      "process 100 comm=bash\nthread 100 pid=100 comm=bash\n"
      "1ms 100 syscall_enter name=pselect6 fd=-1 count=13 timeout_ns=50000000\n"
      "2ms 100 syscall_enter name=pselect6 fd=12 count=13 timeout_ns=-1\n"
      "3ms 100 syscall_enter name=pselect6 fd=-1 count=14 timeout_ns=50000000\n"
      "4ms 100 syscall_enter name=poll fd=12 count=13\n"
      "5ms 100 syscall_enter name=read fd=3\n"
      "6ms 100 syscall_enter name=read fd=4\n");
  CHECK(same_wait(t, 0, 1));
  CHECK(same_wait(t, 1, 0));
  CHECK_FALSE(same_wait(t, 0, 2));  // another number of descriptors
  CHECK_FALSE(same_wait(t, 1, 3));  // another call
  CHECK_FALSE(same_wait(t, 4, 5));  // reads of two descriptors
  CHECK(same_wait(t, 4, 4));
}

TEST_CASE("a thread's own interval timer ended its pause: nothing behind it, not its joiner") {
  // cw-app's main thread 100 joins its thread cw-alarm 101 (a futex on 101's tid). cw-alarm
  // arms an interval timer, pauses 1.2 s until its SIGALRM, then answers cw-sink 200 on a
  // pipe. The signal is sent to the process (target 100, the process id) on behalf of the
  // timer's owner (cause 101) and delivered to cw-alarm, with no wake-up recorded. cw-sink's
  // hang is cw-alarm's pause; the main thread only waited for cw-alarm to end.
  Built b = build_with_stdlib(
      "process 100 comm=cw-app\nthread 100 pid=100 comm=cw-app\n"
      "thread 101 pid=100 comm=cw-alarm\n"
      "process 200 comm=cw-sink\nthread 200 pid=200 comm=cw-sink\n"
      "1ms 200 syscall_enter name=read fd=3 resource=0xffff888100d41f80\n"
      "1ms 200 switch_out state=S\n"
      "2ms 100 syscall_enter name=futex op=wait resource=0x7f0000001000 value=101\n"
      "2ms 100 switch_out state=S\n"
      "3ms 101 syscall_enter name=setitimer\n"
      "3ms 101 syscall_exit name=setitimer ret=0\n"
      "4ms 101 syscall_enter name=pause\n"
      "4ms 101 switch_out state=S\n"
      "1204ms 101 signal_send target=100 sig=14 cause=101\n"
      "1204ms 101 switch_in\n"
      "1204ms 101 signal_deliver sig=14\n"
      "1204ms 101 syscall_exit name=pause ret=-4\n"
      "1205ms 101 syscall_enter name=write fd=4 resource=0xffff888100d41f80\n"
      "1205ms 101 send object=0xffff888100d41f80 offset=0 len=1\n"
      "1205ms 101 wakeup target=200\n"
      "1205ms 101 syscall_exit name=write ret=1\n"
      "1206ms 101 exit code=0\n"
      "1206ms 101 wakeup target=100\n"
      "1206ms 101 switch_out state=X\n"
      "1207ms 200 switch_in\n"
      "1207ms 200 syscall_exit name=read ret=1\n"
      "1207ms 200 recv object=0xffff888100d41f80 offset=0 len=1\n"
      "1207ms 100 switch_in\n"
      "1207ms 100 syscall_exit name=futex ret=0\n");
  Diagnosis d = diagnose_named(b, "cw-sink");
  CHECK(d.hang.tid == 200);
  CHECK(causes(b, d) == "cw-alarm LongWait");
  CHECK(path(b, d) == "cw-alarm → cw-sink");
  CHECK(std::count_if(d.notes.begin(), d.notes.end(), [](const std::string& n) {
          return n.starts_with(
              "cw-alarm 101 (cw-app 100) waited 1200.0 ms for a timer it had armed itself");
        }) == 1);
}
}  // namespace
}  // namespace cw::engine
