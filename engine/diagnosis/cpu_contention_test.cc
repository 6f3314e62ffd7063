#include "engine/diagnosis/cpu_contention.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/test_support.h"
#include "rules/loader.h"

namespace cw::engine {
namespace {

// cw-victim (100) computes on CPU 0 and is preempted twice by cw-hog (300), which runs
// 390 ms and then 390 ms there; between, the victim runs 5 ms, and after the hog is done
// it finishes in 20 ms. cw-other (200) computes on CPU 1 all along: it never took the
// victim's CPU. cw-short (400) runs 10 ms on CPU 0 in the victim's second wait.
const std::string kStarved = R"(process 100 comm=cw-victim
thread 100 pid=100 comm=cw-victim
process 200 comm=cw-other
thread 200 pid=200 comm=cw-other
process 300 comm=cw-hog
thread 300 pid=300 comm=cw-hog
process 400 comm=cw-short
thread 400 pid=400 comm=cw-short
0ms 100 switch_in cpu=0
0ms 200 switch_in cpu=1
10ms 100 switch_out cpu=0 state=R
10ms 300 switch_in cpu=0
400ms 300 switch_out cpu=0 state=R
400ms 100 switch_in cpu=0
405ms 100 switch_out cpu=0 state=R
405ms 300 switch_in cpu=0
785ms 300 switch_out cpu=0 state=R
785ms 400 switch_in cpu=0
795ms 400 switch_out cpu=0 state=S
795ms 100 switch_in cpu=0
815ms 100 syscall_enter cpu=0 name=write fd=1 count=3
815ms 100 syscall_exit cpu=0 name=write ret=3
816ms 100 exit cpu=0 code=0
816ms 100 switch_out cpu=0 state=X
816ms 300 switch_in cpu=0
820ms 200 exit cpu=1 code=0
820ms 300 exit cpu=0 code=0
)";

// The hang of the threads named cw-victim (--hang cw-victim).
Diagnosis diagnose_victim(const testing::Built& b) {
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-victim";
  return diagnose(b.trace, b.result, b.rules, o);
}

TEST_CASE("who ran on a preempted thread's CPU until it ran again") {
  Trace t = testing::load_trace(kStarved);
  ThreadEvents events(t);
  CpuContention c = cpu_contention(t, events, 100, 0, 816000000);
  CHECK(c.runnable_ns == 780000000);  // 10..400 and 405..795 ms
  CHECK(c.taken_ns == 780000000);
  REQUIRE(c.takers.size() == 2);
  CHECK(c.takers[0].tid == 300);
  CHECK(c.takers[0].ran_ns == 770000000);
  CHECK(c.takers[0].longest_run_ns == 390000000);
  CHECK(c.takers[1].tid == 400);
  CHECK(c.takers[1].ran_ns == 10000000);
  // Clipped to a range: only the second wait's part after 500 ms.
  CpuContention late = cpu_contention(t, events, 100, 500000000, 816000000);
  CHECK(late.runnable_ns == 295000000);
  REQUIRE_FALSE(late.takers.empty());
  CHECK(late.takers[0].ran_ns == 285000000);
}

TEST_CASE("starved of a CPU: runnable at least three times as long as it ran") {
  SegmentProfile p;
  p.on_cpu_ns = 100;
  p.runnable_ns = 300;
  CHECK(starved_of_cpu(p));
  p.runnable_ns = 200;  // a CPU shared by three: slow by its own work
  CHECK_FALSE(starved_of_cpu(p));
  p.runnable_ns = 0;
  p.on_cpu_ns = 0;
  CHECK_FALSE(starved_of_cpu(p));
}

TEST_CASE("a thread starved of its CPU: the thread that took it is the root cause") {
  testing::Built b = testing::build_with_stdlib(kStarved);
  Diagnosis d = diagnose_victim(b);
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::LongRunning);
  REQUIRE(d.root_causes.size() >= 2);
  // The hog first (one level below the hang), then the victim's own work; cw-short took
  // too little, cw-other another CPU.
  CHECK(b.graph().segments[d.root_causes[0].segment].tid == 300);
  CHECK(d.root_causes[0].kind == HangKind::LongRunning);
  CHECK(d.root_causes[0].what.find("770.0 ms") != std::string::npos);
  for (const RootCause& r : d.root_causes) {
    CHECK(b.graph().segments[r.segment].tid != 200);
    CHECK(b.graph().segments[r.segment].tid != 400);
  }
  REQUIRE_FALSE(d.path.empty());
  CHECK(b.graph().segments[d.path.front().segment].tid == 300);
  CHECK(b.graph().segments[d.path.back().segment].tid == 100);
}

TEST_CASE("CPU taken by processes outside the recorded command: named in a note, not blamed") {
  // The same starvation, but the recording was of cw-victim's command (its marker): cw-hog
  // is the machine's other load. The victim's own work stays the root cause.
  std::string traced = kStarved;
  traced.insert(traced.find("0ms 100 switch_in"),
                "0ms 100 marker text=\"causeway: command 100 ./victim\"\n");
  testing::Built b = testing::build_with_stdlib(traced);
  Diagnosis d = diagnose_victim(b);
  REQUIRE_FALSE(d.root_causes.empty());
  for (const RootCause& r : d.root_causes) CHECK(b.graph().segments[r.segment].tid == 100);
  CHECK(std::any_of(d.notes.begin(), d.notes.end(), [](const std::string& n) {
    return n.find("outside the recorded command") != std::string::npos &&
           n.find("cw-hog 300") != std::string::npos;
  }));
}

TEST_CASE("a thread that shared its CPU fairly is slow by its own work") {
  // The same victim, but the hog ran as long as it did: each ran half of CPU 0.
  std::string fair = R"(process 100 comm=cw-victim
thread 100 pid=100 comm=cw-victim
process 300 comm=cw-hog
thread 300 pid=300 comm=cw-hog
0ms 100 switch_in cpu=0
200ms 100 switch_out cpu=0 state=R
200ms 300 switch_in cpu=0
400ms 300 switch_out cpu=0 state=R
400ms 100 switch_in cpu=0
600ms 100 switch_out cpu=0 state=R
600ms 300 switch_in cpu=0
800ms 300 switch_out cpu=0 state=R
800ms 100 switch_in cpu=0
816ms 100 exit cpu=0 code=0
816ms 100 switch_out cpu=0 state=X
820ms 300 exit cpu=0 code=0
)";
  testing::Built b = testing::build_with_stdlib(fair);
  Diagnosis d = diagnose_victim(b);
  REQUIRE_FALSE(d.root_causes.empty());
  for (const RootCause& r : d.root_causes) CHECK(b.graph().segments[r.segment].tid == 100);
}

}  // namespace
}  // namespace cw::engine
