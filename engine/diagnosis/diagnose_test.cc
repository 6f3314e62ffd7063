#include "engine/diagnosis/diagnose.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <string>

#include "engine/diagnosis/logical_wait.h"
#include "engine/diagnosis/similar_segments.h"
#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::build;
using testing::Built;

// A test's edit of a shared trace: `from` must be in it; its first occurrence becomes `to`.
void replace_once(std::string& trace, const std::string& from, const std::string& to) {
  const auto at = trace.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "not in the trace: " << from);
  trace.replace(at, from.size(), to);
}

// Every occurrence of `from` (which must be in the trace) becomes `to`.
void replace_all(std::string& trace, const std::string& from, const std::string& to) {
  REQUIRE_MESSAGE(trace.find(from) != std::string::npos, "not in the trace: " << from);
  for (auto at = trace.find(from); at != std::string::npos; at = trace.find(from, at + to.size()))
    trace.replace(at, from.size(), to);
}

// The Linux rules a diagnosis needs, in small: blocking reads, polls and sleeps cut segments,
// stream bytes, timers and flags are strong edges, plain wake-ups weak.
const char* const kRules = R"(
split wait.entry {
  at syscall_enter
  where name in ["read", "poll", "clock_nanosleep", "futex"]
  cut before
  neighbour weak
}
link stream { from send to recv join from.object == to.object pick overlap range offset, len }
edge message { link stream strength strong kind message }
link timer { from timer_arm to timer_fire join from.timer == to.timer pick latest }
edge timer.fire { link timer strength strong kind timer }
link wakeup { from wakeup to switch_in join from.target == to.tid pick next }
edge wakeup.default { link wakeup strength weak kind wakeup }
flag ready { symbol "ready" }
)";

// The two processes most tests here play: a client and the server it asks (process ids
// 100 and 200, one thread each), ahead of each test's own events.
const std::string kClientServer =
    "process 100 comm=cw-client\nthread 100 pid=100 comm=cw-client\n"
    "process 200 comm=cw-server ppid=100\nthread 200 pid=200 comm=cw-server\n";

// cw-client asks cw-server, which asks cw-timekeeper, which arms a timer and answers when
// it fires. Round 1 at 10 ms: a 1 ms timer (the baseline). Round 2 at 100 ms: 500 ms.
const char* const kChain = R"(
process 100 comm=cw-client
thread 100 pid=100 comm=cw-client
process 200 comm=cw-server ppid=100
thread 200 pid=200 comm=cw-server
process 300 comm=cw-timekeeper ppid=100
thread 300 pid=300 comm=cw-timekeeper
1ms 200 syscall_enter name=read fd=4
1ms 200 switch_out state=S
1ms 300 syscall_enter name=read fd=6
1ms 300 switch_out state=S
10ms 100 syscall_enter name=write fd=3
10ms 100 send object=1 offset=0 len=8 peer=200 fd=3
10ms 100 syscall_exit name=write ret=8
10ms 100 syscall_enter name=read fd=3
10ms 100 switch_out state=S
11ms 200 switch_in
11ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
11ms 200 syscall_exit name=read ret=8
11ms 200 syscall_enter name=write fd=5
11ms 200 send object=3 offset=0 len=8 peer=300 fd=5
11ms 200 syscall_exit name=write ret=8
11ms 200 syscall_enter name=read fd=5
11ms 200 switch_out state=S
12ms 300 switch_in
12ms 300 recv object=3 offset=0 len=8 peer=200 fd=6
12ms 300 syscall_exit name=read ret=8
12ms 300 syscall_enter name=timerfd_settime fd=3
12ms 300 timer_arm timer=9 expires_ns=13000000
12ms 300 syscall_exit name=timerfd_settime ret=0
12ms 300 syscall_enter name=read fd=3
12ms 300 switch_out state=S
13ms 300 timer_fire timer=9
13ms 300 switch_in
13ms 300 syscall_exit name=read ret=8
13ms 300 syscall_enter name=write fd=6
13ms 300 send object=4 offset=0 len=8 peer=200 fd=6
13ms 300 syscall_exit name=write ret=8
13ms 300 syscall_enter name=read fd=6
13ms 300 switch_out state=S
14ms 200 switch_in
14ms 200 recv object=4 offset=0 len=8 peer=300 fd=5
14ms 200 syscall_exit name=read ret=8
14ms 200 syscall_enter name=write fd=4
14ms 200 send object=2 offset=0 len=8 peer=100 fd=4
14ms 200 syscall_exit name=write ret=8
14ms 200 syscall_enter name=read fd=4
14ms 200 switch_out state=S
15ms 100 switch_in
15ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
15ms 100 syscall_exit name=read ret=8
100ms 100 syscall_enter name=write fd=3
100ms 100 send object=1 offset=8 len=8 peer=200 fd=3
100ms 100 syscall_exit name=write ret=8
100ms 100 syscall_enter name=read fd=3
100ms 100 switch_out state=S
101ms 200 switch_in
101ms 200 recv object=1 offset=8 len=8 peer=100 fd=4
101ms 200 syscall_exit name=read ret=8
101ms 200 syscall_enter name=write fd=5
101ms 200 send object=3 offset=8 len=8 peer=300 fd=5
101ms 200 syscall_exit name=write ret=8
101ms 200 syscall_enter name=read fd=5
101ms 200 switch_out state=S
102ms 300 switch_in
102ms 300 recv object=3 offset=8 len=8 peer=200 fd=6
102ms 300 syscall_exit name=read ret=8
102ms 300 syscall_enter name=timerfd_settime fd=3
102ms 300 timer_arm timer=9 expires_ns=602000000
102ms 300 syscall_exit name=timerfd_settime ret=0
102ms 300 syscall_enter name=read fd=3
102ms 300 switch_out state=S
602ms 300 timer_fire timer=9
602ms 300 switch_in
602ms 300 syscall_exit name=read ret=8
602ms 300 syscall_enter name=write fd=6
602ms 300 send object=4 offset=8 len=8 peer=200 fd=6
602ms 300 syscall_exit name=write ret=8
602ms 300 syscall_enter name=read fd=6
602ms 300 switch_out state=S
603ms 200 switch_in
603ms 200 recv object=4 offset=8 len=8 peer=300 fd=5
603ms 200 syscall_exit name=read ret=8
603ms 200 syscall_enter name=write fd=4
603ms 200 send object=2 offset=8 len=8 peer=100 fd=4
603ms 200 syscall_exit name=write ret=8
603ms 200 syscall_enter name=read fd=4
603ms 200 switch_out state=S
604ms 100 switch_in
604ms 100 recv object=2 offset=8 len=8 peer=200 fd=3
604ms 100 syscall_exit name=read ret=8
)";

// cw-spinner's main thread polls `ready` with 1 ms sleeps; cw-setter sleeps 41.5 ms, then
// sets it.
const char* const kSpin = R"(
process 100 comm=cw-spinner
thread 100 pid=100 comm=cw-spinner
thread 101 pid=100 comm=cw-setter
0ms 101 syscall_enter name=clock_nanosleep fd=-1
0ms 101 switch_out state=S
2ms 100 flag_read flag=ready value=0
2ms 100 syscall_enter name=clock_nanosleep fd=-1
2ms 100 switch_out state=S
3ms 100 switch_in
3ms 100 syscall_exit name=clock_nanosleep ret=0
4ms 100 flag_read flag=ready value=0
4ms 100 syscall_enter name=clock_nanosleep fd=-1
4ms 100 switch_out state=S
5ms 100 switch_in
5ms 100 syscall_exit name=clock_nanosleep ret=0
6ms 100 flag_read flag=ready value=0
6ms 100 syscall_enter name=clock_nanosleep fd=-1
6ms 100 switch_out state=S
7ms 100 switch_in
7ms 100 syscall_exit name=clock_nanosleep ret=0
8ms 100 flag_read flag=ready value=0
8ms 100 syscall_enter name=clock_nanosleep fd=-1
8ms 100 switch_out state=S
9ms 100 switch_in
9ms 100 syscall_exit name=clock_nanosleep ret=0
10ms 100 flag_read flag=ready value=0
10ms 100 syscall_enter name=clock_nanosleep fd=-1
10ms 100 switch_out state=S
11ms 100 switch_in
11ms 100 syscall_exit name=clock_nanosleep ret=0
12ms 100 flag_read flag=ready value=0
12ms 100 syscall_enter name=clock_nanosleep fd=-1
12ms 100 switch_out state=S
13ms 100 switch_in
13ms 100 syscall_exit name=clock_nanosleep ret=0
14ms 100 flag_read flag=ready value=0
14ms 100 syscall_enter name=clock_nanosleep fd=-1
14ms 100 switch_out state=S
15ms 100 switch_in
15ms 100 syscall_exit name=clock_nanosleep ret=0
16ms 100 flag_read flag=ready value=0
16ms 100 syscall_enter name=clock_nanosleep fd=-1
16ms 100 switch_out state=S
17ms 100 switch_in
17ms 100 syscall_exit name=clock_nanosleep ret=0
18ms 100 flag_read flag=ready value=0
18ms 100 syscall_enter name=clock_nanosleep fd=-1
18ms 100 switch_out state=S
19ms 100 switch_in
19ms 100 syscall_exit name=clock_nanosleep ret=0
20ms 100 flag_read flag=ready value=0
20ms 100 syscall_enter name=clock_nanosleep fd=-1
20ms 100 switch_out state=S
21ms 100 switch_in
21ms 100 syscall_exit name=clock_nanosleep ret=0
22ms 100 flag_read flag=ready value=0
22ms 100 syscall_enter name=clock_nanosleep fd=-1
22ms 100 switch_out state=S
23ms 100 switch_in
23ms 100 syscall_exit name=clock_nanosleep ret=0
24ms 100 flag_read flag=ready value=0
24ms 100 syscall_enter name=clock_nanosleep fd=-1
24ms 100 switch_out state=S
25ms 100 switch_in
25ms 100 syscall_exit name=clock_nanosleep ret=0
26ms 100 flag_read flag=ready value=0
26ms 100 syscall_enter name=clock_nanosleep fd=-1
26ms 100 switch_out state=S
27ms 100 switch_in
27ms 100 syscall_exit name=clock_nanosleep ret=0
28ms 100 flag_read flag=ready value=0
28ms 100 syscall_enter name=clock_nanosleep fd=-1
28ms 100 switch_out state=S
29ms 100 switch_in
29ms 100 syscall_exit name=clock_nanosleep ret=0
30ms 100 flag_read flag=ready value=0
30ms 100 syscall_enter name=clock_nanosleep fd=-1
30ms 100 switch_out state=S
31ms 100 switch_in
31ms 100 syscall_exit name=clock_nanosleep ret=0
32ms 100 flag_read flag=ready value=0
32ms 100 syscall_enter name=clock_nanosleep fd=-1
32ms 100 switch_out state=S
33ms 100 switch_in
33ms 100 syscall_exit name=clock_nanosleep ret=0
34ms 100 flag_read flag=ready value=0
34ms 100 syscall_enter name=clock_nanosleep fd=-1
34ms 100 switch_out state=S
35ms 100 switch_in
35ms 100 syscall_exit name=clock_nanosleep ret=0
36ms 100 flag_read flag=ready value=0
36ms 100 syscall_enter name=clock_nanosleep fd=-1
36ms 100 switch_out state=S
37ms 100 switch_in
37ms 100 syscall_exit name=clock_nanosleep ret=0
38ms 100 flag_read flag=ready value=0
38ms 100 syscall_enter name=clock_nanosleep fd=-1
38ms 100 switch_out state=S
39ms 100 switch_in
39ms 100 syscall_exit name=clock_nanosleep ret=0
40ms 100 flag_read flag=ready value=0
40ms 100 syscall_enter name=clock_nanosleep fd=-1
40ms 100 switch_out state=S
41ms 100 switch_in
41ms 100 syscall_exit name=clock_nanosleep ret=0
41500us 101 switch_in
41500us 101 syscall_exit name=clock_nanosleep ret=0
41500us 101 flag_write flag=ready value=1
42ms 100 flag_read flag=ready value=1
43ms 100 exit code=0
)";

// The (last) segment of `tid` that starts at `ms`.
uint32_t segment_at(const Built& b, Tid tid, uint64_t ms) {
  const auto* t = b.graph().thread_segments(tid);
  REQUIRE(t);
  for (uint32_t s = t->end; s-- > t->begin;)
    if (b.graph().segments[s].start_ns == ms * 1000000) return s;
  FAIL("no segment of " << tid << " starts at " << ms << " ms");
  return kNoIndex;
}

// Root causes as "TID KIND depth D, …".
std::string causes(const Built& b, const Diagnosis& d) {
  std::string out;
  for (const RootCause& r : d.root_causes)
    out += (out.empty() ? "" : ", ") + std::to_string(b.graph().segments[r.segment].tid) + " " +
           std::string(hang_kind_name(r.kind)) + " depth " + std::to_string(r.depth);
  return out;
}

// Path as "TID@START_MS KIND, …" (the edge to the next step; "-" on the last).
std::string path(const Built& b, const std::vector<PathStep>& p) {
  std::string out;
  for (const PathStep& s : p) {
    const Segment& seg = b.graph().segments[s.segment];
    out += (out.empty() ? "" : ", ") + std::to_string(seg.tid) + "@" +
           std::to_string(seg.start_ns / 1000000) + " " +
           (s.edge == kNoIndex ? std::string("-") : b.graph().kind_name(b.graph().edges[s.edge]));
  }
  return out;
}

// Answers from a script, in order; records what it was asked.
class ScriptedAnswerer : public Answerer {
 public:
  explicit ScriptedAnswerer(std::vector<uint32_t> picks) : picks_(std::move(picks)) {}
  Answer ask(const Question& q) override {
    asked.push_back(q.text);
    uint32_t k = next_ < picks_.size() ? picks_[next_++] : 0;
    return {k, AnswerSource::User, {}};
  }
  std::vector<std::string> asked;

 private:
  std::vector<uint32_t> picks_;
  size_t next_ = 0;
};

TEST_CASE("LongWait through three processes: the timekeeper's timer wait is the root cause") {
  Built b = build(kRules, kChain);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(d.hang.segment == segment_at(b, 100, 100));
  // The server's answer ended the wait: its own causal path is the evidence, no baseline.
  // Of that path the timekeeper's 500 ms timer wait took the time: the root cause, not
  // the path's origin before the hang.
  CHECK(d.baseline == kNoIndex);
  CHECK(causes(b, d) == "300 LongWait depth 1");
  CHECK(d.root_causes[0].what ==
        "blocked 500.0 ms in read (fd 3); ended by a timer edge (strong) from cw-timekeeper 300 "
        "at 0.101000 s; its work began with a message from cw-server 200 at 0.100000 s");
  // The path begins at the server's request, which set the timekeeper to work: it read it,
  // armed its timer and waited for it.
  CHECK(path(b, d.path) ==
        "200@14 message, 300@13 timer, 300@102 message, 200@101 message, 100@100 -");
  // The timer the timekeeper waited for was its own: it waited for time, as a sleep does,
  // so nobody is behind it and there is no question whether to diagnose it further.
  CHECK(d.queries.empty());
  CHECK(std::count_if(d.notes.begin(), d.notes.end(), [](const std::string& n) {
          return n.starts_with(
              "cw-timekeeper 300 waited 500.0 ms for a timer it had armed "
              "itself");
        }) == 1);
}

TEST_CASE("a timer's firing recorded as its wait returns still tells the wait was its own") {
  // The recorder sees a timerfd's expiry on the reading thread as the read returns, after
  // the switch back in (and, the timer having fired on an idle CPU, no wake-up at all):
  // the same own timer, so again no question.
  std::string trace = kChain;
  replace_once(trace,
               "602ms 300 timer_fire timer=9\n602ms 300 switch_in\n"
               "602ms 300 syscall_exit name=read ret=8\n",
               "602ms 300 switch_in\n602ms 300 syscall_exit name=read ret=8\n"
               "602ms 300 timer_fire timer=9\n");
  Built b = build(kRules, trace);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(causes(b, d) == "300 LongWait depth 1");
  CHECK(d.queries.empty());
  CHECK(std::count_if(d.notes.begin(), d.notes.end(), [](const std::string& n) {
          return n.starts_with("cw-timekeeper 300 waited 500.0 ms for a timer it had armed");
        }) == 1);
}

// The chain with the hang round's timer armed for the timekeeper by another of its
// threads: the wait is then another thread's doing, and worth diagnosing further.
std::string chain_timer_armed_by_another_thread() {
  std::string trace = kChain;
  replace_once(trace, "thread 300 pid=300 comm=cw-timekeeper\n",
               "thread 300 pid=300 comm=cw-timekeeper\nthread 301 pid=300 comm=cw-scheduler\n");
  replace_once(trace,
               "102ms 300 syscall_enter name=timerfd_settime fd=3\n"
               "102ms 300 timer_arm timer=9 expires_ns=602000000\n"
               "102ms 300 syscall_exit name=timerfd_settime ret=0\n",
               "102ms 301 syscall_enter name=timerfd_settime fd=3\n"
               "102ms 301 timer_arm timer=9 expires_ns=602000000\n"
               "102ms 301 syscall_exit name=timerfd_settime ret=0\n");
  return trace;
}

TEST_CASE("a timer wait another thread armed is asked about, and recursed into by default") {
  // Without that thread the same wait ends the diagnosis with a note: see the test above.
  Built b = build(kRules, chain_timer_armed_by_another_thread());
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(causes(b, d).ends_with("300 LongWait depth 1"));
  REQUIRE(!d.queries.empty());
  CHECK(d.queries[0].question.kind == QuestionKind::Recurse);
  CHECK(d.queries[0].answer.source == AnswerSource::Auto);
  CHECK(d.queries[0].question.text.starts_with(
      "cw-timekeeper 300 blocked 500.0 ms in read (fd 3) (from "));
}

TEST_CASE("a culprit that slept for time, woken by no one, is not recursed into") {
  // The chain's hang round with the timekeeper sleeping 500 ms in clock_nanosleep (no
  // descriptor, no lock, a timeout) instead of reading its timerfd: it waited for nobody,
  // so there is no question whether to diagnose it, and it stays the root cause.
  std::string trace = kChain;
  const std::string timer =
      "102ms 300 syscall_enter name=timerfd_settime fd=3\n"
      "102ms 300 timer_arm timer=9 expires_ns=602000000\n"
      "102ms 300 syscall_exit name=timerfd_settime ret=0\n"
      "102ms 300 syscall_enter name=read fd=3\n"
      "102ms 300 switch_out state=S\n"
      "602ms 300 timer_fire timer=9\n"
      "602ms 300 switch_in\n"
      "602ms 300 syscall_exit name=read ret=8\n";
  const auto at = trace.find(timer);
  REQUIRE(at != std::string::npos);
  // Its timer's expiry is delivered by a kernel worker: a weak wake-up, not a cause.
  trace.replace(at, timer.size(),
                "102ms 300 syscall_enter name=clock_nanosleep fd=-1 timeout_ns=500000000\n"
                "102ms 300 switch_out state=S\n"
                "602ms 50 wakeup target=300\n"
                "602ms 300 switch_in\n"
                "602ms 300 syscall_exit name=clock_nanosleep ret=0\n");
  trace.replace(trace.find("process 300 comm=cw-timekeeper"), 0,
                "thread 50 pid=0 comm=kworker/u8:2 kernel\n");
  Built b = build(kRules, trace);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(causes(b, d) == "300 LongWait depth 1");
  CHECK(d.queries.empty());
  CHECK(std::count_if(d.notes.begin(), d.notes.end(), [](const std::string& n) {
          return n.find("cw-timekeeper 300 slept for time (500.0 ms") == 0;
        }) == 1);
  // The same wait on a descriptor (the chain as it is) is asked about: see the test above.
}

TEST_CASE("below a culprit, a thread that was waiting for the culprit is not its cause") {
  // Round 1 (the baseline) with the server still on the CPU for 1.5 ms after its request
  // to the timekeeper: on the baseline's path its segment outlasts the start of the
  // timekeeper's wait. In round 2 the server waited for the timekeeper's answer, so it is
  // no culprit of the timekeeper's wait (as it would be had it waited for someone else).
  std::string trace = kChain;
  const std::string sent =
      "11ms 200 syscall_exit name=write ret=8\n11ms 200 syscall_enter name=read fd=5\n"
      "11ms 200 switch_out state=S\n";
  const auto at = trace.find(sent);
  REQUIRE(at != std::string::npos);
  trace.replace(at, sent.size(),
                "11ms 200 syscall_exit name=write ret=8\n12500us 200 syscall_enter name=read "
                "fd=5\n12500us 200 switch_out state=S\n");
  Built b = build(kRules, trace);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(causes(b, d) == "300 LongWait depth 1");
}

TEST_CASE("asked for, the baseline is compared even though the wait had a waker") {
  Built b = build(kRules, kChain);
  DiagnoseOptions o;
  o.baseline = true;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  // The fast round is the baseline; its path runs through all three processes.
  CHECK(d.baseline == segment_at(b, 100, 10));
  CHECK(path(b, d.baseline_path) ==
        "100@10 message, 200@1 message, 300@1 timer, 300@12 message, 200@11 message, 100@10 -");
  // The server was blocked in the read the timekeeper's answer ended in the baseline, while
  // the timekeeper was blocked too: it only passed the wait on. The timekeeper is the
  // culprit.
  CHECK(causes(b, d) == "300 LongWait depth 1");
  CHECK(path(b, d.path) == "300@102 message, 200@101 message, 100@100 -");
}

TEST_CASE("answering stop at the recursion keeps the timekeeper as the root cause") {
  Built b = build(kRules, chain_timer_armed_by_another_thread());
  ScriptedAnswerer user({1});  // option 1 of the recurse question: stop
  DiagnoseOptions o;
  o.answerer = &user;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(causes(b, d) == "300 LongWait depth 1");
  REQUIRE(d.queries.size() == 1);
  CHECK(d.queries[0].answer.source == AnswerSource::User);
  CHECK(d.queries[0].question.options[1].stop);
  // The timer that ended the timekeeper's wait was armed by another thread: its work began
  // there, and so does the path.
  CHECK(path(b, d.path) == "301@102 timer, 300@102 message, 200@101 message, 100@100 -");
}

TEST_CASE("answer rules decide questions without asking, and name themselves") {
  Built b = build(std::string(kRules) + R"(
answer server { question recurse subject thread.comm == "cw-server" choose stop }
answer keeper { question recurse subject tid == 300 choose recurse }
)",
                  chain_timer_armed_by_another_thread());
  ScriptedAnswerer user({});
  DiagnoseOptions o;
  o.answerer = &user;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(user.asked.empty());
  // The server only passed the wait on: nobody asks about it, so its rule never decides.
  REQUIRE(d.queries.size() == 1);
  CHECK(d.queries[0].answer.source == AnswerSource::Rule);
  CHECK(d.queries[0].answer.rule == "t/keeper");
  CHECK(causes(b, d) == "300 LongWait depth 1");
}

// A circle broken by a timeout (the Argus paper, §2.3): cw-browser asks cw-renderer and waits
// 1.5 s for the answer; cw-renderer, busy with a key press, first needs cw-browser's help
// and waits for it on another socket. Round 1 at 10 ms is answered at once (the baseline).
const char* const kCircle = R"(
process 100 comm=cw-browser
thread 100 pid=100 comm=cw-browser
process 200 comm=cw-renderer ppid=100
thread 200 pid=200 comm=cw-renderer
1ms 200 syscall_enter name=read fd=4
1ms 200 switch_out state=S
10ms 100 syscall_enter name=write fd=3
10ms 100 send object=1 offset=0 len=8 peer=200 fd=3
10ms 100 syscall_exit name=write ret=8
10ms 100 syscall_enter name=read fd=3
10ms 100 switch_out state=S
11ms 200 switch_in
11ms 200 syscall_exit name=read ret=8
11ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
11ms 200 syscall_enter name=write fd=4
11ms 200 send object=2 offset=0 len=8 peer=100 fd=4
11ms 200 syscall_exit name=write ret=8
11ms 200 syscall_enter name=read fd=4
11ms 200 switch_out state=S
12ms 100 switch_in
12ms 100 syscall_exit name=read ret=8
12ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
99ms 100 syscall_enter name=write fd=3
99ms 100 send object=1 offset=8 len=8 peer=200 fd=3
99ms 100 syscall_exit name=write ret=8
99ms 200 switch_in
99ms 200 syscall_exit name=read ret=8
99ms 200 recv object=1 offset=8 len=8 peer=100 fd=4
99ms 200 syscall_enter name=write fd=4
99ms 200 send object=5 offset=0 len=8 peer=100 fd=4
99ms 200 syscall_exit name=write ret=8
99ms 200 syscall_enter name=read fd=9
99ms 200 switch_out state=S
100ms 100 syscall_enter name=write fd=3
100ms 100 send object=1 offset=16 len=8 peer=200 fd=3
100ms 100 syscall_exit name=write ret=8
100ms 100 syscall_enter name=read fd=3
100ms 100 switch_out state=S
1600ms 100 switch_in
1600ms 100 syscall_exit name=read ret=-110
1600ms 100 syscall_enter name=read fd=8
1600ms 100 syscall_exit name=read ret=8
1600ms 100 recv object=5 offset=0 len=8 peer=200 fd=8
1600ms 100 syscall_enter name=write fd=8
1600ms 100 send object=6 offset=0 len=8 peer=200 fd=8
1600ms 100 syscall_exit name=write ret=8
1601ms 200 switch_in
1601ms 200 syscall_exit name=read ret=8
1601ms 200 recv object=6 offset=0 len=8 peer=100 fd=9
1601ms 200 syscall_enter name=read fd=4
1601ms 200 syscall_exit name=read ret=8
1601ms 200 recv object=1 offset=16 len=8 peer=100 fd=4
1601ms 200 syscall_enter name=write fd=4
1601ms 200 send object=2 offset=8 len=8 peer=100 fd=4
1601ms 200 syscall_exit name=write ret=8
1602ms 100 syscall_enter name=read fd=3
1602ms 100 syscall_exit name=read ret=8
1602ms 100 recv object=2 offset=8 len=8 peer=200 fd=3
)";

TEST_CASE("a circular wait: the culprit waited for the hang's own thread, which timed out") {
  Built b = build(kRules, kCircle);
  DiagnoseOptions o;
  o.symptom.mode = SymptomRequest::Mode::ThreadAt;
  o.symptom.tid = 100;
  o.symptom.at_ns = 500000000;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.kind == HangKind::LongWait);
  // The renderer blocked on another socket than the one it answers from: the culprit.
  CHECK(causes(b, d) == "200 LongWait depth 1");
  // Only whether to diagnose the renderer too: each slice step had one strong edge from
  // another thread against the thread's own neighbour edge, which is no question.
  REQUIRE(d.queries.size() == 1);
  CHECK(d.queries[0].question.kind == QuestionKind::Recurse);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0] ==
        "circular wait: cw-renderer 200 waited for cw-browser, the hang's own thread, blocked "
        "in turn on cw-renderer 200: the circle lasted until the hang's wait ended (it timed "
        "out after 1500.0 ms)");
}

TEST_CASE("by name: the longest stretch of the threads so named, main or not") {
  Built b = build(kRules, kCircle);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-browser";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.start_ns == 100000000);
  DiagnoseOptions automatic;  // the renderer's wait is longer: auto picks it
  CHECK(diagnose(b.trace, b.result, b.rules, automatic).hang.tid == 200);
  o.symptom.thread_name = "cw-nobody";
  CHECK_THROWS_WITH_AS(diagnose(b.trace, b.result, b.rules, o),
                       "no thread named 'cw-nobody' in the trace", DiagnoseError);
}

TEST_CASE(
    "a busy culprit is reported with its busiest segment, not the one at the window's start") {
  // cw-worker answers cw-client; in the slow round it computes 399 ms after a cut
  // (clock_nanosleep) just past the start of the client's wait.
  Built b = build(kRules, R"(
process 100 comm=cw-client
thread 100 pid=100 comm=cw-client
process 200 comm=cw-worker ppid=100
thread 200 pid=200 comm=cw-worker
1ms 200 syscall_enter name=read fd=4
1ms 200 switch_out state=S
10ms 100 syscall_enter name=write fd=3
10ms 100 send object=1 offset=0 len=8 peer=200 fd=3
10ms 100 syscall_exit name=write ret=8
10ms 100 syscall_enter name=read fd=3
10ms 100 switch_out state=S
11ms 200 switch_in
11ms 200 syscall_exit name=read ret=8
11ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
12ms 200 syscall_enter name=write fd=4
12ms 200 send object=2 offset=0 len=8 peer=100 fd=4
12ms 200 syscall_exit name=write ret=8
12ms 200 syscall_enter name=read fd=4
12ms 200 switch_out state=S
13ms 100 switch_in
13ms 100 syscall_exit name=read ret=8
13ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
100ms 100 syscall_enter name=write fd=3
100ms 100 send object=1 offset=8 len=8 peer=200 fd=3
100ms 100 syscall_exit name=write ret=8
100ms 100 syscall_enter name=read fd=3
100ms 100 switch_out state=S
101ms 200 switch_in
101ms 200 syscall_exit name=read ret=8
101ms 200 recv object=1 offset=8 len=8 peer=100 fd=4
101ms 200 syscall_enter name=clock_nanosleep
101ms 200 syscall_exit name=clock_nanosleep ret=0
500ms 200 syscall_enter name=write fd=4
500ms 200 send object=2 offset=8 len=8 peer=100 fd=4
500ms 200 syscall_exit name=write ret=8
500ms 200 syscall_enter name=read fd=4
500ms 200 switch_out state=S
501ms 100 switch_in
501ms 100 syscall_exit name=read ret=8
501ms 100 recv object=2 offset=8 len=8 peer=200 fd=3
)");
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
  REQUIRE_FALSE(d.root_causes.empty());
  CHECK(d.root_causes[0].what.starts_with("ran 399.0 ms on a CPU"));
}

TEST_CASE("--hang TID@TIME names the hang; an unknown thread is an error that says so") {
  Built b = build(kRules, kChain);
  DiagnoseOptions o;
  o.symptom.mode = SymptomRequest::Mode::ThreadAt;
  o.symptom.tid = 200;
  o.symptom.at_ns = 300000000;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 200);
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(causes(b, d) == "300 LongWait depth 1");

  o.symptom.tid = 999;
  CHECK_THROWS_AS(diagnose(b.trace, b.result, b.rules, o), DiagnoseError);
}

TEST_CASE("LongRunning: the slice goes back to the message that started the work") {
  Built b = build(kRules, R"(
process 100 comm=cw-ui
thread 100 pid=100 comm=cw-ui
process 200 comm=cw-sender ppid=100
thread 200 pid=200 comm=cw-sender
1ms 100 syscall_enter name=read fd=3
1ms 100 switch_out state=S
50ms 200 syscall_enter name=write fd=4
50ms 200 send object=7 offset=0 len=8 peer=100 fd=4
50ms 200 syscall_exit name=write ret=8
50ms 200 syscall_enter name=read fd=4
50ms 200 switch_out state=S
51ms 100 switch_in
51ms 100 recv object=7 offset=0 len=8 peer=200 fd=3
51ms 100 syscall_exit name=read ret=8
150ms 100 switch_out state=R
152ms 100 switch_in
400ms 100 syscall_enter name=write fd=3
400ms 100 send object=8 offset=0 len=8 peer=200 fd=3
400ms 100 syscall_exit name=write ret=8
400ms 100 syscall_enter name=read fd=3
400ms 100 switch_out state=S
401ms 200 switch_in
401ms 200 recv object=8 offset=0 len=8 peer=100 fd=4
401ms 200 syscall_exit name=read ret=8
)");
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongRunning);
  CHECK(causes(b, d) == "100 LongRunning depth 0");
  CHECK(d.root_causes[0].what == "ran 347.0 ms on a CPU (2.0 ms runnable) with read ×1");
  CHECK(path(b, d.path) == "200@50 message, 100@1 -");
  CHECK(d.queries.empty());
}

TEST_CASE("RepeatedYield with no data flag is reported as such, with the loop's calls") {
  // The same program recorded without flag tracing: no flag events at all.
  std::string spin = kSpin, unflagged;
  for (size_t at = 0, nl; at < spin.size(); at = nl + 1) {
    nl = spin.find('\n', at);
    std::string line = spin.substr(at, nl - at);
    if (line.find("flag_") == std::string::npos) unflagged += line + "\n";
  }
  Built b = build(kRules, unflagged);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::RepeatedYield);
  CHECK(d.yield_without_flag);
  REQUIRE(!d.yield_loop.syscalls.empty());
  CHECK(b.trace.strings.get(d.yield_loop.syscalls[0].name) == "clock_nanosleep");
  CHECK(d.yield_loop.syscalls[0].count == 20);
  CHECK(causes(b, d) == "100 RepeatedYield depth 0");
}

TEST_CASE("RepeatedYield recorded with flag events but diagnosed with no flag rule: the loop") {
  // Recorded with a pack's flag traced, diagnosed without it: the flag events are there,
  // but no rule says they matter, so the report is the yield loop's, not a missing write's.
  std::string rules = kRules;
  rules.erase(rules.find("flag ready"));
  Built b = build(rules, kSpin);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.kind == HangKind::RepeatedYield);
  CHECK(d.yield_without_flag);
  CHECK(causes(b, d) == "100 RepeatedYield depth 0");
}

TEST_CASE("RepeatedYield with the flag declared: the setter's sleep is the root cause") {
  Built b = build(kRules, kSpin);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.kind == HangKind::RepeatedYield);
  CHECK(!d.yield_without_flag);
  CHECK(causes(b, d) == "101 LongWait depth 1, 100 RepeatedYield depth 0");
  CHECK(d.root_causes[0].what == "blocked 41.5 ms in clock_nanosleep");
}

TEST_CASE("RepeatedYield ended by a flag: the path runs through the flag's write") {
  // The spinner's setter no longer sleeps: it reads what cw-source sends after 40 ms, then
  // sets the flag. cw-source also sends the spinner a note, which the spinner reads after
  // its loop ended, in the loop's last segment. The loop waited for the flag, so the path
  // is cw-source → cw-setter → cw-spinner, not cw-source's note straight to the spinner.
  std::string trace = kSpin;
  replace_once(
      trace,
      "thread 101 pid=100 comm=cw-setter\n0ms 101 syscall_enter name=clock_nanosleep fd=-1\n",
      "thread 101 pid=100 comm=cw-setter\nprocess 300 comm=cw-source\n"
      "thread 300 pid=300 comm=cw-source\n"
      "0ms 300 syscall_enter name=clock_nanosleep fd=-1\n0ms 300 switch_out state=S\n"
      "0ms 101 syscall_enter name=read fd=5\n");
  replace_once(
      trace, "41500us 101 switch_in\n41500us 101 syscall_exit name=clock_nanosleep ret=0\n",
      "41ms 300 switch_in\n41ms 300 syscall_exit name=clock_nanosleep ret=0\n"
      "41100us 300 send object=7 offset=0 len=8\n41200us 300 send object=8 offset=0 len=8\n"
      "41500us 101 switch_in\n41500us 101 syscall_exit name=read ret=8\n"
      "41500us 101 recv object=7 offset=0 len=8\n");
  replace_once(trace, "42ms 100 flag_read flag=ready value=1\n",
               "42ms 100 flag_read flag=ready value=1\n42500us 100 recv object=8 offset=0 len=8\n");
  // The spinner yields instead of sleeping: its loop is one segment, as a sched_yield loop's.
  replace_all(trace, "100 syscall_enter name=clock_nanosleep",
              "100 syscall_enter name=sched_yield");
  replace_all(trace, "100 syscall_exit name=clock_nanosleep", "100 syscall_exit name=sched_yield");
  replace_all(trace, "100 switch_out state=S", "100 switch_out state=R");
  Built b = build(kRules, trace);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.kind == HangKind::RepeatedYield);
  CHECK(causes(b, d) == "300 LongWait depth 2, 101 LongWait depth 1, 100 RepeatedYield depth 0");
  std::string tids;
  for (const PathStep& st : d.path) {
    const std::string t = std::to_string(b.graph().segments[st.segment].tid);
    if (!tids.ends_with(t)) tids += (tids.empty() ? "" : " ") + t;
  }
  CHECK(tids == "300 101 100");
}

TEST_CASE("FindSimilarNode: only a quick wait that ended before the hang is a baseline") {
  // Futex waits with the same calls: at 0 ms a quick one (5 ms, woken); at 100 ms one as
  // slow as the hang but woken (another result, not quicker); the hang at 400 ms timed out
  // (-110) after 100 ms; at 600 ms a quick one, after the hang.
  Built b = build(kRules, R"(
process 100 comm=app
thread 100 pid=100 comm=app
0ms 100 syscall_enter name=futex op=wait resource=0x10
0ms 100 switch_out state=S
5ms 100 switch_in
5ms 100 syscall_exit name=futex ret=0
100ms 100 syscall_enter name=futex op=wait resource=0x10
100ms 100 switch_out state=S
200ms 100 switch_in
200ms 100 syscall_exit name=futex ret=0
400ms 100 syscall_enter name=futex op=wait resource=0x10
400ms 100 switch_out state=S
500ms 100 switch_in
500ms 100 syscall_exit name=futex ret=-110
600ms 100 syscall_enter name=futex op=wait resource=0x10
600ms 100 switch_out state=S
605ms 100 switch_in
605ms 100 syscall_exit name=futex ret=0
)");
  ThreadEvents events(b.trace);
  uint32_t hang = segment_at(b, 100, 400);
  SegmentProfile p = profile_segment(b.trace, events, b.graph(), hang);
  std::vector<SimilarSegment> similar = find_similar(b.trace, events, b.graph(), hang, p);
  REQUIRE(similar.size() == 1);
  CHECK(similar[0].segment == segment_at(b, 100, 0));
  CHECK(similar[0].result_differs);
  CHECK(similar[0].wait_result == 0);
  CHECK(similar[0].wait_ns == 5000000);
}

TEST_CASE("FindSimilarNode: other calls or other peers are not similar") {
  Built b = build(kRules, kChain);
  ThreadEvents events(b.trace);
  // The server's wait for the timekeeper (fd 5) is not like its wait for requests (fd 4).
  uint32_t hang = segment_at(b, 200, 101);
  SegmentProfile p = profile_segment(b.trace, events, b.graph(), hang);
  std::vector<SimilarSegment> similar = find_similar(b.trace, events, b.graph(), hang, p);
  REQUIRE(similar.size() == 1);
  CHECK(similar[0].segment == segment_at(b, 200, 11));
}

// Three processes: cw-client asks cw-server; round 1 at 10 ms the server answers from its
// cache; round 2 at 100 ms it asks cw-backend, which computes 500 ms before answering.
const char* const kBackend = R"(
process 100 comm=cw-client
thread 100 pid=100 comm=cw-client
process 200 comm=cw-server ppid=100
thread 200 pid=200 comm=cw-server
process 300 comm=cw-backend ppid=100
thread 300 pid=300 comm=cw-backend
1ms 200 syscall_enter name=read fd=4
1ms 200 switch_out state=S
1ms 300 syscall_enter name=read fd=6
1ms 300 switch_out state=S
10ms 100 syscall_enter name=write fd=3
10ms 100 send object=1 offset=0 len=8 peer=200 fd=3
10ms 100 syscall_exit name=write ret=8
10ms 100 syscall_enter name=read fd=3
10ms 100 switch_out state=S
11ms 200 switch_in
11ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
11ms 200 syscall_exit name=read ret=8
11ms 200 syscall_enter name=write fd=4
11ms 200 send object=2 offset=0 len=8 peer=100 fd=4
11ms 200 syscall_exit name=write ret=8
11ms 200 syscall_enter name=read fd=4
11ms 200 switch_out state=S
12ms 100 switch_in
12ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
12ms 100 syscall_exit name=read ret=8
100ms 100 syscall_enter name=write fd=3
100ms 100 send object=1 offset=8 len=8 peer=200 fd=3
100ms 100 syscall_exit name=write ret=8
100ms 100 syscall_enter name=read fd=3
100ms 100 switch_out state=S
101ms 200 switch_in
101ms 200 recv object=1 offset=8 len=8 peer=100 fd=4
101ms 200 syscall_exit name=read ret=8
101ms 200 syscall_enter name=write fd=5
101ms 200 send object=3 offset=0 len=8 peer=300 fd=5
101ms 200 syscall_exit name=write ret=8
101ms 200 syscall_enter name=read fd=5
101ms 200 switch_out state=S
102ms 300 switch_in
102ms 300 recv object=3 offset=0 len=8 peer=200 fd=6
102ms 300 syscall_exit name=read ret=8
602ms 300 syscall_enter name=write fd=6
602ms 300 send object=4 offset=0 len=8 peer=200 fd=6
602ms 300 syscall_exit name=write ret=8
602ms 300 syscall_enter name=read fd=6
602ms 300 switch_out state=S
603ms 200 switch_in
603ms 200 recv object=4 offset=0 len=8 peer=300 fd=5
603ms 200 syscall_exit name=read ret=8
603ms 200 syscall_enter name=write fd=4
603ms 200 send object=2 offset=8 len=8 peer=100 fd=4
603ms 200 syscall_exit name=write ret=8
603ms 200 syscall_enter name=read fd=4
603ms 200 switch_out state=S
604ms 100 switch_in
604ms 100 recv object=2 offset=8 len=8 peer=200 fd=3
604ms 100 syscall_exit name=read ret=8
)";

// The stdlib's way with waits for data: a read cuts the segment only when it blocks, so a
// read whose data was already there stays in the segment of what came before it (two
// messages with different peers are different steps, as in the stdlib).
const char* const kDataWaitRules = R"(
split wait.entry {
  at syscall_enter
  where name in ["clock_nanosleep", "futex", "poll"]
  cut before
  neighbour weak
}
split data.wait {
  at switch_out
  where state != "R" and syscall.name in ["read"]
  cut syscall
  neighbour weak
}
split peers.disjoint { peers stream neighbour weak }
link stream { from send to recv join from.object == to.object pick overlap range offset, len }
edge message { link stream strength strong kind message }
link wakeup { from wakeup to switch_in join from.target == to.tid pick next }
edge wakeup.default { link wakeup strength weak kind wakeup }
)";

// cw-installer asks cw-authd, which asks cw-agent and waits for its answer at most 1 s.
// Round 1 at 10 ms: the agent answers before cw-authd even reads, so that read does not
// block (the request, the answer and the reply to the installer are one segment of
// cw-authd). Round 2 at 100 ms: the agent polls for keys in 100 ms slices and never
// answers; cw-authd's read times out at 1101 ms and it denies.
const char* const kMissingAnswer = R"(
process 100 comm=cw-installer
thread 100 pid=100 comm=cw-installer
process 200 comm=cw-authd ppid=100
thread 200 pid=200 comm=cw-authd
process 300 comm=cw-agent ppid=100
thread 300 pid=300 comm=cw-agent
1ms 200 syscall_enter name=read fd=3
1ms 200 switch_out state=S
1ms 300 syscall_enter name=read fd=8
1ms 300 switch_out state=S
10ms 100 syscall_enter name=write fd=5
10ms 100 send object=1 offset=0 len=12 peer=200 fd=5
10ms 100 syscall_exit name=write ret=12
10ms 100 syscall_enter name=read fd=5
10ms 100 switch_out state=S
11ms 200 switch_in
11ms 200 recv object=1 offset=0 len=12 peer=100 fd=3
11ms 200 syscall_exit name=read ret=12
11ms 200 syscall_enter name=write fd=7
11ms 200 wakeup target=300
11ms 200 syscall_exit name=write ret=12
11ms 200 send object=2 offset=0 len=12 peer=300 fd=7
11ms 200 switch_out state=R
11ms 300 switch_in
11ms 300 recv object=2 offset=0 len=12 peer=200 fd=8
11ms 300 syscall_exit name=read ret=12
11ms 300 syscall_enter name=write fd=8
11ms 300 send object=3 offset=0 len=12 peer=200 fd=8
11ms 300 syscall_exit name=write ret=12
11ms 300 syscall_enter name=read fd=8
11ms 300 switch_out state=S
12ms 200 switch_in
12ms 200 syscall_enter name=read fd=7
12ms 200 syscall_exit name=read ret=12
12ms 200 recv object=3 offset=0 len=12 peer=300 fd=7
12ms 200 syscall_enter name=write fd=3
12ms 200 send object=4 offset=0 len=12 peer=100 fd=3
12ms 200 syscall_exit name=write ret=12
12ms 200 syscall_enter name=read fd=3
12ms 200 switch_out state=S
13ms 100 switch_in
13ms 100 recv object=4 offset=0 len=12 peer=200 fd=5
13ms 100 syscall_exit name=read ret=12
100ms 100 syscall_enter name=write fd=5
100ms 100 send object=1 offset=12 len=12 peer=200 fd=5
100ms 100 syscall_exit name=write ret=12
100ms 100 syscall_enter name=read fd=5
100ms 100 switch_out state=S
101ms 200 switch_in
101ms 200 recv object=1 offset=12 len=12 peer=100 fd=3
101ms 200 syscall_exit name=read ret=12
101ms 200 syscall_enter name=write fd=7
101ms 200 wakeup target=300
101ms 200 syscall_exit name=write ret=12
101ms 200 send object=2 offset=12 len=12 peer=300 fd=7
101ms 200 syscall_enter name=read fd=7
101ms 200 switch_out state=S
102ms 300 switch_in
102ms 300 recv object=2 offset=12 len=12 peer=200 fd=8
102ms 300 syscall_exit name=read ret=12
102ms 300 syscall_enter name=poll
102ms 300 switch_out state=S
202ms 300 switch_in
202ms 300 syscall_exit name=poll ret=0
202ms 300 syscall_enter name=poll
202ms 300 switch_out state=S
302ms 300 switch_in
302ms 300 syscall_exit name=poll ret=0
302ms 300 syscall_enter name=poll
302ms 300 switch_out state=S
402ms 300 switch_in
402ms 300 syscall_exit name=poll ret=0
402ms 300 syscall_enter name=poll
402ms 300 switch_out state=S
502ms 300 switch_in
502ms 300 syscall_exit name=poll ret=0
502ms 300 syscall_enter name=poll
502ms 300 switch_out state=S
602ms 300 switch_in
602ms 300 syscall_exit name=poll ret=0
602ms 300 syscall_enter name=poll
602ms 300 switch_out state=S
702ms 300 switch_in
702ms 300 syscall_exit name=poll ret=0
702ms 300 syscall_enter name=poll
702ms 300 switch_out state=S
802ms 300 switch_in
802ms 300 syscall_exit name=poll ret=0
802ms 300 syscall_enter name=poll
802ms 300 switch_out state=S
902ms 300 switch_in
902ms 300 syscall_exit name=poll ret=0
902ms 300 syscall_enter name=poll
902ms 300 switch_out state=S
1002ms 300 switch_in
1002ms 300 syscall_exit name=poll ret=0
1002ms 300 syscall_enter name=poll
1002ms 300 switch_out state=S
1101ms 200 switch_in
1101ms 200 syscall_exit name=read ret=-11
1101ms 200 syscall_enter name=write fd=3
1101ms 200 wakeup target=100
1101ms 200 syscall_exit name=write ret=12
1101ms 200 send object=4 offset=12 len=12 peer=100 fd=3
1101ms 200 syscall_enter name=read fd=3
1101ms 200 switch_out state=S
1102ms 100 switch_in
1102ms 100 recv object=4 offset=12 len=12 peer=200 fd=5
1102ms 100 syscall_exit name=read ret=12
)";

TEST_CASE("FindSimilarNode: a quick run of the wait inside a segment (it did not block)") {
  Built b = build(kDataWaitRules, kMissingAnswer);
  ThreadEvents events(b.trace);
  uint32_t hang = segment_at(b, 200, 101);
  SegmentProfile p = profile_segment(b.trace, events, b.graph(), hang);
  REQUIRE(p.longest_block_ns == 1000000000);
  std::vector<SimilarSegment> similar = find_similar(b.trace, events, b.graph(), hang, p);
  // Round 1's read of the agent's answer is in the segment that sent the agent the
  // request at 11 ms.
  REQUIRE(similar.size() == 1);
  CHECK(similar[0].segment == segment_at(b, 200, 11));
}

TEST_CASE("a missing answer: the agent that answered within the baseline's own step") {
  Built b = build(kDataWaitRules, kMissingAnswer);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.tid == 100);
  REQUIRE(!d.root_causes.empty());
  CHECK(causes(b, d) == "300 LongWait depth 2, 200 LongWait depth 1");
  CHECK(d.root_causes[0].what.starts_with(
      "did not send the message that woke cw-authd 200 in the baseline at 0.011000 s"));
  // The baseline's path ends where it began: the agent's answer went to the cw-authd
  // step that sent the request; no weaker explanation of the agent's run was asked for.
  for (const Query& q : d.queries) CHECK(q.question.kind != QuestionKind::Edge);
}

TEST_CASE("a culprit found below the path's own culprit leads the causal path") {
  // The chain with the timekeeper reading cw-clock's pipe instead of a timer: in round 1
  // the clock writes at once, in round 2 it sleeps and the read times out after 500 ms.
  // The hang's own path runs back to the timekeeper's wait, the step that took the time:
  // that path is found before the recursion finds the clock below it (from the
  // baseline), which then leads the path.
  std::string trace = kChain;
  replace_once(trace, "thread 300 pid=300 comm=cw-timekeeper\n",
               "thread 300 pid=300 comm=cw-timekeeper\nprocess 400 comm=cw-clock ppid=100\n"
               "thread 400 pid=400 comm=cw-clock\n1ms 400 syscall_enter name=read fd=5\n"
               "1ms 400 switch_out state=S\n");
  replace_once(
      trace,
      "12ms 300 syscall_enter name=timerfd_settime fd=3\n"
      "12ms 300 timer_arm timer=9 expires_ns=13000000\n"
      "12ms 300 syscall_exit name=timerfd_settime ret=0\n"
      "12ms 300 syscall_enter name=read fd=3\n12ms 300 switch_out state=S\n"
      "13ms 300 timer_fire timer=9\n13ms 300 switch_in\n13ms 300 syscall_exit name=read ret=8\n",
      "12ms 300 syscall_enter name=read fd=3\n12ms 300 switch_out state=S\n"
      "12500us 400 switch_in\n12500us 400 syscall_exit name=read ret=1\n"
      "13ms 400 syscall_enter name=write fd=1\n"
      "13ms 400 send object=9 offset=0 len=8 peer=300 fd=1\n"
      "13ms 400 syscall_exit name=write ret=8\n"
      "13ms 400 syscall_enter name=clock_nanosleep fd=-1\n13ms 400 switch_out state=S\n"
      "13ms 300 switch_in\n13ms 300 syscall_exit name=read ret=8\n"
      "13ms 300 recv object=9 offset=0 len=8 peer=400 fd=3\n");
  replace_once(trace,
               "102ms 300 syscall_enter name=timerfd_settime fd=3\n"
               "102ms 300 timer_arm timer=9 expires_ns=602000000\n"
               "102ms 300 syscall_exit name=timerfd_settime ret=0\n"
               "102ms 300 syscall_enter name=read fd=3\n102ms 300 switch_out state=S\n"
               "602ms 300 timer_fire timer=9\n602ms 300 switch_in\n"
               "602ms 300 syscall_exit name=read ret=8\n",
               "102ms 300 syscall_enter name=read fd=3\n102ms 300 switch_out state=S\n"
               "602ms 300 switch_in\n602ms 300 syscall_exit name=read ret=-11\n");
  Built b = build(kRules, trace);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  REQUIRE(d.root_causes.size() == 2);
  CHECK(causes(b, d).starts_with("400 "));
  CHECK(causes(b, d).ends_with("300 LongWait depth 1"));
  CHECK(path(b, d.path) ==
        "400@13 -, 200@14 message, 300@13 split, 300@102 message, 200@101 message, 100@100 -");
}

TEST_CASE("a wait another thread ended: its own waker is followed before any baseline") {
  // Compared with the cached round, the server looks hung (blocked on the backend); the
  // hang's own path shows the backend computing 500 ms of the 504.
  Built b = build(kRules, kBackend);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-client";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(d.baseline == kNoIndex);
  CHECK(causes(b, d) == "300 LongRunning depth 1");
  // The backend's computing began with the server's request, where the path begins.
  CHECK(path(b, d.path) == "200@11 message, 300@1 message, 200@101 message, 100@100 -");
}

TEST_CASE("one wait in slices that timed out: the slice a wake-up ended is followed") {
  // cw-client reads with a 100 ms timeout (EAGAIN) until cw-server, computing 319 ms on
  // the request, answers at 320 ms; the hang is named in a slice that timed out.
  Built b = build(kRules, kClientServer + R"(
0ms 200 syscall_enter name=read fd=4
0ms 200 switch_out state=S
0ms 100 syscall_enter name=write fd=3
0ms 100 send object=1 offset=0 len=8 peer=200 fd=3
0ms 100 syscall_exit name=write ret=8
0ms 100 syscall_enter name=read fd=3
0ms 100 switch_out state=S
1ms 200 switch_in
1ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
1ms 200 syscall_exit name=read ret=8
100ms 100 switch_in
100ms 100 syscall_exit name=read ret=-11
100ms 100 syscall_enter name=read fd=3
100ms 100 switch_out state=S
200ms 100 switch_in
200ms 100 syscall_exit name=read ret=-11
200ms 100 syscall_enter name=read fd=3
200ms 100 switch_out state=S
300ms 100 switch_in
300ms 100 syscall_exit name=read ret=-11
300ms 100 syscall_enter name=read fd=3
300ms 100 switch_out state=S
320ms 200 syscall_enter name=write fd=4
320ms 200 send object=2 offset=0 len=8 peer=100 fd=4
320ms 200 syscall_exit name=write ret=8
320ms 200 syscall_enter name=read fd=4
320ms 200 switch_out state=S
321ms 100 switch_in
321ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
321ms 100 syscall_exit name=read ret=8
)");
  ThreadEvents events(b.trace);
  LogicalWait lw = logical_wait(b.trace, events, b.graph(), segment_at(b, 100, 100));
  CHECK(lw.first == segment_at(b, 100, 0));
  CHECK(lw.woken == segment_at(b, 100, 300));
  CHECK(lw.last == lw.woken);
  DiagnoseOptions o;
  o.symptom.mode = SymptomRequest::Mode::ThreadAt;
  o.symptom.tid = 100;
  o.symptom.at_ns = 150000000;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
  CHECK(path(b, d.path) == "200@0 message, 100@300 -");
}

TEST_CASE("a wait that timed out and was acted on is over: the next wait is a new one") {
  // cw-client's read times out at 100 ms; it then writes to cw-server (it acts on the
  // timeout) and reads again, and that read is answered at 320 ms. The first read is a
  // wait of its own: its timeout ended it, and the answer belongs to the second.
  Built b = build(kRules, kClientServer + R"(
0ms 200 syscall_enter name=read fd=4
0ms 200 switch_out state=S
0ms 100 syscall_enter name=read fd=3
0ms 100 switch_out state=S
100ms 100 switch_in
100ms 100 syscall_exit name=read ret=-11
100ms 100 syscall_enter name=write fd=3
100ms 100 send object=1 offset=0 len=8 peer=200 fd=3
100ms 100 syscall_exit name=write ret=8
100ms 100 syscall_enter name=read fd=3
100ms 100 switch_out state=S
101ms 200 switch_in
101ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
101ms 200 syscall_exit name=read ret=8
320ms 200 syscall_enter name=write fd=4
320ms 200 send object=2 offset=0 len=8 peer=100 fd=4
320ms 200 syscall_exit name=write ret=8
320ms 200 syscall_enter name=read fd=4
320ms 200 switch_out state=S
321ms 100 switch_in
321ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
321ms 100 syscall_exit name=read ret=8
)");
  ThreadEvents events(b.trace);
  LogicalWait first = logical_wait(b.trace, events, b.graph(), segment_at(b, 100, 0));
  CHECK(first.last == first.first);
  CHECK(first.woken == kNoIndex);
  LogicalWait second = logical_wait(b.trace, events, b.graph(), segment_at(b, 100, 100));
  CHECK(second.first == second.last);
  CHECK(second.woken == segment_at(b, 100, 100));
}

TEST_CASE("a poll loop on a set of descriptors is one wait: the slice a message ended is found") {
  // cw-client polls its two descriptors (poll names no one descriptor: fd -1, count 2) with
  // a 100 ms timeout; the first two slices time out, the third is ended by cw-server's
  // answer at 250 ms. The slice at 0 ms is one of the three of a single wait.
  Built b = build(kRules, kClientServer + R"(
0ms 100 syscall_enter name=poll fd=-1 count=2 timeout_ns=100000000
0ms 100 switch_out state=S
100ms 100 switch_in
100ms 100 syscall_exit name=poll ret=0
100ms 100 syscall_enter name=poll fd=-1 count=2 timeout_ns=100000000
100ms 100 switch_out state=S
200ms 100 switch_in
200ms 100 syscall_exit name=poll ret=0
200ms 100 syscall_enter name=poll fd=-1 count=2 timeout_ns=100000000
200ms 100 switch_out state=S
250ms 200 send object=7 offset=0 len=8 peer=100 fd=4
251ms 100 switch_in
251ms 100 syscall_exit name=poll ret=1
251ms 100 recv object=7 offset=0 len=8 peer=200 fd=3
)");
  ThreadEvents events(b.trace);
  LogicalWait lw = logical_wait(b.trace, events, b.graph(), segment_at(b, 100, 0));
  CHECK(lw.first == segment_at(b, 100, 0));
  CHECK(lw.woken == segment_at(b, 100, 200));
  CHECK(lw.last == lw.woken);
  CHECK(lw.wake_edge != kNoIndex);
}

TEST_CASE("a wait whose wake-up went unrecorded: the message read after a ready poll woke it") {
  // cw-client polls two descriptors for cw-server's answer; the server computes 1 s and
  // answers at 999 ms. The client's wake-up was not recorded (an interrupt on another
  // CPU); its poll returns ready, a second poll finds the descriptor ready at once (a cut,
  // as an event loop's wait), and the recvfrom after it takes the message.
  Built b = build(kRules, kClientServer + R"(
0ms 200 switch_in
0ms 100 syscall_enter name=poll fd=-1 count=2 timeout_ns=2000000000
0ms 100 switch_out state=S
999ms 200 send object=7 offset=0 len=8 peer=100 fd=4
1000ms 100 switch_in
1000ms 100 syscall_exit name=poll ret=1
1001ms 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=0
1001ms 100 syscall_exit name=poll ret=1
1001ms 100 syscall_enter name=recvfrom fd=3
1001ms 100 recv object=7 offset=0 len=8 peer=200 fd=3
1001ms 100 syscall_exit name=recvfrom ret=8
1002ms 100 syscall_enter name=write fd=1
1002ms 100 syscall_exit name=write ret=8
1003ms 100 exit
1003ms 200 exit
)");
  ThreadEvents events(b.trace);
  LogicalWait lw = logical_wait(b.trace, events, b.graph(), segment_at(b, 100, 0));
  CHECK(lw.woken == segment_at(b, 100, 1001));
  REQUIRE(lw.wake_edge != kNoIndex);
  CHECK(b.graph().segments[b.graph().edges[lw.wake_edge].from].tid == 200);

  DiagnoseOptions o;
  o.symptom.thread_name = "cw-client";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.segment == segment_at(b, 100, 0));
  CHECK(causes(b, d) == "200 LongRunning depth 1");
}

TEST_CASE("a wait that timed out as its answer came: the message taken before it blocked again") {
  // curl's 1 s poll times out at 1000 ms, just before lighttpd relays the answer (1002 ms);
  // curl polls again, finds the descriptor ready at once, polls its socket, and reads the
  // answer, without blocking in between. The answer ended the wait as surely as a wake-up
  // would have: sent after the timed-out slice returned, but before the thread waited again.
  Built b = build(kRules, kClientServer + R"(
0ms 200 switch_in
0ms 100 syscall_enter name=poll fd=-1 count=2 timeout_ns=1000000000
0ms 100 switch_out state=S
1000ms 100 switch_in
1000ms 100 syscall_exit name=poll ret=0
1001ms 100 syscall_enter name=poll fd=-1 count=2 timeout_ns=1000000000
1002ms 200 send object=7 offset=0 len=8 peer=100 fd=4
1003ms 100 syscall_exit name=poll ret=1
1004ms 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=0
1004ms 100 syscall_exit name=poll ret=1
1005ms 100 syscall_enter name=recvfrom fd=3
1005ms 100 recv object=7 offset=0 len=8 peer=200 fd=3
1005ms 100 syscall_exit name=recvfrom ret=8
1006ms 100 syscall_enter name=write fd=1
1006ms 100 syscall_exit name=write ret=8
1007ms 100 exit
1007ms 200 exit
)");
  ThreadEvents events(b.trace);
  LogicalWait lw = logical_wait(b.trace, events, b.graph(), segment_at(b, 100, 0));
  REQUIRE(lw.wake_edge != kNoIndex);
  CHECK(lw.woken == segment_at(b, 100, 1004));
  CHECK(b.graph().segments[b.graph().edges[lw.wake_edge].from].tid == 200);

  DiagnoseOptions o;
  o.symptom.thread_name = "cw-client";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.segment == segment_at(b, 100, 0));
  CHECK(causes(b, d) == "200 LongRunning depth 1");
}

TEST_CASE("polls of sets of different sizes, or of no descriptor, are different waits") {
  // The slice at 0 ms polls two descriptors, the one at 100 ms three; the sleeps at 300
  // and 400 ms (poll of no descriptor) wait for time only.
  Built b = build(kRules, kClientServer + R"(
0ms 100 syscall_enter name=poll fd=-1 count=2 timeout_ns=100000000
0ms 100 switch_out state=S
100ms 100 switch_in
100ms 100 syscall_exit name=poll ret=0
100ms 100 syscall_enter name=poll fd=-1 count=3 timeout_ns=100000000
100ms 100 switch_out state=S
150ms 200 send object=7 offset=0 len=8 peer=100 fd=4
151ms 100 switch_in
151ms 100 syscall_exit name=poll ret=1
151ms 100 recv object=7 offset=0 len=8 peer=200 fd=3
300ms 100 syscall_enter name=poll fd=-1 count=0 timeout_ns=100000000
300ms 100 switch_out state=S
400ms 100 switch_in
400ms 100 syscall_exit name=poll ret=0
400ms 100 syscall_enter name=poll fd=-1 count=0 timeout_ns=100000000
400ms 100 switch_out state=S
450ms 200 send object=8 offset=0 len=8 peer=100 fd=4
451ms 100 switch_in
451ms 100 syscall_exit name=poll ret=0
451ms 100 recv object=8 offset=0 len=8 peer=200 fd=3
)");
  ThreadEvents events(b.trace);
  LogicalWait pair = logical_wait(b.trace, events, b.graph(), segment_at(b, 100, 0));
  CHECK(pair.first == pair.last);
  CHECK(pair.woken == kNoIndex);
  LogicalWait sleep = logical_wait(b.trace, events, b.graph(), segment_at(b, 100, 300));
  CHECK(sleep.first == sleep.last);
  CHECK(sleep.woken == kNoIndex);
}

TEST_CASE("a thread born during the hang can be its culprit") {
  // cw-parent waits on a pipe from 0 ms; its thread cw-spawner forks cw-child at 5 ms,
  // which computes in two halves (a non-blocking read between) and answers at 415 ms.
  Built b = build(kRules, R"(
process 100 comm=cw-parent
thread 100 pid=100 comm=cw-parent
thread 101 pid=100 comm=cw-spawner
process 200 comm=cw-child ppid=100
thread 200 pid=200 comm=cw-child
0ms 100 syscall_enter name=read fd=3
0ms 100 switch_out state=S
5ms 101 fork child=200 child_pid=200
5ms 200 thread_start parent=101
210ms 200 syscall_enter name=read fd=0
210ms 200 syscall_exit name=read ret=0
415ms 200 syscall_enter name=write fd=1
415ms 200 send object=1 offset=0 len=8 peer=100 fd=1
415ms 200 syscall_exit name=write ret=8
416ms 200 exit code=0
416ms 200 switch_out state=X
420ms 100 switch_in
420ms 100 recv object=1 offset=0 len=8 peer=200 fd=3
420ms 100 syscall_exit name=read ret=8
)");
  DiagnoseOptions o;
  o.symptom.mode = SymptomRequest::Mode::ThreadAt;
  o.symptom.tid = 100;
  o.symptom.at_ns = 100000000;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
}

TEST_CASE("a helper that exited before the hang is not blamed for the answer it never sent") {
  // cw-helper answers cw-main's first request, then exits at 50 ms; the second request
  // at 100 ms times out after 500 ms.
  Built b = build(kRules, R"(
process 100 comm=cw-main
thread 100 pid=100 comm=cw-main
thread 101 pid=100 comm=cw-helper
1ms 101 syscall_enter name=read fd=4
1ms 101 switch_out state=S
10ms 100 syscall_enter name=write fd=3
10ms 100 send object=1 offset=0 len=8 peer=100 fd=3
10ms 100 syscall_exit name=write ret=8
10ms 100 syscall_enter name=read fd=3
10ms 100 switch_out state=S
11ms 101 switch_in
11ms 101 recv object=1 offset=0 len=8 peer=100 fd=4
11ms 101 syscall_exit name=read ret=8
11ms 101 syscall_enter name=write fd=4
11ms 101 send object=2 offset=0 len=8 peer=100 fd=4
11ms 101 syscall_exit name=write ret=8
12ms 100 switch_in
12ms 100 syscall_exit name=read ret=8
12ms 100 recv object=2 offset=0 len=8 peer=100 fd=3
50ms 101 exit code=0
50ms 101 switch_out state=X
100ms 100 syscall_enter name=write fd=3
100ms 100 send object=1 offset=8 len=8 peer=100 fd=3
100ms 100 syscall_exit name=write ret=8
100ms 100 syscall_enter name=read fd=3
100ms 100 switch_out state=S
600ms 100 switch_in
600ms 100 syscall_exit name=read ret=-110
)");
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.tid == 100);
  CHECK(d.baseline == segment_at(b, 100, 10));
  CHECK(causes(b, d) == "100 LongWait depth 0");
}

TEST_CASE("a server busy with another client's request: that request started the work") {
  // cw-server reads cw-a's request at 10 ms and computes 500 ms on it; cw-b's request,
  // sent at 20 ms, waits in the socket until the server reads it at 510 ms.
  Built b = build(kRules, R"(
process 100 comm=cw-b
thread 100 pid=100 comm=cw-b
process 200 comm=cw-server
thread 200 pid=200 comm=cw-server
process 300 comm=cw-a
thread 300 pid=300 comm=cw-a
5ms 200 syscall_enter name=read fd=4
5ms 200 switch_out state=S
10ms 300 syscall_enter name=write fd=3
10ms 300 send object=1 offset=0 len=8 peer=200 fd=3
10ms 300 syscall_exit name=write ret=8
10ms 300 syscall_enter name=read fd=3
10ms 300 switch_out state=S
10ms 200 switch_in
10ms 200 recv object=1 offset=0 len=8 peer=300 fd=4
10ms 200 syscall_exit name=read ret=8
20ms 100 syscall_enter name=write fd=3
20ms 100 send object=5 offset=0 len=8 peer=200 fd=3
20ms 100 syscall_exit name=write ret=8
20ms 100 syscall_enter name=read fd=3
20ms 100 switch_out state=S
510ms 200 syscall_enter name=write fd=4
510ms 200 send object=2 offset=0 len=8 peer=300 fd=4
510ms 200 syscall_exit name=write ret=8
510ms 200 syscall_enter name=read fd=5
510ms 200 recv object=5 offset=0 len=8 peer=100 fd=5
510ms 200 syscall_exit name=read ret=8
511ms 200 syscall_enter name=write fd=5
511ms 200 send object=6 offset=0 len=8 peer=100 fd=5
511ms 200 syscall_exit name=write ret=8
511ms 200 syscall_enter name=read fd=4
511ms 200 switch_out state=S
512ms 100 switch_in
512ms 100 recv object=6 offset=0 len=8 peer=200 fd=3
512ms 100 syscall_exit name=read ret=8
512ms 300 switch_in
512ms 300 recv object=2 offset=0 len=8 peer=200 fd=3
512ms 300 syscall_exit name=read ret=8
)");
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-b";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
  REQUIRE_FALSE(d.root_causes.empty());
  CAPTURE(d.root_causes[0].what);
  CHECK(d.root_causes[0].what.find("its work began with a message from cw-a 300 at 0.005000 s") !=
        std::string::npos);
  // The path begins at cw-a, whose request kept the server busy (the Argus paper, §4.2).
  CHECK(path(b, d.path) == "300@10 message, 200@5 split, 200@510 message, 100@20 -");
}

TEST_CASE(
    "a request relayed by wake-ups whose rule says `request`: the path begins at its sender") {
  // cw-a's request reaches cw-relay, blocked reading, and cw-relay's reaches cw-server,
  // blocked reading: each recorded only as the writer's wake-up of the reader (record
  // --calls scheduler writes no transfer a wake-up explains). cw-server computes 500 ms on
  // it; cw-b's request, sent at 20 ms, waits in the socket until 510 ms. An edge rule marked
  // `request` says those wake-ups carried the request: the path goes back through the
  // relay to cw-a, as it does through a relay's send and recv.
  const std::string rules = std::string(kRules) +
                            "edge stream.wake { link wakeup where from.syscall.name == \"write\" "
                            "strength strong kind message priority 10 request }\n";
  const std::string trace = R"(
process 100 comm=cw-b
thread 100 pid=100 comm=cw-b
process 200 comm=cw-server
thread 200 pid=200 comm=cw-server
process 300 comm=cw-a
thread 300 pid=300 comm=cw-a
process 400 comm=cw-relay
thread 400 pid=400 comm=cw-relay
5ms 200 syscall_enter name=read fd=4
5ms 200 switch_out state=S
5ms 400 syscall_enter name=read fd=3
5ms 400 switch_out state=S
10ms 300 syscall_enter name=write fd=3
10ms 300 wakeup target=400
10ms 300 syscall_exit name=write ret=8
10ms 300 syscall_enter name=read fd=3
10ms 300 switch_out state=S
10ms 400 switch_in
10ms 400 syscall_exit name=read ret=8
11ms 400 syscall_enter name=write fd=4
11ms 400 wakeup target=200
11ms 400 syscall_exit name=write ret=8
11ms 400 syscall_enter name=read fd=4
11ms 400 switch_out state=S
11ms 200 switch_in
11ms 200 syscall_exit name=read ret=8
20ms 100 syscall_enter name=write fd=3
20ms 100 send object=5 offset=0 len=8 peer=200 fd=3
20ms 100 syscall_exit name=write ret=8
20ms 100 syscall_enter name=read fd=3
20ms 100 switch_out state=S
510ms 200 syscall_enter name=write fd=4
510ms 200 wakeup target=400
510ms 200 syscall_exit name=write ret=8
510ms 200 syscall_enter name=read fd=5
510ms 200 recv object=5 offset=0 len=8 peer=100 fd=5
510ms 200 syscall_exit name=read ret=8
511ms 200 syscall_enter name=write fd=5
511ms 200 wakeup target=100
511ms 200 syscall_exit name=write ret=8
511ms 200 syscall_enter name=read fd=4
511ms 200 switch_out state=S
511ms 400 switch_in
511ms 400 syscall_exit name=read ret=8
511ms 400 syscall_enter name=write fd=3
511ms 400 wakeup target=300
511ms 400 syscall_exit name=write ret=8
512ms 100 switch_in
512ms 100 syscall_exit name=read ret=8
512ms 300 switch_in
512ms 300 syscall_exit name=read ret=8
)";
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-b";
  auto first_tid = [](const Built& b, const Diagnosis& d) {
    return d.path.empty()
               ? Tid{0}
               : b.trace.events[b.result.graph.segments[d.path.front().segment].first].tid;
  };
  Built b = build(rules, trace);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
  CAPTURE(path(b, d.path));
  CHECK(first_tid(b, d) == 300);

  // Without the clause the wake-ups are strong but carry nothing: the path begins at the
  // relay, whose request the server took.
  std::string plain = rules;
  plain.erase(plain.find(" request }"), 8);
  Built p = build(plain, trace);
  Diagnosis dp = diagnose(p.trace, p.result, p.rules, o);
  CHECK(causes(p, dp) == "200 LongRunning depth 1");
  CAPTURE(path(p, dp.path));
  CHECK(first_tid(p, dp) == 400);
}

// One process of one thread each (tid = pid), in the order given.
std::string processes(std::initializer_list<std::pair<Tid, const char*>> list) {
  std::string out;
  for (const auto& [tid, comm] : list)
    out += fmt::format("process {0} comm={1}\nthread {0} pid={0} comm={1}\n", tid, comm);
  return out;
}

// Thread `tid` polls one descriptor with a `timeout_ms` timeout, `slices` times from
// `from_ms`, and each poll times out.
std::string timed_out_polls(Tid tid, int from_ms, int slices, int timeout_ms) {
  std::string out;
  for (int i = 0; i < slices; ++i)
    out += fmt::format(
        "{0}ms {2} syscall_enter name=poll fd=-1 count=1 timeout_ns={3}\n{0}ms {2} switch_out "
        "state=S\n{1}ms {2} switch_in\n{1}ms {2} syscall_exit name=poll ret=0\n",
        from_ms + timeout_ms * i, from_ms + timeout_ms * (i + 1), tid, timeout_ms * 1000000LL);
  return out;
}

// Thread `tid` waits on its device record by record: `turns` calls `call` on fd 6 from
// `from_ms`, one every `every_ms`, each `sleep_ms` of it in uninterruptible sleep.
std::string device_turns(Tid tid, const char* call, int from_ms, int turns, int every_ms,
                         int sleep_ms) {
  std::string out;
  for (int i = 0; i < turns; ++i)
    out += fmt::format(
        "{0}ms {2} syscall_enter name={3} fd=6\n{0}ms {2} switch_out state=D\n{1}ms {2} "
        "switch_in\n{1}ms {2} syscall_exit name={3} ret=0\n",
        from_ms + every_ms * i, from_ms + every_ms * i + sleep_ms, tid, call);
  return out;
}

// Thread `tid` writes one byte on `fd`, into stream `object`, and wakes its reader `peer`.
std::string writes_byte(int ms, Tid tid, int fd, int object, Tid peer) {
  return fmt::format(
      "{0}ms {1} syscall_enter name=write fd={2}\n{0}ms {1} send object={3} offset=0 len=1 "
      "peer={4} fd={2}\n{0}ms {1} wakeup target={4}\n{0}ms {1} syscall_exit name=write ret=1\n",
      ms, tid, fd, object, peer);
}

// Thread `tid`, in a read of `fd`, takes that byte, which `peer` wrote.
std::string takes_byte(int ms, Tid tid, int fd, int object, Tid peer) {
  return fmt::format(
      "{0}ms {1} recv object={3} offset=0 len=1 peer={4} fd={2}\n{0}ms {1} syscall_exit "
      "name=read ret=1\n",
      ms, tid, fd, object, peer);
}

TEST_CASE("a slow step's device waits in turns are its wait, not the pipe it drained after") {
  // cw-slow syncs a file record by record: ten fdatasync waits of 100 ms in uninterruptible
  // sleep, none ended by another thread. Then it drains a pipe that cw-writer filled:
  // its first read wakes the writer, blocked on the full pipe since 5 ms; its second read
  // blocks briefly until the writer's write completes. Then it answers cw-hang. Its
  // longest single block is a sync, but the block the segment ends with, the one another
  // thread ended, is the pipe's: the device is still what cw-slow waited on, and nothing
  // is behind it (the writer waited for cw-slow, not the reverse).
  std::string text = processes({{100, "cw-hang"}, {200, "cw-slow"}, {300, "cw-writer"}}) +
                     R"(5ms 300 syscall_enter name=write fd=4
5ms 300 switch_out state=S
5ms 100 syscall_enter name=read fd=3
5ms 100 switch_out state=S
)" + device_turns(200, "fdatasync", 6, 10, 100, 99);
  text += R"(1005ms 200 syscall_enter name=read fd=5
1005ms 200 recv object=9 offset=0 len=65536 peer=300 fd=5
1005ms 200 wakeup target=300
1005ms 200 syscall_exit name=read ret=65536
1005ms 200 syscall_enter name=read fd=5
1005ms 200 switch_out state=S
1006ms 300 switch_in
1006ms 300 syscall_exit name=write ret=262144
1006ms 300 send object=9 offset=0 len=262144 peer=200 fd=4
1006ms 300 wakeup target=200
1006ms 300 syscall_enter name=exit_group
1006ms 300 switch_out state=X
1007ms 200 switch_in
1007ms 200 recv object=9 offset=65536 len=196608 peer=300 fd=5
1007ms 200 syscall_exit name=read ret=196608
)" + writes_byte(1008, 200, 3, 7, 100) +
          "1009ms 100 switch_in\n" + takes_byte(1009, 100, 3, 7, 200);
  Built b = build(kRules, text);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-hang";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  REQUIRE_FALSE(d.root_causes.empty());
  CAPTURE(d.root_causes[0].what);
  CHECK(causes(b, d) == "200 LongWait depth 1");
  CHECK(path(b, d.path) == "200@1005 message, 100@5 -");
}

TEST_CASE("a culprit's wait retried after timeouts is diagnosed over the whole wait") {
  // cw-hang reads cw-loop's answer. cw-loop polls with a 20 ms timeout, slice after slice,
  // until cw-slow writes to it at 1000 ms. cw-slow reads its disk record by record (8 ms in
  // uninterruptible sleep, 2 ms of work each) until 990 ms, works 10 ms on the result,
  // writes it, and runs 25 ms more until it exits. cw-slow waited on its device for the
  // hang's whole length: that is the root cause. Judged over the poll's last slice alone
  // (986–1001 ms), cw-slow only computed and wrote.
  std::string text = processes({{100, "cw-hang"}, {200, "cw-loop"}, {300, "cw-slow"}}) +
                     R"(5ms 100 syscall_enter name=read fd=3
5ms 100 switch_out state=S
)" + timed_out_polls(200, 6, 49, 20) +
                     R"(986ms 200 syscall_enter name=poll fd=-1 count=1 timeout_ns=20000000
986ms 200 switch_out state=S
)" + device_turns(300, "read", 2, 99, 10, 8);
  text += writes_byte(1000, 300, 5, 8, 200) + R"(1001ms 200 switch_in
1001ms 200 syscall_exit name=poll ret=1
1001ms 200 syscall_enter name=read fd=4
)" + takes_byte(1001, 200, 4, 8, 300) +
          writes_byte(1002, 200, 3, 7, 100) + "1003ms 100 switch_in\n" +
          takes_byte(1003, 100, 3, 7, 200) + R"(1025ms 300 syscall_enter name=exit_group
1025ms 300 switch_out state=X
)";
  Built b = build(kRules, text);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-hang";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  REQUIRE_FALSE(d.root_causes.empty());
  CAPTURE(d.root_causes.front().what);
  CHECK(causes(b, d) == "300 LongWait depth 2, 200 LongWait depth 1");
  // Told over the device's turns, from well before the poll's last slice.
  CHECK(d.root_causes.front().start_ns < 100'000'000);
}

TEST_CASE("a hang's wait in slices: who acted on its path since the first slice is looked at") {
  // cw-hang polls with a 20 ms timeout for cw-mid's answer. cw-mid waits on cw-slow, which
  // reads its disk record by record (8 ms in uninterruptible sleep, 2 ms of work each) and
  // writes to cw-mid at 985 ms, just before the poll's last slice begins at 986 ms; cw-mid
  // computes 15 ms, then answers at 1000 ms. cw-mid waited for cw-slow, and cw-slow on its
  // device for the hang's whole length: cw-slow is the root cause, though it acted on the
  // path before the slice that the answer ended began.
  std::string text = processes({{100, "cw-hang"}, {200, "cw-mid"}, {300, "cw-slow"}}) +
                     R"(5ms 200 syscall_enter name=read fd=4
5ms 200 switch_out state=S
)" + timed_out_polls(100, 6, 49, 20) +
                     R"(986ms 100 syscall_enter name=poll fd=-1 count=1 timeout_ns=20000000
986ms 100 switch_out state=S
)" + device_turns(300, "read", 2, 98, 10, 8);
  text += writes_byte(985, 300, 5, 8, 200) + "985ms 200 switch_in\n" +
          takes_byte(985, 200, 4, 8, 300) + R"(990ms 300 syscall_enter name=exit_group
990ms 300 switch_out state=X
)" + writes_byte(1000, 200, 3, 7, 100) +
          R"(1001ms 100 switch_in
1001ms 100 syscall_exit name=poll ret=1
1001ms 100 syscall_enter name=read fd=3
)" + takes_byte(1001, 100, 3, 7, 200);
  Built b = build(kRules, text);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-hang";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  REQUIRE_FALSE(d.root_causes.empty());
  CAPTURE(d.root_causes.front().what);
  CHECK(causes(b, d) == "300 LongWait depth 1");
  CHECK(path(b, d.path) == "300@972 message, 200@5 wakeup, 100@986 -");
}

TEST_CASE("a request found already queued is what a new thread's work answered, not its fork") {
  // cw-launcher forks cw-worker; cw-client asks cw-server and waits. cw-server passes the request
  // on to cw-worker before cw-worker first reads, so its read does not wait: the worker's
  // first segment began with its fork and holds the request it read (recvfrom: the
  // rules here cut at read) and the 300 ms of work it did for it. The fork began the thread; the
  // request is what its work answered, and no question is left (with a wait, the request would have
  // ended it).
  const std::string rules =
      std::string(kRules) +
      "link fork { from fork to thread_start join from.child == to.tid "
      "pick next }\nedge fork.child { link fork strength strong kind fork }\n";
  Built b = build(rules, R"(
process 100 comm=cw-client
thread 100 pid=100 comm=cw-client
process 200 comm=cw-server
thread 200 pid=200 comm=cw-server
process 300 comm=cw-worker ppid=400
thread 300 pid=300 comm=cw-worker
process 400 comm=cw-launcher
thread 400 pid=400 comm=cw-launcher
1ms 400 fork child=300 child_pid=300
1ms 300 thread_start parent=400
2ms 100 syscall_enter name=write fd=3
2ms 100 send object=1 offset=0 len=8 peer=200 fd=3
2ms 100 syscall_exit name=write ret=8
2ms 100 syscall_enter name=read fd=3
2ms 100 switch_out state=S
3ms 200 syscall_enter name=read fd=4
3ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
3ms 200 syscall_exit name=read ret=8
3ms 200 syscall_enter name=write fd=5
3ms 200 send object=2 offset=0 len=8 peer=300 fd=5
3ms 200 syscall_exit name=write ret=8
3ms 200 syscall_enter name=read fd=5
3ms 200 switch_out state=S
4ms 300 syscall_enter name=recvfrom fd=6
4ms 300 recv object=2 offset=0 len=8 peer=200 fd=6
4ms 300 syscall_exit name=recvfrom ret=8
304ms 300 syscall_enter name=write fd=6
304ms 300 send object=3 offset=0 len=8 peer=200 fd=6
304ms 300 wakeup target=200
304ms 300 syscall_exit name=write ret=8
305ms 200 switch_in
305ms 200 recv object=3 offset=0 len=8 peer=300 fd=5
305ms 200 syscall_exit name=read ret=8
305ms 200 syscall_enter name=write fd=4
305ms 200 send object=4 offset=0 len=8 peer=100 fd=4
305ms 200 wakeup target=100
305ms 200 syscall_exit name=write ret=8
306ms 100 switch_in
306ms 100 recv object=4 offset=0 len=8 peer=200 fd=3
306ms 100 syscall_exit name=read ret=8
)");
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-client";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "300 LongRunning depth 1");
  // Its work is asked about (whether to diagnose it in turn), not where it came from.
  CHECK(std::none_of(d.queries.begin(), d.queries.end(),
                     [](const auto& q) { return q.question.kind == QuestionKind::Edge; }));
  CHECK(path(b, d.path) == "200@3 message, 300@1 message, 200@3 message, 100@2 -");
}

// A single-threaded event-loop server: its loop waits are `loop` cuts, each request it
// reads is an item (linux.kernel's loop.wait and loop.request, the Argus paper, §4.2).
const char* const kLoopRules = R"(
split loop.wait { at syscall_enter where name == "epoll_wait" neighbour weak loop }
split data.wait { at switch_out where state != "R" and syscall.name == "read" cut syscall neighbour weak }
batch loop.request { within loop item recv per fd cut syscall neighbour weak }
link stream { from send to recv join from.object == to.object pick overlap range offset, len }
edge message { link stream strength strong kind message }
link wakeup { from wakeup to switch_in join from.target == to.tid pick next }
edge wakeup.default { link wakeup strength weak kind wakeup }
)";

// Trace fragments of one request to an event-loop server (pid 200, thread 200) and its
// answer, 8 bytes each way on stream `object` (the answer on object + 1).
// The client `tid` writes its request on `fd` and blocks reading the
// answer; `wake` when the server waits in its loop for it.
std::string ask(uint32_t ms, Tid tid, int fd, int object, bool wake) {
  return fmt::format(
      "{0}ms {1} syscall_enter name=write fd={2}\n"
      "{0}ms {1} send object={3} offset=0 len=8 peer=200 fd={2}\n{4}"
      "{0}ms {1} syscall_exit name=write ret=8\n"
      "{0}ms {1} syscall_enter name=read fd={2}\n"
      "{0}ms {1} switch_out state=S\n",
      ms, tid, fd, object, wake ? fmt::format("{}ms {} wakeup target=200\n", ms, tid) : "");
}
// The server reads the request from its descriptor `fd` ...
std::string take(uint32_t ms, int fd, int object, Pid pid) {
  return fmt::format(
      "{0}ms 200 syscall_enter name=read fd={1}\n"
      "{0}ms 200 syscall_exit name=read ret=8\n"
      "{0}ms 200 recv object={2} offset=0 len=8 peer={3} fd={1}\n",
      ms, fd, object, pid);
}
// ... and writes the answer there, waking the client `tid` ...
std::string answer(uint32_t ms, int fd, int object, Pid pid, Tid tid) {
  return fmt::format(
      "{0}ms 200 syscall_enter name=write fd={1}\n"
      "{0}ms 200 send object={2} offset=0 len=8 peer={3} fd={1}\n"
      "{0}ms 200 wakeup target={4}\n"
      "{0}ms 200 syscall_exit name=write ret=8\n",
      ms, fd, object + 1, pid, tid);
}
// ... which reads it.
std::string answered(uint32_t ms, Tid tid, int object) {
  return fmt::format(
      "{0}ms {1} switch_in\n"
      "{0}ms {1} syscall_exit name=read ret=8\n"
      "{0}ms {1} recv object={2} offset=0 len=8 peer=200 fd=3\n",
      ms, tid, object + 1);
}

TEST_CASE(
    "a request queued behind several turns of a busy loop: the path begins at the busy "
    "request's client") {
  // cw-server takes cw-a's request at 11 ms and computes until 510 ms. cw-b connected and
  // sent its request at 20 ms; the server accepts it, serves a timer and reads it only in
  // its third loop turn after cw-a's answer. Between cw-b's request and cw-a's there are
  // three weak hops (the turns), more than the slice's lookback sees past.
  Built b =
      build(kLoopRules,
            "process 100 comm=cw-b\nthread 100 pid=100 comm=cw-b\n"
            "process 200 comm=cw-server\nthread 200 pid=200 comm=cw-server\n"
            "process 300 comm=cw-a\nthread 300 pid=300 comm=cw-a\n"
            "1ms 200 syscall_enter name=epoll_wait fd=9\n1ms 200 switch_out state=S\n" +
                ask(10, 300, 3, 1, true) +
                "11ms 200 switch_in\n11ms 200 syscall_exit name=epoll_wait ret=1\n" +
                take(11, 4, 1, 300) + ask(20, 100, 3, 5, false) + answer(510, 4, 1, 300, 300) +
                "511ms 200 syscall_enter name=epoll_wait fd=9\n"
                "511ms 200 syscall_exit name=epoll_wait ret=1\n"
                "511ms 200 syscall_enter name=accept4 fd=5\n"
                "511ms 200 syscall_exit name=accept4 ret=6\n"
                "512ms 200 syscall_enter name=epoll_wait fd=9\n"
                "512ms 200 syscall_exit name=epoll_wait ret=1\n"
                "512ms 200 syscall_enter name=clock_gettime\n"
                "512ms 200 syscall_exit name=clock_gettime ret=0\n"
                "513ms 200 syscall_enter name=epoll_wait fd=9\n"
                "513ms 200 syscall_exit name=epoll_wait ret=1\n" +
                take(514, 6, 5, 100) + answer(514, 6, 5, 100, 100) +
                "515ms 200 syscall_enter name=epoll_wait fd=9\n515ms 200 switch_out state=S\n" +
                answered(515, 300, 1) + answered(515, 100, 5));
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-b";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
  CHECK(path(b, d.path) ==
        "300@10 message, 200@11 split, 200@511 split, 200@512 split, 200@513 split, "
        "200@514 message, 100@20 -");
}

// cw-server reads cw-a's request at 11 ms and sleeps 500 ms on it (not idle in its loop:
// blocked for cw-a); cw-b's request, sent at 20 ms, is read after cw-a's answer. cw-a writes
// its request at 10 ms and blocks for the answer at `a_waits` ms.
Built slept_for_a(uint32_t a_waits) {
  const std::string sleeps =
      std::string(kLoopRules) +
      "split wait.entry { at syscall_enter where name == \"clock_nanosleep\" neighbour weak }\n";
  const std::string a_asks = fmt::format(
      "10ms 300 syscall_enter name=write fd=3\n"
      "10ms 300 send object=1 offset=0 len=8 peer=200 fd=3\n10ms 300 wakeup target=200\n"
      "10ms 300 syscall_exit name=write ret=8\n"
      "{0}ms 300 syscall_enter name=read fd=3\n{0}ms 300 switch_out state=S\n",
      a_waits);
  return build(sleeps,
               "process 100 comm=cw-b\nthread 100 pid=100 comm=cw-b\n"
               "process 200 comm=cw-server\nthread 200 pid=200 comm=cw-server\n"
               "process 300 comm=cw-a\nthread 300 pid=300 comm=cw-a\n"
               "1ms 200 syscall_enter name=epoll_wait fd=9\n1ms 200 switch_out state=S\n" +
                   a_asks + "11ms 200 switch_in\n11ms 200 syscall_exit name=epoll_wait ret=1\n" +
                   take(11, 4, 1, 300) +
                   "12ms 200 syscall_enter name=clock_nanosleep\n12ms 200 switch_out state=S\n" +
                   ask(20, 100, 3, 5, false) +
                   "512ms 200 switch_in\n512ms 200 syscall_exit name=clock_nanosleep ret=0\n" +
                   answer(512, 4, 1, 300, 300) +
                   "513ms 200 syscall_enter name=epoll_wait fd=9\n"
                   "513ms 200 syscall_exit name=epoll_wait ret=1\n" +
                   take(514, 6, 5, 100) + answer(514, 6, 5, 100, 100) +
                   "515ms 200 syscall_enter name=epoll_wait fd=9\n515ms 200 switch_out state=S\n" +
                   answered(515, 300, 1) + answered(515, 100, 5));
}

TEST_CASE("a request queued behind a loop that slept for another client: the path begins there") {
  Built b = slept_for_a(10);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-b";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "200 LongWait depth 1");
  CHECK(path(b, d.path) ==
        "300@10 message, 200@11 split, 200@12 split, 200@513 split, 200@514 message, 100@20 -");
}

TEST_CASE("a client that sent the request, then waited for its answer, is not the culprit's") {
  // cw-a sends its request at 10 ms, works until 13 ms, then waits for the answer; the
  // server sleeps 500 ms on it from 12 ms. cw-a's wait is for the server: diagnosing the
  // server's sleep must not blame it (it acted on the path when it sent, before the server
  // began to wait).
  Built b = slept_for_a(13);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-b";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "200 LongWait depth 1");
}

TEST_CASE("a request relayed by a loop to a worker: the path begins at the client that sent it") {
  // cw-server's loop reads cw-a's request at 11 ms and hands it to its worker (a futex
  // wake at 12 ms), which computes until 510 ms; cw-b's request, read at 21 ms, is queued
  // for the same worker, which takes it from memory when it is done with cw-a's and
  // computes until 520 ms. The loop only passed cw-a's request on: the path begins at
  // cw-a, the client whose request kept the worker busy.
  const std::string relay =
      std::string(kLoopRules) +
      "edge futex.wake { link wakeup where from.syscall.name == \"futex\" strength strong "
      "kind futex priority 10 }\n";
  Built b =
      build(relay,
            "process 100 comm=cw-b\nthread 100 pid=100 comm=cw-b\n"
            "process 200 comm=cw-server\nthread 200 pid=200 comm=cw-server\n"
            "thread 201 pid=200 comm=cw-worker\n"
            "process 300 comm=cw-a\nthread 300 pid=300 comm=cw-a\n"
            "1ms 200 syscall_enter name=epoll_wait fd=9\n1ms 200 switch_out state=S\n"
            "1ms 201 syscall_enter name=futex\n1ms 201 switch_out state=S\n" +
                ask(10, 300, 3, 1, true) +
                "11ms 200 switch_in\n11ms 200 syscall_exit name=epoll_wait ret=1\n" +
                take(11, 4, 1, 300) +
                "12ms 200 syscall_enter name=futex\n12ms 200 wakeup target=201\n"
                "12ms 200 syscall_exit name=futex ret=1\n"
                "12ms 201 switch_in\n12ms 201 syscall_exit name=futex ret=0\n"
                "13ms 200 syscall_enter name=epoll_wait fd=9\n13ms 200 switch_out state=S\n" +
                ask(20, 100, 3, 5, true) +
                "21ms 200 switch_in\n21ms 200 syscall_exit name=epoll_wait ret=1\n" +
                take(21, 6, 5, 100) +
                "22ms 200 syscall_enter name=epoll_wait fd=9\n22ms 200 switch_out state=S\n"
                "510ms 201 syscall_enter name=write fd=7\n"
                "510ms 201 send object=20 offset=0 len=8 peer=200 fd=7\n"
                "510ms 201 wakeup target=200\n"
                "510ms 201 syscall_exit name=write ret=8\n"
                "510ms 200 switch_in\n510ms 200 syscall_exit name=epoll_wait ret=1\n" +
                take(510, 8, 20, 200) + answer(510, 4, 1, 300, 300) +
                "511ms 200 syscall_enter name=epoll_wait fd=9\n511ms 200 switch_out state=S\n"
                "520ms 201 syscall_enter name=write fd=7\n"
                "520ms 201 send object=20 offset=8 len=8 peer=200 fd=7\n"
                "520ms 201 wakeup target=200\n"
                "520ms 201 syscall_exit name=write ret=8\n"
                "520ms 201 syscall_enter name=futex\n520ms 201 switch_out state=S\n"
                "520ms 200 switch_in\n520ms 200 syscall_exit name=epoll_wait ret=1\n"
                "520ms 200 syscall_enter name=read fd=8\n520ms 200 syscall_exit name=read ret=8\n"
                "520ms 200 recv object=20 offset=8 len=8 peer=200 fd=8\n" +
                answer(521, 6, 5, 100, 100) +
                "522ms 200 syscall_enter name=epoll_wait fd=9\n522ms 200 switch_out state=S\n" +
                answered(511, 300, 1) + answered(522, 100, 5));
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-b";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "201 LongRunning depth 1");
  CAPTURE(path(b, d.path));
  REQUIRE_FALSE(d.path.empty());
  CHECK(b.trace.events[b.result.graph.segments[d.path.front().segment].first].tid == 300);
  CHECK(path(b, d.path) ==
        "300@10 message, 200@11 futex, 201@1 message, 200@520 message, 100@20 -");
}

TEST_CASE("a bus that relays the call and the answer: the path begins at the caller") {
  // cw-a's call goes through cw-bus (400) to cw-service's I/O thread (201), which hands it
  // to the service's main loop (200) over an eventfd; the main loop computes on it until
  // 510 ms. cw-b's call, relayed the same way at 20 ms, is read by the main loop only after
  // that, and its answer goes back through the I/O thread and cw-bus. cw-bus is on both
  // sides of the culprit: the walk back from the I/O thread goes through it to cw-a.
  std::string t =
      "process 100 comm=cw-b\nthread 100 pid=100 comm=cw-b\n"
      "process 200 comm=cw-service\nthread 200 pid=200 comm=cw-service\n"
      "thread 201 pid=200 comm=cw-io\n"
      "process 300 comm=cw-a\nthread 300 pid=300 comm=cw-a\n"
      "process 400 comm=cw-bus\nthread 400 pid=400 comm=cw-bus\n";
  // Thread `tid` waits in its loop at `ms`; is woken at `ms`; reads `len` 8 on `fd`, from
  // stream `object` at `offset`; writes 8 on `fd`, to stream `object` at `offset`.
  auto idle = [](int ms, Tid tid) {
    return fmt::format(
        "{0}ms {1} syscall_enter name=epoll_wait fd=9\n{0}ms {1} switch_out state=S\n", ms, tid);
  };
  auto woken = [](int ms, Tid tid) {
    return fmt::format("{0}ms {1} switch_in\n{0}ms {1} syscall_exit name=epoll_wait ret=1\n", ms,
                       tid);
  };
  auto turn = [](int ms, Tid tid) {
    return fmt::format(
        "{0}ms {1} syscall_enter name=epoll_wait fd=9\n{0}ms {1} syscall_exit name=epoll_wait "
        "ret=1\n",
        ms, tid);
  };
  auto rd = [](int ms, Tid tid, int fd, int object, int offset, Pid peer) {
    return fmt::format(
        "{0}ms {1} syscall_enter name=read fd={2}\n{0}ms {1} syscall_exit name=read ret=8\n"
        "{0}ms {1} recv object={3} offset={4} len=8 peer={5} fd={2}\n",
        ms, tid, fd, object, offset, peer);
  };
  auto wr = [](int ms, Tid tid, int fd, int object, int offset, Pid peer, Tid wake) {
    return fmt::format(
        "{0}ms {1} syscall_enter name=write fd={2}\n"
        "{0}ms {1} send object={3} offset={4} len=8 peer={5} fd={2}\n{6}"
        "{0}ms {1} syscall_exit name=write ret=8\n",
        ms, tid, fd, object, offset, peer,
        wake ? fmt::format("{}ms {} wakeup target={}\n", ms, tid, wake) : "");
  };
  auto client_waits = [](int ms, Tid tid) {
    return fmt::format("{0}ms {1} syscall_enter name=read fd=3\n{0}ms {1} switch_out state=S\n", ms,
                       tid);
  };
  t += idle(1, 200) + idle(1, 201) + idle(1, 400);
  // cw-a's call: cw-a -> bus -> I/O thread -> main loop (eventfd, object 30).
  t += wr(10, 300, 3, 1, 0, 400, 400) + client_waits(10, 300);
  t += woken(10, 400) + rd(10, 400, 4, 1, 0, 300) + wr(10, 400, 6, 10, 0, 200, 201) + idle(10, 400);
  t +=
      woken(10, 201) + rd(10, 201, 5, 10, 0, 400) + wr(10, 201, 7, 30, 0, 200, 200) + idle(10, 201);
  t += woken(11, 200) + rd(11, 200, 8, 30, 0, 200);
  // cw-b's call at 20 ms, the same way; the main loop is busy.
  t += wr(20, 100, 3, 2, 0, 400, 400) + client_waits(20, 100);
  t += woken(20, 400) + rd(20, 400, 5, 2, 0, 100) + wr(20, 400, 6, 10, 8, 200, 201) + idle(20, 400);
  t += woken(20, 201) + rd(20, 201, 5, 10, 8, 400) + wr(20, 201, 7, 30, 8, 200, 0) + idle(20, 201);
  // The main loop answers cw-a at 510 ms (through the I/O thread and the bus), then reads
  // cw-b's call and answers it.
  t += wr(510, 200, 4, 31, 0, 200, 201) + turn(511, 200) + rd(511, 200, 8, 30, 8, 200) +
       wr(512, 200, 4, 31, 8, 200, 0) + idle(513, 200);
  t += woken(510, 201) + rd(510, 201, 4, 31, 0, 200) + wr(510, 201, 5, 11, 0, 400, 400) +
       turn(512, 201) + rd(512, 201, 4, 31, 8, 200) + wr(512, 201, 5, 11, 8, 400, 400) +
       idle(513, 201);
  t += woken(510, 400) + rd(510, 400, 6, 11, 0, 200) + wr(510, 400, 4, 3, 0, 300, 300) +
       turn(512, 400) + rd(512, 400, 6, 11, 8, 200) + wr(513, 400, 5, 4, 0, 100, 100) +
       idle(514, 400);
  t += "510ms 300 switch_in\n510ms 300 syscall_exit name=read ret=8\n"
       "510ms 300 recv object=3 offset=0 len=8 peer=400 fd=3\n"
       "513ms 100 switch_in\n513ms 100 syscall_exit name=read ret=8\n"
       "513ms 100 recv object=4 offset=0 len=8 peer=400 fd=3\n";
  Built b = build(kLoopRules, t);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-b";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
  CAPTURE(path(b, d.path));
  REQUIRE_FALSE(d.path.empty());
  CHECK(b.trace.events[b.result.graph.segments[d.path.front().segment].first].tid == 300);
}

TEST_CASE("two clients of one process served in one loop turn: the items part them") {
  // cw-app's threads 301 and 302 each ask cw-server; one epoll_wait returns both requests.
  // The server computes 500 ms on 301's, answers it, then reads and answers 302's. The
  // peers are one process, so only the request reads part the turn: with the items, the
  // path runs from 301's request through the server to 302 without a question.
  const std::string peers = "split peers.disjoint { peers stream neighbour weak }\n";
  const std::string trace =
      "process 200 comm=cw-server\nthread 200 pid=200 comm=cw-server\n"
      "process 300 comm=cw-app\nthread 301 pid=300 comm=cw-app-a\n"
      "thread 302 pid=300 comm=cw-app-b\n"
      "1ms 200 syscall_enter name=epoll_wait fd=9\n1ms 200 switch_out state=S\n" +
      ask(10, 301, 3, 1, true) + ask(10, 302, 4, 5, false) +
      "11ms 200 switch_in\n11ms 200 syscall_exit name=epoll_wait ret=2\n" + take(11, 6, 1, 300) +
      answer(510, 6, 1, 300, 301) + take(511, 7, 5, 300) + answer(511, 7, 5, 300, 302) +
      "512ms 200 syscall_enter name=epoll_wait fd=9\n512ms 200 switch_out state=S\n" +
      answered(512, 301, 1) + answered(512, 302, 5);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-app-b";
  Built with = build(std::string(kLoopRules) + peers, trace);
  Diagnosis d = diagnose(with.trace, with.result, with.rules, o);
  CHECK(d.hang.tid == 302);
  CHECK(causes(with, d) == "200 LongRunning depth 1");
  CHECK(path(with, d.path) == "301@10 message, 200@11 split, 200@511 message, 302@10 -");
  auto edge_questions = [](const Diagnosis& x) {
    return std::count_if(x.queries.begin(), x.queries.end(),
                         [](const Query& q) { return q.question.kind == QuestionKind::Edge; });
  };
  CHECK(edge_questions(d) == 0);
  std::string without_items = std::string(kLoopRules) + peers;
  without_items.erase(without_items.find("batch loop.request"),
                      without_items.find("link stream") - without_items.find("batch loop.request"));
  Built without = build(without_items, trace);
  Diagnosis w = diagnose(without.trace, without.result, without.rules, o);
  // Without them, the turn is one segment two requests explain equally: which one is a
  // question (answered here by its first option, cw-app-a's).
  CHECK(path(without, w.path) == "301@10 message, 200@1 message, 302@10 -");
  CHECK(edge_questions(w) == 1);
}

TEST_CASE("a thread that waited for the culprit on the hang's path is not the culprit's culprit") {
  // cw-client asks cw-proxy, which asks cw-backend; cw-backend sleeps 500 ms before it
  // answers. cw-proxy went on running 1 ms after cw-backend began to sleep (its request
  // segment ends after the sleep began), then waited for the answer in two slices (the
  // first timed out at 313 ms; only the second was ended by cw-backend). Diagnosing
  // cw-backend (the culprit) finds cw-proxy blocked meanwhile, but cw-proxy is downstream
  // of cw-backend on the hang's path: it waited for it, and is not its cause.
  Built b = build(kRules, R"(
process 100 comm=cw-client
thread 100 pid=100 comm=cw-client
process 200 comm=cw-proxy ppid=100
thread 200 pid=200 comm=cw-proxy
process 300 comm=cw-backend ppid=100
thread 300 pid=300 comm=cw-backend
0ms 200 syscall_enter name=read fd=4
0ms 200 switch_out state=S
0ms 300 syscall_enter name=read fd=6
0ms 300 switch_out state=S
10ms 100 syscall_enter name=write fd=3
10ms 100 send object=1 offset=0 len=8 peer=200 fd=3
10ms 100 syscall_exit name=write ret=8
10ms 100 syscall_enter name=read fd=3
10ms 100 switch_out state=S
11ms 200 switch_in
11ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
11ms 200 syscall_exit name=read ret=8
11ms 200 syscall_enter name=write fd=5
11ms 200 send object=3 offset=0 len=8 peer=300 fd=5
11ms 200 syscall_exit name=write ret=8
12ms 300 switch_in
12ms 300 recv object=3 offset=0 len=8 peer=200 fd=6
12ms 300 syscall_exit name=read ret=8
12ms 300 syscall_enter name=clock_nanosleep
12ms 300 switch_out state=S
13ms 200 syscall_enter name=read fd=5
13ms 200 switch_out state=S
313ms 200 switch_in
313ms 200 syscall_exit name=read ret=-11
313ms 200 syscall_enter name=read fd=5
313ms 200 switch_out state=S
512ms 300 switch_in
512ms 300 syscall_exit name=clock_nanosleep ret=0
512ms 300 syscall_enter name=write fd=6
512ms 300 send object=4 offset=0 len=8 peer=200 fd=6
512ms 300 syscall_exit name=write ret=8
512ms 300 syscall_enter name=read fd=6
512ms 300 switch_out state=S
513ms 200 switch_in
513ms 200 recv object=4 offset=0 len=8 peer=300 fd=5
513ms 200 syscall_exit name=read ret=8
513ms 200 syscall_enter name=write fd=4
513ms 200 send object=2 offset=0 len=8 peer=100 fd=4
513ms 200 syscall_exit name=write ret=8
513ms 200 syscall_enter name=read fd=4
513ms 200 switch_out state=S
514ms 100 switch_in
514ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
514ms 100 syscall_exit name=read ret=8
)");
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-client";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "300 LongWait depth 1");
  // From the proxy's request, which the backend read before its sleep.
  CHECK(path(b, d.path) == "200@0 message, 300@0 split, 300@12 message, 200@313 message, 100@10 -");
}

// git runs its hook: parent 100 forks hook 200 and waits in wait4 while the hook computes
// 1 s; the hook's exit ends the wait (the wake-up's switch_in was never reported, so no
// cut separates what the parent did next). The parent then forks 300, which exits at once
// and signals it; that signal lands in the same segment, after the wait had returned.
// Both edges are strong and cost the same: the exit that ended the wait is the one to
// follow, not the later signal.
const char* const kProcessRules = R"(
split wait.entry {
  at syscall_enter
  where name in ["wait4"]
  cut before
  neighbour weak
}
link fork { from fork to thread_start join from.child == to.tid pick next }
edge fork.child { link fork strength strong kind fork }
link exit.wait {
  from exit
  to syscall_exit
  join from.pid == to.ret
  where from.tid == from.pid and to.name == "wait4"
  pick latest
}
edge exit.reaped { link exit.wait strength strong kind exit }
link signal { from signal_send to signal_deliver join from.target == to.tid pick next }
edge signal.sent { link signal strength strong kind signal }
)";

const char* const kHookThenChild = R"(
process 100 comm=git
thread 100 pid=100 comm=git
process 200 comm=hook ppid=100
thread 200 pid=200 comm=hook
process 300 comm=git ppid=100
thread 300 pid=300 comm=git-child
0 100 switch_in
1ms 100 fork child=200 child_pid=200
1ms 200 thread_start parent=100
1ms 200 switch_in
2ms 100 syscall_enter name=wait4 resource=200
2ms 100 switch_out state=S
1000ms 200 exit
1000ms 200 switch_out state=X
1000.1ms 100 syscall_exit name=wait4 ret=200
1001ms 100 fork child=300 child_pid=300
1001ms 300 thread_start parent=100
1001ms 300 switch_in
1002ms 300 exit
1002ms 300 signal_send target=100 sig=17
1002ms 300 switch_out state=X
1003ms 100 signal_deliver sig=17
1004ms 100 syscall_enter name=wait4 resource=300
1004.1ms 100 syscall_exit name=wait4 ret=300
1005ms 100 exit
)";

TEST_CASE("of two equally strong edges into a wait, the one that ended it is followed") {
  Built b = build(kProcessRules, kHookThenChild);
  DiagnoseOptions o;
  o.symptom.thread_name = "git";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
  CHECK(path(b, d.path) == "200@1 exit, 100@2 -");
  const uint32_t waker =
      wake_edge(b.trace, ThreadEvents(b.trace), b.graph(), d.hang.segment, d.hang.profile);
  REQUIRE(waker != kNoIndex);
  CHECK(b.graph().segments[b.graph().edges[waker].from].tid == 200);
}

// cw-client asks cw-server at 1 ms and waits; the server computes 500 ms and answers. At
// 600 ms, later in the same segment, cw-killer's signal stops it. The signal is as strong as
// the client's request, but it came after the answer left: it explains nothing on the path.
TEST_CASE("the slice leaves out edges that reached a step after it acted on the path") {
  const std::string rules = std::string(kRules) +
                            "link signal { from signal_send to signal_deliver join from.target "
                            "== to.tid pick next }\n"
                            "edge signal.sent { link signal strength strong kind signal }\n";
  Built b = build(rules, kClientServer + R"(
process 300 comm=cw-killer ppid=100
thread 300 pid=300 comm=cw-killer
0ms 200 syscall_enter name=read fd=4
0ms 200 switch_out state=S
1ms 100 syscall_enter name=write fd=3
1ms 100 send object=1 offset=0 len=8 peer=200 fd=3
1ms 100 syscall_exit name=write ret=8
2ms 100 syscall_enter name=read fd=3
2ms 100 switch_out state=S
3ms 200 switch_in
3ms 200 syscall_exit name=read ret=8
3ms 200 recv object=1 offset=0 len=8 peer=100 fd=4
503ms 200 syscall_enter name=write fd=4
503ms 200 send object=2 offset=0 len=8 peer=100 fd=4
503ms 200 syscall_exit name=write ret=8
504ms 100 switch_in
504ms 100 syscall_exit name=read ret=8
504ms 100 recv object=2 offset=0 len=8 peer=200 fd=3
550ms 300 switch_in
600ms 300 signal_send target=200 sig=15
601ms 200 signal_deliver sig=15
602ms 200 exit
603ms 100 exit
603ms 300 exit
)");
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-client";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongWait);
  CHECK(causes(b, d) == "200 LongRunning depth 1");
  // The hang's own slice (the questions before the recursion into the server) does not ask
  // whether the killer's signal explains the server's answer.
  for (const auto& q : d.queries) {
    if (q.question.kind == QuestionKind::Recurse) break;
    for (const Option& opt : q.question.options)
      CHECK(opt.label.find("cw-killer") == std::string::npos);
  }
  CHECK(path(b, d.path) == "200@0 message, 100@2 -");
}

// Whether `work` returns in a child process whose address space may grow by at most
// `bytes` beyond what it has now: a table sized by a thread id (4 G entries) fails there
// with bad_alloc (the child exits 2; 1 when `work` threw anything else) instead of taking
// the machine's memory.
bool within_memory(uint64_t bytes, const std::function<void()>& work) {
  uint64_t now_kb = 0;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) now_kb = std::stoull(line.substr(7));
  REQUIRE(now_kb > 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const rlimit limit{now_kb * 1024 + bytes, now_kb * 1024 + bytes};
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    try {
      work();
    } catch (const std::bad_alloc&) {
      _exit(2);
    } catch (...) {
      _exit(1);
    }
    _exit(0);
  }
  int status_code = 0;
  REQUIRE(waitpid(child, &status_code, 0) == child);
  return WIFEXITED(status_code) && WEXITSTATUS(status_code) == 0;
}

TEST_CASE("thread and process ids are keys: a tid of 4294967295 costs what any tid costs") {
#if defined(__SANITIZE_ADDRESS__)
  MESSAGE("skipped: the address sanitizer reserves more address space than the bound allows");
#else
  // Two threads of process 4294967295, one blocked 800 ms in a read until the other's
  // message: a graph, a thread index, a hang and a diagnosis, each keyed by those ids.
  const std::string trace =
      "process 4294967295 comm=big\n"
      "thread 4294967295 pid=4294967295 comm=big\n"
      "thread 4294967294 pid=4294967295 comm=peer\n"
      "1ms 4294967295 syscall_enter name=read fd=3\n"
      "1ms 4294967295 switch_out state=S\n"
      "800ms 4294967294 send object=1 offset=0 len=8\n"
      "800ms 4294967294 wakeup target=4294967295\n"
      "801ms 4294967295 switch_in\n"
      "801ms 4294967295 recv object=1 offset=0 len=8\n"
      "801ms 4294967295 syscall_exit name=read ret=8\n";
  const bool ok = within_memory(uint64_t{256} << 20, [&] {
    Built b = build(kRules, trace);
    const ThreadEvents index(b.trace);
    if (index.tids().size() != 2 || index.of(4294967295u).size() != 5) throw 1;
    const Diagnosis found = diagnose(b.trace, b.result, b.rules, {});
    if (found.hang.tid != 4294967295u || found.root_causes.empty()) throw 2;
    if (!b.result.graph.thread_segments(4294967294u) || b.result.graph.edges.empty()) throw 3;
  });
  CHECK(ok);
#endif
}

}  // namespace
}  // namespace cw::engine
