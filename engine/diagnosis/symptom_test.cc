#include "engine/diagnosis/symptom.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::Built;

constexpr uint64_t kMs = 1'000'000;

// Like the stdlib: a blocking wait starts a segment; wake-ups are weak edges, stream
// messages strong ones.
const char* const kRules =
    "list blocking = [\"read\", \"clock_nanosleep\", \"epoll_wait\"]\n"
    "split wait.entry {\n"
    "  at syscall_enter\n"
    "  where name in blocking or (name == \"futex\" and op == \"wait\")\n"
    "  cut before\n"
    "  neighbour weak\n"
    "}\n"
    "link wakeup { from wakeup to switch_in join from.target == to.tid pick next }\n"
    "edge wakeup.weak { link wakeup strength weak }\n"
    "link stream { from send to recv join from.object == to.object pick overlap range offset, "
    "len }\n"
    "edge stream.strong { link stream strength strong }\n";

// Builds the graph; the split rules named in `loops` are marked `loop`.
Built build(const std::string& trace, const std::vector<std::string>& loops = {},
            const std::string& extra_rules = "") {
  Built b{testing::load_trace(trace), testing::load_rules(std::string(kRules) + extra_rules), {}};
  for (const std::string& id : loops) {
    bool found = false;
    for (auto& split : b.rules.splits) {
      if (split.origin.id == "t/" + id) split.loop = found = true;
    }
    REQUIRE_MESSAGE(found, "no split rule " << id);
  }
  b.result = build_graph(b.trace, b.rules);
  return b;
}

struct Found {
  std::optional<Hang> hang;
  std::string why;
};

Found find(const Built& b, SymptomRequest request = {}) {
  const ThreadEvents events(b.trace);
  Found f;
  f.hang = find_hang(b.trace, b.graph(), events, request, &f.why);
  return f;
}

SymptomRequest at(Tid tid, uint64_t ns) {
  SymptomRequest r;
  r.mode = SymptomRequest::Mode::ThreadAt;
  r.tid = tid;
  r.at_ns = ns;
  return r;
}

uint32_t segment_at(const Built& b, Tid tid, uint64_t ts) {
  const auto* t = b.graph().thread_segments(tid);
  REQUIRE(t);
  for (uint32_t s = t->begin; s < t->end; ++s)
    if (b.graph().segments[s].start_ns == ts) return s;
  FAIL("no segment of " << tid << " starts at " << ts);
  return kNoIndex;
}

// client 100 waits 900 ms in a read; busy 200 computes for 500 ms.
const std::string kWaitAndBusy =
    "process 100 comm=client\n"
    "thread 100 pid=100 comm=client\n"
    "process 200 comm=busy\n"
    "thread 200 pid=200 comm=busy\n"
    "thread 7 pid=0 comm=kworker kernel\n"
    "0 100 switch_in\n"
    "1ms 100 syscall_enter name=read fd=3\n"
    "1.1ms 100 switch_out state=S\n"
    "901ms 100 switch_in\n"
    "901.1ms 100 syscall_exit name=read ret=1\n"
    "901.5ms 100 exit\n"
    "902ms 100 switch_out state=X\n"
    "0 200 switch_in\n"
    "10ms 200 syscall_enter name=getpid\n"
    "10.1ms 200 syscall_exit name=getpid\n"
    "510ms 200 exit\n"
    "2s 7 switch_in\n";  // a kernel worker: the recording goes on after both exited

TEST_CASE("auto picks a main thread's long wait over a shorter computation") {
  const Built b = build(kWaitAndBusy);
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  const Hang& h = *f.hang;
  CHECK(h.tid == 100);
  CHECK(h.pid == 100);
  CHECK(h.kind == HangKind::LongWait);
  CHECK(h.start_ns == 1 * kMs);
  CHECK(h.end_ns == 902 * kMs);  // the thread's last event, after its exit
  CHECK(h.segment == segment_at(b, 100, 1 * kMs));
  CHECK(h.first_segment == h.segment);
  CHECK(h.last_segment == h.segment);
  CHECK(h.profile.longest_block_ns == 899'900'000);
  CHECK(h.chosen_by ==
        "auto: longest stretch of 2 main threads (client 100: "
        "0.901 s)");

  SUBCASE("the computation, asked for by thread and time, is LongRunning") {
    const Found g = find(b, at(200, 300 * kMs));
    REQUIRE_MESSAGE(g.hang, g.why);
    CHECK(g.hang->kind == HangKind::LongRunning);
    CHECK(g.hang->start_ns == 0);
    CHECK(g.hang->end_ns == 510 * kMs);
    CHECK(g.hang->chosen_by == "--hang 200@0.3");
  }
}

TEST_CASE("a thread preempted many times after its exit ended at its exit") {
  // On a loaded machine a process that exited is preempted dozens of times while the
  // kernel tears it down. Its life still ended there: not at the end of the recording, as
  // one long computation that would outlast the client's real wait.
  std::string trace =
      "process 100 comm=client\n"
      "thread 100 pid=100 comm=client\n"
      "process 200 comm=init\n"
      "thread 200 pid=200 comm=init\n"
      "thread 7 pid=0 comm=kworker kernel\n"
      "0 100 switch_in\n"
      "1ms 100 syscall_enter name=read fd=3\n"
      "1.1ms 100 switch_out state=S\n"
      "501ms 100 switch_in\n"
      "501.1ms 100 syscall_exit name=read ret=1\n"
      "502ms 100 exit\n"
      "502.1ms 100 switch_out state=X\n"
      "0 200 switch_in\n"
      "10ms 200 syscall_enter name=exit_group\n"
      "10ms 200 exit\n";
  for (int i = 0; i < 40; ++i) {
    const uint64_t t = 10 * kMs + 100'000 + i * 50'000;
    trace += std::to_string(t) + " 200 switch_out state=R\n";
    trace += std::to_string(t + 25'000) + " 200 switch_in\n";
  }
  trace += "13ms 200 switch_out state=X\n";
  trace += "2s 7 switch_in\n";  // the recording goes on long after
  const Built b = build(trace);
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->tid == 100);
  CHECK(f.hang->kind == HangKind::LongWait);
  const Found g = find(b, at(200, 5 * kMs));
  REQUIRE_MESSAGE(g.hang, g.why);
  CHECK(g.hang->end_ns == 13 * kMs);
}

TEST_CASE("two yield-loop segments in a row are one stretch, found in bounded time") {
  // Each of the spinner's two segments (cut at its reads) is a yield loop of 20 getpid
  // calls: the second's key equals the first's. (Merging them once never advanced past the
  // first yielding segment: the search did not end.)
  std::string trace =
      "process 100 comm=spinner\n"
      "thread 100 pid=100 comm=spinner\n"
      "0 100 switch_in\n";
  for (int seg = 0; seg < 2; ++seg) {
    const uint64_t base = seg * 400 * kMs;
    trace += std::to_string(base + kMs) + " 100 syscall_enter name=read fd=3\n";
    trace += std::to_string(base + kMs + 1000) + " 100 syscall_exit name=read ret=1\n";
    for (int k = 0; k < 20; ++k) {
      const uint64_t t = base + 2 * kMs + k * 19 * kMs;
      trace += std::to_string(t) + " 100 syscall_enter name=getpid\n";
      trace += std::to_string(t + 1000) + " 100 syscall_exit name=getpid ret=100\n";
    }
  }
  trace += "800ms 100 exit\n";
  const Built b = build(trace);
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->tid == 100);
  CHECK(f.hang->first_segment != f.hang->last_segment);
}

TEST_CASE("a run of 1 ms sleeps that no other thread caused is one RepeatedYield stretch") {
  std::string trace =
      "process 100 comm=spinner\n"
      "thread 100 pid=100 comm=spinner\n"
      "thread 101 pid=100 comm=setter\n"
      "0 100 switch_in\n"
      "0 101 switch_in\n"
      "1ms 101 syscall_enter name=clock_nanosleep\n"
      "1ms 101 switch_out state=S\n";
  // 20 sleeps of 1 ms from 10 ms on; each sleep starts a segment.
  for (int i = 0; i < 20; ++i) {
    const uint64_t t = (10 + 2 * i) * kMs;
    trace += std::to_string(t) + " 100 syscall_enter name=clock_nanosleep\n";
    trace += std::to_string(t + 1000) + " 100 switch_out state=S\n";
    trace += std::to_string(t + kMs) + " 101 wakeup target=100\n";  // a weak edge
    trace += std::to_string(t + kMs + 1000) + " 100 switch_in\n";
    trace += std::to_string(t + kMs + 2000) + " 100 syscall_exit name=clock_nanosleep\n";
  }
  trace += "60ms 100 exit\n";
  const Built b = build(trace);
  REQUIRE(testing::segments(b, 100) == 21);
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  const Hang& h = *f.hang;
  CHECK(h.tid == 100);
  CHECK(h.kind == HangKind::RepeatedYield);
  CHECK(h.start_ns == 10 * kMs);
  CHECK(h.end_ns == 60 * kMs);
  CHECK(h.first_segment == segment_at(b, 100, 10 * kMs));
  CHECK(h.last_segment == segment_at(b, 100, 48 * kMs));
  CHECK(h.segment == h.first_segment);
  CHECK(h.profile.syscalls == 20);

  SUBCASE("a segment another thread strongly caused breaks the run") {
    std::string with_message = trace;
    with_message += "15.4ms 101 send object=9 offset=0 len=1\n";
    with_message += "15.5ms 100 recv object=9 offset=0 len=1\n";  // in the third sleep
    const Built c = build(with_message);
    const Found g = find(c);
    REQUIRE_MESSAGE(g.hang, g.why);
    CHECK(g.hang->start_ns == 16 * kMs);  // the 17 sleeps after it; the 2 before are too few
    CHECK(g.hang->end_ns == 60 * kMs);
    CHECK(g.hang->kind == HangKind::RepeatedYield);
  }
  SUBCASE("asking for a moment inside the run gives the whole run") {
    const Found g = find(b, at(100, 31 * kMs));
    REQUIRE_MESSAGE(g.hang, g.why);
    CHECK(g.hang->start_ns == 10 * kMs);
    CHECK(g.hang->end_ns == 60 * kMs);
  }
}

TEST_CASE("fewer than 8 sleeps in a row stay separate stretches") {
  std::string trace =
      "process 100 comm=app\n"
      "thread 100 pid=100 comm=app\n"
      "0 100 switch_in\n";
  for (int i = 0; i < 5; ++i) {
    const uint64_t t = (10 + 2 * i) * kMs;
    trace += std::to_string(t) + " 100 syscall_enter name=clock_nanosleep\n";
    trace += std::to_string(t + 1000) + " 100 switch_out state=S\n";
    trace += std::to_string(t + kMs + 1000) + " 100 switch_in\n";
    trace += std::to_string(t + kMs + 2000) + " 100 syscall_exit name=clock_nanosleep\n";
  }
  trace += "20ms 100 exit\n";
  const Built b = build(trace);
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->start_ns == 0);  // the 10 ms before the first sleep is the longest
  CHECK(f.hang->end_ns == 10 * kMs);
  CHECK(f.hang->kind == HangKind::LongRunning);
}

TEST_CASE("many sched_yield-like calls in one segment are RepeatedYield") {
  std::string trace =
      "process 100 comm=spinner\n"
      "thread 100 pid=100 comm=spinner\n"
      "0 100 switch_in\n";
  for (int i = 0; i < 40; ++i) {
    const uint64_t t = (1 + 2 * i) * kMs;
    trace += std::to_string(t) + " 100 syscall_enter name=sched_yield\n";
    trace += std::to_string(t + 1000) + " 100 syscall_exit name=sched_yield\n";
  }
  trace += "100ms 100 exit\n";
  const Built b = build(trace);
  REQUIRE(testing::segments(b, 100) == 1);
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->kind == HangKind::RepeatedYield);
  CHECK(f.hang->start_ns == 0);
  CHECK(f.hang->end_ns == 100 * kMs);
  CHECK(f.hang->profile.by_name.at(0).count == 40);
}

// worker 101 loops on epoll_wait: idle 2 s, then 300 ms of work, then idle until the
// recording ends at 3 s. The main thread exits after 50 ms; kworker 5 is a kernel thread.
const std::string kLoopThread =
    "process 100 comm=server\n"
    "thread 100 pid=100 comm=server\n"
    "thread 101 pid=100 comm=worker\n"
    "process 5 comm=kworker\n"
    "thread 5 pid=5 comm=kworker kernel\n"
    "0 5 switch_in\n"
    "0 100 switch_in\n"
    "50ms 100 exit\n"
    "0 101 switch_in\n"
    "1ms 101 syscall_enter name=epoll_wait\n"
    "1.1ms 101 switch_out state=S\n"
    "2000ms 101 switch_in\n"
    "2000.1ms 101 syscall_exit name=epoll_wait ret=1\n"
    "2300ms 101 syscall_enter name=epoll_wait\n"
    "2300.1ms 101 switch_out state=S\n"
    "3000ms 5 switch_out state=S\n";

TEST_CASE("a loop thread's idle waits are not part of any stretch") {
  const Built b = build(kLoopThread, {"wait.entry"});
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  const Hang& h = *f.hang;
  CHECK(h.tid == 101);
  CHECK(h.start_ns == 2'000'100'000);  // when the loop's wait returned
  CHECK(h.end_ns == 2300 * kMs);       // the next loop cut
  CHECK(h.kind == HangKind::LongRunning);
  CHECK(h.segment == segment_at(b, 101, 1 * kMs));
  CHECK(h.chosen_by ==
        "auto: longest stretch of 1 main thread and 1 event-loop thread (worker 101: "
        "0.300 s)");

  SUBCASE("without the loop rule the worker is no candidate: the main thread is taken") {
    const Built plain = build(kLoopThread);
    const Found g = find(plain);
    REQUIRE_MESSAGE(g.hang, g.why);
    CHECK(g.hang->tid == 100);
    CHECK(g.hang->chosen_by == "auto: longest stretch of 1 main thread (server 100: 0.050 s)");
  }
  SUBCASE("asked for during an idle wait, the wait's segment is the stretch") {
    const Found g = find(b, at(101, 1000 * kMs));
    REQUIRE_MESSAGE(g.hang, g.why);
    CHECK(g.hang->start_ns == 1 * kMs);
    CHECK(g.hang->kind == HangKind::LongWait);
  }
}

TEST_CASE("a batch rule's items are loop cuts, split rules only when marked loop") {
  const Built b = build(
      "process 100 comm=server\n"
      "thread 100 pid=100 comm=server\n"
      "0 100 call_enter fn=serve\n"
      "1ms 100 recv object=1 offset=0 len=4\n"
      "2ms 100 syscall_enter name=read\n"
      "3ms 100 syscall_exit name=read\n"
      "4ms 100 recv object=1 offset=4 len=4\n"
      "5ms 100 call_exit fn=serve\n",
      {}, "batch serve.items { within call where fn == \"serve\" item recv }\n");
  CHECK(!is_loop_cut(b.graph(), segment_at(b, 100, 0)));        // thread start
  CHECK(is_loop_cut(b.graph(), segment_at(b, 100, 1 * kMs)));   // batch item
  CHECK(!is_loop_cut(b.graph(), segment_at(b, 100, 2 * kMs)));  // split, not a loop
  CHECK(is_loop_cut(b.graph(), segment_at(b, 100, 4 * kMs)));
}

// The recorder 50 ran `sh -c ./app` (sh 100, app 200); other 300 was not recorded. Each
// waits in one read or wait4; the recorder and other for longer than sh.
const std::string kCommand =
    "process 50 comm=causeway\n"
    "thread 50 pid=50 comm=causeway\n"
    "process 100 comm=sh ppid=50\n"
    "thread 100 pid=100 comm=sh\n"
    "process 200 comm=app ppid=100\n"
    "thread 200 pid=200 comm=app\n"
    "process 300 comm=other ppid=1\n"
    "thread 300 pid=300 comm=other\n"
    "0 50 marker text=\"causeway: command 100 sh -c ./app\"\n"
    "0 50 syscall_enter name=wait4\n"
    "0 100 syscall_enter name=wait4\n"
    "1ms 200 syscall_enter name=read\n"
    "400ms 200 syscall_exit name=read\n"
    "401ms 200 exit\n"
    "1s 100 syscall_exit name=wait4\n"
    "1001ms 100 exit\n"
    "0 300 syscall_enter name=read\n"
    "2s 300 syscall_exit name=read\n"
    "2s 300 exit\n"
    "2.1s 50 syscall_exit name=wait4\n"
    "2.1s 50 exit\n";

TEST_CASE("the recorded command's marker restricts candidates to it and its descendants") {
  const Built b = build(kCommand);
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  // sh's wait4 is no blocking wait for these rules: one 1.001 s segment, the longest.
  CHECK(f.hang->tid == 100);
  CHECK(f.hang->chosen_by ==
        "auto: longest stretch of 2 main threads of process 100 and its "
        "descendants (the recorded command) (sh 100: 1.001 s)");

  SUBCASE("a command with no main thread in the trace is an error") {
    Built c = build(kCommand);
    c.trace.values[c.trace.events[0].values] = c.trace.strings.intern("causeway: command 77 x");
    c.result = build_graph(c.trace, c.rules);
    const Found g = find(c);
    CHECK(!g.hang);
    CHECK(g.why ==
          "no main thread or event-loop thread of process 77 and its descendants (the recorded "
          "command) in the trace");
  }
}

TEST_CASE("a marker chooses the stretch that holds it") {
  const Built b = build(
      "process 100 comm=app\n"
      "thread 100 pid=100 comm=app\n"
      "process 900 comm=mark\n"
      "thread 900 pid=900 comm=mark\n"
      "0 100 switch_in\n"
      "0 100 syscall_enter name=read\n"
      "0 100 switch_out state=S\n"
      "1000ms 100 switch_in\n"
      "1000ms 100 syscall_exit name=read\n"
      "1000.5ms 100 syscall_enter name=read\n"
      "1000.5ms 100 switch_out state=S\n"
      "1300ms 100 switch_in\n"
      "1300.5ms 100 syscall_exit name=read\n"
      "1301.5ms 100 exit\n"
      "1100ms 900 marker text=\"slow click\"\n"
      "1100.1ms 900 exit\n");
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->tid == 100);
  CHECK(f.hang->start_ns == 1'000'500'000);
  CHECK(f.hang->kind == HangKind::LongWait);
  CHECK(f.hang->chosen_by ==
        "marker \"slow click\" at 1.100 s: longest stretch holding it of 2 main threads "
        "(app 100: 0.301 s)");
}

// The recorded command sh 100 started: a client 300 that asked server 500 and waited 1 s
// for the reply; a sleeper 200 that slept 3 s on nothing; a helper 400 that sat in one
// recvmsg from its start to the end of the recording and did nothing else.
const std::string kByDesign =
    "process 100 comm=sh ppid=50\n"
    "thread 100 pid=100 comm=sh\n"
    "process 200 comm=sleeper ppid=100\n"
    "thread 200 pid=200 comm=sleeper\n"
    "process 300 comm=client ppid=100\n"
    "thread 300 pid=300 comm=client\n"
    "process 400 comm=helper ppid=100\n"
    "thread 400 pid=400 comm=helper\n"
    "process 500 comm=server ppid=100\n"
    "thread 500 pid=500 comm=server\n"
    "thread 7 pid=0 comm=kworker kernel\n"
    "0 100 marker text=\"causeway: command 100 sh\"\n"
    "0 100 switch_in\n"
    "1ms 100 exit\n"
    "0 200 switch_in\n"
    "1ms 200 syscall_enter name=clock_nanosleep fd=-1\n"
    "1.1ms 200 switch_out state=S\n"
    "3001ms 200 switch_in\n"
    "3001.1ms 200 syscall_exit name=clock_nanosleep\n"
    "3001.5ms 200 exit\n"
    "0 300 switch_in\n"
    "1ms 300 send object=8 offset=0 len=4 fd=3\n"
    "1.5ms 300 syscall_enter name=read fd=3\n"
    "1.6ms 300 switch_out state=S\n"
    "1001.1ms 300 switch_in\n"
    "1001.2ms 300 recv object=9 offset=0 len=4 fd=3\n"
    "1001.3ms 300 syscall_exit name=read ret=4\n"
    "1002ms 300 exit\n"
    "0 400 switch_in\n"
    "0.5ms 400 syscall_enter name=recvmsg fd=5\n"
    "0.6ms 400 switch_out state=S\n"
    "0 500 switch_in\n"
    "2ms 500 recv object=8 offset=0 len=4 fd=4\n"
    "2.5ms 500 syscall_enter name=epoll_wait fd=7\n"
    "2.6ms 500 switch_out state=S\n"
    "1000ms 500 switch_in\n"
    "1000.1ms 500 syscall_exit name=epoll_wait ret=1\n"
    "1001ms 500 send object=9 offset=0 len=4 fd=4\n"
    "1001ms 500 wakeup target=300\n"
    "1002ms 500 exit\n"
    "3500ms 7 switch_in\n";  // a kernel worker: the recording goes on

TEST_CASE("auto ranks threads that wait by design below a thread that stopped responding") {
  const Built b = build(kByDesign);
  const Found f = find(b);
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->tid == 300);
  CHECK(f.hang->kind == HangKind::LongWait);
  CHECK(f.hang->chosen_by ==
        "auto: longest stretch of 5 main threads of process 100 and its "
        "descendants (the recorded command) (client 300: 1.000 s); ranked above 2 longer "
        "threads that wait by design (helper 400: idle all its life: it never returned from "
        "recvmsg and did no work outside it, …)");

  std::string why;
  const ThreadEvents events(b.trace);
  const auto list = list_hangs(b.trace, b.graph(), events, {}, &why);
  REQUIRE(list.size() == 5);
  CHECK(list[0].hang.tid == 300);
  CHECK(list[0].by_design.empty());
  CHECK(list[0].woken_by == 500);  // the reply's message
  CHECK(list[0].score_ns == 999'500'000);
  CHECK(list[0].hang_arg == "300@0.0015");
  CHECK(list[0].hang.chosen_by == "--hang 300@0.0015");
  CHECK(list[1].hang.tid == 500);
  CHECK(list[1].by_design.empty());  // an epoll_wait on a descriptor: not a sleep
  CHECK(list[2].hang.tid == 100);    // sh ran 1 ms: short, but it did not wait by design
  CHECK(list[2].by_design.empty());
  CHECK(list[3].hang.tid == 400);
  CHECK(list[3].by_design ==
        "idle all its life: it never returned from recvmsg and did no work outside it");
  CHECK(list[4].hang.tid == 200);
  CHECK(list[4].by_design ==
        "a timed sleep: clock_nanosleep on no descriptor or object, ended by no other thread");

  SUBCASE("a sleep another thread ended is no sleep by design") {
    const Built c = build(kByDesign + "1001.5ms 500 wakeup target=200\n");
    const ThreadEvents ev(c.trace);
    const auto l = list_hangs(c.trace, c.graph(), ev, {}, &why);
    REQUIRE(!l.empty());
    CHECK(l[0].hang.tid == 200);
    CHECK(l[0].woken_by == 500);
  }
  SUBCASE("a helper that told another thread something before its wait was working") {
    const Built c = build(kByDesign +
                          "0.2ms 400 send object=8 offset=4 len=4 fd=3\n"
                          "3ms 500 recv object=8 offset=4 len=4 fd=4\n");
    const Found g = find(c);
    REQUIRE_MESSAGE(g.hang, g.why);
    CHECK(g.hang->tid == 400);
  }
}

TEST_CASE("auto finds no hang when the best candidate is under min_hang_ns") {
  const Built b = build(kWaitAndBusy);  // client 100 waits 899.9 ms, busy 200 runs 510 ms
  SymptomRequest r;
  r.min_hang_ns = 900 * kMs;
  std::string why;
  bool no_hang = false;
  const ThreadEvents events(b.trace);
  CHECK(!find_hang(b.trace, b.graph(), events, r, &why, &no_hang));
  CHECK(no_hang);
  CHECK(why ==
        "no hang found: the longest time a candidate thread went without a response was "
        "0.900 s (client 100, LongWait at 0.001 s), under the 0.900 s threshold (--min-hang)");
  r.min_hang_ns = 500 * kMs;
  no_hang = false;
  auto h = find_hang(b.trace, b.graph(), events, r, &why, &no_hang);
  REQUIRE(h);
  CHECK(!no_hang);
  CHECK(h->tid == 100);
  SUBCASE("a thread and time asked for is taken whatever its length") {
    SymptomRequest at200 = at(200, 300 * kMs);
    at200.min_hang_ns = 900 * kMs;
    CHECK(find_hang(b.trace, b.graph(), events, at200, &why, &no_hang));
  }
}

TEST_CASE("--hang TID@SECONDS errors say what is wrong") {
  SUBCASE("an unknown thread lists the first few threads") {
    std::string trace = "process 100 comm=app\n";
    for (Tid t = 100; t < 107; ++t) {
      trace += "thread " + std::to_string(t) + " pid=100 comm=t" + std::to_string(t) + "\n";
      trace += std::to_string(t) + " " + std::to_string(t) + " switch_in\n";
    }
    const Found f = find(build(trace), at(999, 0));
    CHECK(!f.hang);
    CHECK(f.why ==
          "no thread 999 in the trace (threads: 100 t100, 101 t101, 102 t102, 103 t103, 104 "
          "t104, …)");
  }
  SUBCASE("a time after the thread exited") {
    const Found f = find(build(kWaitAndBusy), at(200, 600 * kMs));
    CHECK(!f.hang);
    CHECK(f.why ==
          "thread 200 (busy) was not alive at 0.600 s: its events run from 0.000 s to "
          "0.510 s");
  }
}

TEST_CASE("classify: yield loops, waits and computations") {
  SegmentProfile p;
  p.start_ns = 0;
  p.end_ns = 100 * kMs;
  p.syscalls = 16;
  p.by_name = {{1, 8}, {2, 8}};
  p.blocked_ns = 90 * kMs;
  p.on_cpu_ns = 10 * kMs;
  p.longest_block_ns = 50 * kMs;
  p.longest_gap_ns = 25 * kMs;
  p.longest_quiet_ns = 50 * kMs;
  CHECK(classify(p) == HangKind::RepeatedYield);
  // The same calls in bursts with more than a quarter of the stretch between two of them
  // (a start-up, a computation, the output), or a burst and then more than half of it
  // without any: not a loop.
  p.longest_gap_ns = 26 * kMs;
  p.on_cpu_ns = 60 * kMs;
  p.blocked_ns = 40 * kMs;
  CHECK(classify(p) == HangKind::LongRunning);
  p.longest_gap_ns = 1 * kMs;
  p.longest_quiet_ns = 51 * kMs;
  CHECK(classify(p) == HangKind::LongRunning);
  p.longest_quiet_ns = 1 * kMs;
  p.on_cpu_ns = 10 * kMs;
  p.blocked_ns = 90 * kMs;
  p.longest_block_ns = 51 * kMs;  // one block is more than half the stretch
  CHECK(classify(p) == HangKind::LongWait);
  p.longest_block_ns = 1 * kMs;
  p.syscalls = 15;
  p.by_name = {{1, 8}, {2, 7}};
  CHECK(classify(p) == HangKind::LongWait);
  p.on_cpu_ns = 60 * kMs;
  p.runnable_ns = 31 * kMs;
  CHECK(classify(p) == HangKind::LongRunning);
  CHECK(hang_kind_name(HangKind::RepeatedYield) == "RepeatedYield");
}

TEST_CASE("trace_start_ns is the first event's time, 0 for an empty trace") {
  CHECK(trace_start_ns(Trace{}) == 0);
  CHECK(trace_start_ns(testing::load_trace("thread 1 pid=1\n5ms 1 switch_in\n9ms 1 switch_in\n")) ==
        5 * kMs);
}

// Client 200 and server 300, each turning a loop on epoll_wait: the server waits for
// requests from 0.2 ms, the client's first loop wait returns at once (1.1 ms).
const std::string kClientServerLoops =
    "process 200 comm=client\n"
    "thread 200 pid=200 comm=client\n"
    "process 300 comm=server\n"
    "thread 300 pid=300 comm=server\n"
    "0 200 switch_in\n"
    "0 300 switch_in\n"
    "0.1ms 300 syscall_enter name=epoll_wait\n"
    "0.2ms 300 switch_out state=S\n"
    "1ms 200 syscall_enter name=epoll_wait\n"
    "1.1ms 200 syscall_exit name=epoll_wait ret=1\n";

// The client's request at 500 ms, read by the server at once, and the client's loop wait
// for the answer.
const std::string kClientAsks =
    "500ms 200 send object=7 offset=0 len=4\n"
    "500.1ms 300 switch_in\n"
    "500.2ms 300 syscall_exit name=epoll_wait ret=1\n"
    "500.3ms 300 recv object=7 offset=0 len=4\n"
    "501ms 200 syscall_enter name=epoll_wait\n"
    "501.1ms 200 switch_out state=S\n";

// client 200 turns a loop on epoll_wait: at 500 ms it sends a request to server 300, then
// waits 1 s in its loop wait until the server's reply comes. server 300's loop waits for
// requests: idle 0.5 s before the request, 1.5 s after its reply.
const std::string kClientLoop = kClientServerLoops + kClientAsks +
                                "1502ms 300 send object=8 offset=0 len=4\n"
                                "1502.1ms 300 syscall_enter name=epoll_wait\n"
                                "1502.2ms 300 switch_out state=S\n"
                                "1502.3ms 200 switch_in\n"
                                "1502.4ms 200 syscall_exit name=epoll_wait ret=1\n"
                                "1502.5ms 200 recv object=8 offset=0 len=4\n"
                                "1503ms 200 exit\n"
                                "3000ms 300 switch_in\n";

TEST_CASE("a loop wait for the answer to the thread's own request stays in its stretch") {
  const Built b = build(kClientLoop, {"wait.entry"});
  const Found f = find(b, [] {
    SymptomRequest r;
    r.thread_name = "client";
    return r;
  }());
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->tid == 200);
  CHECK(f.hang->kind == HangKind::LongWait);
  CHECK(f.hang->start_ns <= 501 * kMs);
  CHECK(f.hang->end_ns >= 1502 * kMs);

  SUBCASE("the server's waits for requests are idle, also after it answered the client") {
    const Found g = find(b, [] {
      SymptomRequest r;
      r.thread_name = "server";
      return r;
    }());
    REQUIRE_MESSAGE(g.hang, g.why);
    CHECK(g.hang->kind == HangKind::LongRunning);
    CHECK(g.hang->start_ns == 500'200'000);  // its wait returned with the request
    CHECK(g.hang->end_ns == 1'502'100'000);  // its next loop wait began
  }
}

TEST_CASE("who asked whom is told from the edges in any order") {
  // The search tells who opened a conversation from the edges in parts, on every CPU: the
  // client's request must count wherever it falls in the graph's edge list.
  Built b = build(kClientLoop, {"wait.entry"});
  SymptomRequest by_name;
  by_name.thread_name = "client";
  const Found in_order = find(b, by_name);
  REQUIRE_MESSAGE(in_order.hang, in_order.why);
  Graph& g = b.result.graph;
  for (int turn = 0; turn < 3; ++turn) {
    CAPTURE(turn);
    // Rotate the edges by a third each time (the rows of the csr keep their order).
    std::rotate(g.edges.begin(), g.edges.begin() + static_cast<std::ptrdiff_t>(g.edges.size() / 3),
                g.edges.end());
    g.build_csr();
    const Found f = find(b, by_name);
    REQUIRE_MESSAGE(f.hang, f.why);
    CHECK(f.hang->kind == in_order.hang->kind);
    CHECK(f.hang->start_ns == in_order.hang->start_ns);
    CHECK(f.hang->end_ns == in_order.hang->end_ns);
  }
}

// client 200 asks server 300 at 500 ms and waits in its loop 100 ms for the answer; after
// 10 ms of work on it, its loop waits idle 2 s until peer 400, which it never asked
// anything, sends it a message. The answer ends the wait for it: the idle wait after is
// no part of that turn.
const std::string kAnsweredThenIdle = kClientServerLoops +
                                      "process 400 comm=peer\n"
                                      "thread 400 pid=400 comm=peer\n"
                                      "1.2ms 400 switch_in\n"
                                      "1.3ms 400 syscall_enter name=clock_nanosleep\n"
                                      "1.4ms 400 switch_out state=S\n" +
                                      kClientAsks +
                                      "600ms 300 send object=8 offset=0 len=4\n"
                                      "600.1ms 300 syscall_enter name=epoll_wait\n"
                                      "600.2ms 300 switch_out state=S\n"
                                      "600.3ms 200 switch_in\n"
                                      "600.4ms 200 syscall_exit name=epoll_wait ret=1\n"
                                      "600.5ms 200 recv object=8 offset=0 len=4\n"
                                      "610ms 200 syscall_enter name=epoll_wait\n"
                                      "610.1ms 200 switch_out state=S\n"
                                      "2610ms 400 switch_in\n"
                                      "2610.1ms 400 syscall_exit name=clock_nanosleep\n"
                                      "2610.2ms 400 send object=9 offset=0 len=4\n"
                                      "2610.3ms 400 exit\n"
                                      "2610.4ms 200 switch_in\n"
                                      "2610.5ms 200 syscall_exit name=epoll_wait ret=1\n"
                                      "2610.6ms 200 recv object=9 offset=0 len=4\n"
                                      "2615ms 200 exit\n"
                                      "3000ms 300 switch_in\n";

TEST_CASE("an answered request does not hold on to the loop's next idle wait") {
  // (Not named: a wait of a named thread that another process ended is a candidate too.)
  const Built b = build(kAnsweredThenIdle, {"wait.entry"});
  const Found f = find(b, SymptomRequest{});
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->tid == 200);
  CHECK(f.hang->start_ns <= 501 * kMs);
  CHECK(f.hang->end_ns == 610 * kMs);  // its next loop wait began: idle, for no answer
}

// A follower (tail -f) 200 turns a loop on epoll_wait on its one descriptor: it waits
// 1.2 s until writer 300's bytes come, copies them in 1 ms and waits again on the same
// descriptor until a signal ends that wait 50 ms later and it exits after 16 ms of
// clean-up. Named, the follower's hang is the 1.2 s wait the writer ended, not the turn of
// its exit.
const std::string kFollower =
    "process 200 comm=follower\n"
    "thread 200 pid=200 comm=follower\n"
    "process 300 comm=writer\n"
    "thread 300 pid=300 comm=writer\n"
    "0 200 switch_in\n"
    "0 300 switch_in\n"
    "1ms 200 syscall_enter name=epoll_wait fd=4\n"
    "1.1ms 200 switch_out state=S\n"
    "1201ms 300 send object=7 offset=0 len=4\n"
    "1201.1ms 200 switch_in\n"
    "1201.2ms 200 syscall_exit name=epoll_wait ret=1\n"
    "1201.3ms 200 recv object=7 offset=0 len=4\n"
    "1202ms 200 syscall_enter name=epoll_wait fd=4\n"
    "1202.1ms 200 switch_out state=S\n"
    "1252ms 200 switch_in\n"
    "1252.1ms 200 syscall_exit name=epoll_wait ret=-4\n"
    "1268ms 200 exit\n"
    "1268.1ms 200 switch_out state=X\n";

TEST_CASE("named: a loop thread's wait that another thread ended is a candidate hang") {
  const Built b = build(kFollower, {"wait.entry"});
  SymptomRequest r;
  r.thread_name = "follower";
  const Found f = find(b, r);
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->tid == 200);
  CHECK(f.hang->kind == HangKind::LongWait);
  CHECK(f.hang->start_ns == 1 * kMs);
  CHECK(f.hang->end_ns == 1'201'200'000);
  CHECK(f.hang->profile.longest_block_ns >= 1200 * kMs);
}

// client 200 (a D-Bus client) sends server 300 a request at 2 ms and waits for the reply in
// its loop wait. Before the server reads the request (at 6.5 ms) it sends the client a
// notice of its own (at 5 ms, as dbus-daemon's NameAcquired signal): the client wakes, reads
// it and waits again, 1 s, until the reply comes (at 1006 ms). The server sleeps meanwhile.
const std::string kNoticeBeforeAnswer = kClientServerLoops +
                                        "2ms 200 send object=7 offset=0 len=4\n"
                                        "3ms 200 syscall_enter name=epoll_wait\n"
                                        "3.1ms 200 switch_out state=S\n"
                                        "4ms 300 switch_in\n"
                                        "4.1ms 300 syscall_exit name=epoll_wait ret=1\n"
                                        "5ms 300 send object=8 offset=0 len=4\n"
                                        "5.1ms 200 switch_in\n"
                                        "5.2ms 200 syscall_exit name=epoll_wait ret=1\n"
                                        "5.3ms 200 recv object=8 offset=0 len=4\n"
                                        "6ms 200 syscall_enter name=epoll_wait\n"
                                        "6.1ms 200 switch_out state=S\n"
                                        "6.5ms 300 recv object=7 offset=0 len=4\n"
                                        "7ms 300 syscall_enter name=clock_nanosleep\n"
                                        "7.1ms 300 switch_out state=S\n"
                                        "1005ms 300 switch_in\n"
                                        "1005.1ms 300 syscall_exit name=clock_nanosleep\n"
                                        "1006ms 300 send object=8 offset=4 len=4\n"
                                        "1006.1ms 300 syscall_enter name=epoll_wait\n"
                                        "1006.2ms 300 switch_out state=S\n"
                                        "1006.3ms 200 switch_in\n"
                                        "1006.4ms 200 syscall_exit name=epoll_wait ret=1\n"
                                        "1006.5ms 200 recv object=8 offset=4 len=4\n"
                                        "1007ms 200 exit\n"
                                        "2000ms 300 switch_in\n";

TEST_CASE("a message the server sent before it read the request is no answer: the wait goes on") {
  const Built b = build(kNoticeBeforeAnswer, {"wait.entry"});
  SymptomRequest named;
  named.thread_name = "client";
  for (const SymptomRequest& r : {named, SymptomRequest{}}) {
    CAPTURE(r.thread_name);
    const Found f = find(b, r);
    REQUIRE_MESSAGE(f.hang, f.why);
    CHECK(f.hang->tid == 200);
    CHECK(f.hang->kind == HangKind::LongWait);
    CHECK(f.hang->start_ns <= 6 * kMs);
    CHECK(f.hang->end_ns >= 1006 * kMs);
    CHECK(f.hang->profile.longest_block_ns >= 1000 * kMs);
  }
}

// A shell script (sh 100) reads what its subshell (sh 101, forked by it) prints; the
// subshell waits in wait4 for its pipeline 4 ms longer than the script's read. Named "sh",
// the script is the hang: the subshell is part of what it waits for.
const std::string kSubshell =
    "process 100 comm=sh\n"
    "thread 100 pid=100 comm=sh\n"
    "process 101 comm=sh ppid=100\n"
    "thread 101 pid=101 comm=sh\n"
    "0 100 switch_in\n"
    "1ms 100 fork child=101 child_pid=101\n"
    "1ms 101 thread_start parent=100\n"
    "1ms 101 switch_in\n"
    "2ms 100 syscall_enter name=read fd=3\n"
    "2.1ms 100 switch_out state=S\n"
    "3ms 101 syscall_enter name=wait4 fd=-1 resource=1\n"
    "3.1ms 101 switch_out state=S\n"
    "900ms 100 switch_in\n"
    "900.1ms 100 syscall_exit name=read ret=8\n"
    "904ms 101 switch_in\n"
    "904.1ms 101 syscall_exit name=wait4 ret=102\n"
    "905ms 101 exit\n"
    "906ms 100 exit\n";

TEST_CASE("by name, a process of that name wins over its overlapping descendant of that name") {
  const std::string rules =
      "split wait4.entry { at syscall_enter where name == \"wait4\" "
      "cut before neighbour weak }\n";
  const Built b = build(kSubshell, {}, rules);
  SymptomRequest r;
  r.thread_name = "sh";
  const Found f = find(b, r);
  REQUIRE_MESSAGE(f.hang, f.why);
  CHECK(f.hang->tid == 100);
  CHECK(f.hang->kind == HangKind::LongWait);
  CHECK(f.hang->chosen_by.find("preferred over its descendant sh 101") != std::string::npos);

  SUBCASE("unnamed, the longer wait is taken") {
    const Found g = find(b);
    REQUIRE_MESSAGE(g.hang, g.why);
    CHECK(g.hang->tid == 101);
  }
}

}  // namespace
}  // namespace cw::engine

namespace cw::engine {
namespace {

// The candidates as text, for comparing two runs in one CHECK.
std::string describe(const std::vector<HangCandidate>& list) {
  std::string out;
  for (const HangCandidate& c : list)
    out += fmt::format("{} {} {} {}-{} seg {} woken_by {} [{}]\n", c.hang.tid, c.score_ns,
                       static_cast<int>(c.hang.kind), c.hang.start_ns, c.hang.end_ns,
                       c.hang.segment, c.woken_by, c.by_design);
  return out;
}

TEST_CASE("auto's candidates are the same on one thread as on several") {
  // 60 main threads, each waiting and computing for its own times, so that every one has
  // several stretches and the ranking depends on all of them.
  std::string trace;
  for (int p = 1; p <= 60; ++p) {
    const int pid = 1000 + p;
    trace += fmt::format("process {0} comm=w{1}\nthread {0} pid={0} comm=w{1}\n", pid, p);
  }
  for (int p = 1; p <= 60; ++p) {
    const int pid = 1000 + p;
    uint64_t t = static_cast<uint64_t>(p) * 1000;
    trace += fmt::format("{}ns {} switch_in\n", t, pid);
    for (int k = 0; k < 4; ++k) {
      const uint64_t wait = static_cast<uint64_t>((p * 7 + k * 13) % 37 + 1) * kMs;
      trace += fmt::format("{}ns {} syscall_enter name=read fd=3\n", t + 100, pid);
      trace += fmt::format("{}ns {} switch_out state=S\n", t + 200, pid);
      t += 200 + wait;
      trace += fmt::format("{}ns {} switch_in\n", t, pid);
      trace += fmt::format("{}ns {} syscall_exit name=read ret=1\n", t + 100, pid);
      t += static_cast<uint64_t>((p * 3 + k) % 5 + 1) * kMs;  // computing
    }
    trace += fmt::format("{}ns {} exit\n", t, pid);
  }
  const Built b = build(trace);
  const ThreadEvents events(b.trace);
  auto list_with = [&](const char* threads) {
    setenv("CAUSEWAY_THREADS", threads, 1);
    std::string why;
    auto list = list_hangs(b.trace, b.graph(), events, {}, &why);
    unsetenv("CAUSEWAY_THREADS");
    return list;
  };
  const auto serial = list_with("1");
  REQUIRE(serial.size() == 60);
  CHECK(describe(list_with("4")) == describe(serial));
  CHECK(describe(list_with("3")) == describe(serial));
}

// Everything a search answered, the ranks it keeps included, with each rank's segments
// counted from its thread's first (as kept).
std::string describe(const FoundHang& f) {
  std::string out = fmt::format("why [{}] no_hang {}\n", f.why, f.no_hang);
  if (f.hang) {
    const Hang& h = *f.hang;
    out += fmt::format("hang {} {} {}-{} kind {} seg {} {}-{} block {}@{} [{}]\n", h.tid, h.pid,
                       h.start_ns, h.end_ns, static_cast<int>(h.kind), h.segment, h.first_segment,
                       h.last_segment, h.profile.longest_block_ns, h.profile.longest_block_start,
                       h.chosen_by);
  }
  for (const ThreadRank& r : f.ranks) {
    out +=
        fmt::format("rank {} segs {} cuts {:x} has {}", r.tid, r.segments, r.cuts, r.has_stretch);
    if (r.has_stretch)
      out += " " + describe(std::vector<HangCandidate>{r.candidate});
    else
      out += "\n";
  }
  return out;
}

// Threads of several processes, each waiting in turn in one of a few calls, some woken by
// another thread's message and wake-up: which threads use which call, and who wakes whom,
// come from `seed` (splitmix64), so a failing seed replays.
std::string ranked_topology(uint64_t seed) {
  uint64_t state = seed;
  auto next = [&](uint64_t n) {
    state += 0x9e3779b97f4a7c15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) % n;
  };
  const char* const calls[] = {"read", "poll", "recvmsg", "clock_nanosleep", "epoll_wait"};
  std::string out;
  std::vector<Tid> tids;
  const uint64_t processes = 3 + next(4);
  for (uint64_t p = 0; p < processes; ++p) {
    const Tid pid = static_cast<Tid>(100 * (p + 1));
    out += fmt::format("process {0} comm=p{0}\n", pid);
    const uint64_t threads = 1 + next(3);
    for (uint64_t k = 0; k < threads; ++k) {
      out += fmt::format("thread {} pid={} comm=t{}\n", pid + k, pid, pid + k);
      tids.push_back(static_cast<Tid>(pid + k));
    }
  }
  uint32_t object = 1;
  for (Tid tid : tids) {
    const char* const own = calls[next(5)];
    uint64_t t = next(1000) * 1000;
    out += fmt::format("{}ns {} switch_in\n", t, tid);
    const uint64_t turns = 2 + next(5);
    for (uint64_t k = 0; k < turns; ++k) {
      const char* const call = next(3) == 0 ? calls[next(5)] : own;
      out += fmt::format("{}ns {} syscall_enter name={} fd=3\n", t + 100, tid, call);
      out += fmt::format("{}ns {} switch_out state=S\n", t + 200, tid);
      t += 200 + (1 + next(40)) * kMs;
      if (next(2) == 0) {  // another thread's message ended the wait
        const Tid from = tids[next(tids.size())];
        if (from != tid) {
          out += fmt::format("{}ns {} send object={} offset=0 len=4\n", t - 300, from, object);
          out += fmt::format("{}ns {} wakeup target={}\n", t - 200, from, tid);
          out += fmt::format("{}ns {} switch_in\n", t, tid);
          out += fmt::format("{}ns {} syscall_exit name={} ret=4\n", t + 100, tid, call);
          out += fmt::format("{}ns {} recv object={} offset=0 len=4\n", t + 150, tid, object++);
          t += (1 + next(20)) * kMs;
          continue;
        }
      }
      out += fmt::format("{}ns {} switch_in\n", t, tid);
      out += fmt::format("{}ns {} syscall_exit name={} ret=0\n", t + 100, tid, call);
      t += (1 + next(20)) * kMs;  // computing
    }
    if (next(4) != 0) out += fmt::format("{}ns {} exit\n", t, tid);
  }
  return out;
}

TEST_CASE("a search reusing the ranks of one on other cuts answers as a search from scratch") {
  // Each edit changes cut rules only (the edges stay): a loop on one call, the blocking
  // waits made loop cuts, the loop taken away again.
  const std::string poll_loop =
      "split poll.loop { at syscall_enter where name == \"poll\" cut before neighbour weak "
      "loop }\n";
  const std::string recvmsg_loop =
      "split recvmsg.loop { at syscall_enter where name == \"recvmsg\" cut before neighbour "
      "weak loop }\n";
  struct Packs {
    std::vector<std::string> loops;
    std::string extra;
  };
  const std::vector<Packs> packs = {{{}, ""},
                                    {{}, poll_loop},
                                    {{}, recvmsg_loop},
                                    {{"wait.entry"}, ""},
                                    {{"wait.entry"}, poll_loop + recvmsg_loop}};
  size_t reused = 0, searched = 0;
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    CAPTURE(seed);
    const std::string trace = ranked_topology(seed);
    std::vector<Built> built;
    for (const Packs& p : packs) built.push_back(build(trace, p.loops, p.extra));
    std::vector<FoundHang> cold;
    for (const Built& b : built) {
      const ThreadEvents events(b.trace);
      cold.push_back(find_hang_reusing(b.trace, b.graph(), events, {}, nullptr));
      CHECK(cold.back().reused == 0);
    }
    for (size_t from = 0; from < built.size(); ++from) {
      for (size_t to = 0; to < built.size(); ++to) {
        if (from == to) continue;
        CAPTURE(from);
        CAPTURE(to);
        const ThreadEvents events(built[to].trace);
        const FoundHang again =
            find_hang_reusing(built[to].trace, built[to].graph(), events, {}, &cold[from].ranks);
        CHECK(describe(again) == describe(cold[to]));
        reused += again.reused;
        searched += cold[to].ranks.size() - again.reused;
      }
    }
  }
  // Both happened: threads whose cuts an edit left alone, and threads it changed.
  CHECK(reused > 0);
  CHECK(searched > 0);
  MESSAGE("threads reused " << reused << ", searched again " << searched);
}

TEST_CASE("a rank kept for other cuts, or naming segments past its thread's, is not reused") {
  const Built b = build(kLoopThread, {"wait.entry"});
  const ThreadEvents events(b.trace);
  const FoundHang cold = find_hang_reusing(b.trace, b.graph(), events, {}, nullptr);
  REQUIRE(cold.ranks.size() == 2);
  SUBCASE("the same cuts: both reused") {
    CHECK(find_hang_reusing(b.trace, b.graph(), events, {}, &cold.ranks).reused == 2);
  }
  SUBCASE("other cuts") {
    std::vector<ThreadRank> other = cold.ranks;
    other[1].cuts ^= 1;
    const FoundHang again = find_hang_reusing(b.trace, b.graph(), events, {}, &other);
    CHECK(again.reused == 1);
    CHECK(describe(again) == describe(cold));
  }
  SUBCASE("a segment past the thread's") {
    std::vector<ThreadRank> bad = cold.ranks;
    for (ThreadRank& r : bad) {
      REQUIRE(r.has_stretch);
      r.candidate.hang.last_segment = r.segments;
    }
    const FoundHang again = find_hang_reusing(b.trace, b.graph(), events, {}, &bad);
    CHECK(again.reused == 0);
    CHECK(describe(again) == describe(cold));
  }
  SUBCASE("with markers nothing is kept or reused") {
    const Built marked =
        build(std::string(kLoopThread) + "2100ms 101 marker text=\"slow\"\n", {"wait.entry"});
    const ThreadEvents marked_events(marked.trace);
    const FoundHang m =
        find_hang_reusing(marked.trace, marked.graph(), marked_events, {}, &cold.ranks);
    CHECK(m.reused == 0);
    CHECK(m.ranks.empty());
  }
}

}  // namespace
}  // namespace cw::engine
