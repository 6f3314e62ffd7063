// The circular-wait note (docs/diagnosis.md, "Comparing with the baseline") is about a
// culprit that waited for the hang's own thread, not one the hang's thread merely
// started.
#include <doctest/doctest.h>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

const char* const kRules = R"(
split wait.entry {
  at syscall_enter
  where name in ["read", "clock_nanosleep"]
  cut before
  neighbour weak
}
link stream { from send to recv join from.object == to.object pick overlap range offset, len }
edge message { link stream strength strong kind message }
link fork { from fork to thread_start join from.child == to.tid pick next }
edge fork.start { link fork strength strong kind fork }
)";

// make 100 starts a job 200 that sleeps 1 s, then writes its result to the pipe make
// reads: the job is the culprit, and recursing into it finds its sleep, started by make
// before it slept. make never woke it: no circle.
const char* const kJob = R"(
process 100 comm=make
thread 100 pid=100 comm=make
process 200 comm=job ppid=100
thread 200 pid=200 comm=job
0 100 switch_in
1ms 100 fork child=200 child_pid=200
1.1ms 200 thread_start parent=100
1.2ms 200 switch_in
2ms 100 syscall_enter name=read fd=3
2ms 100 switch_out state=S
2ms 200 syscall_enter name=clock_nanosleep
2ms 200 switch_out state=S
1002ms 200 switch_in
1002ms 200 syscall_exit name=clock_nanosleep ret=0
1003ms 200 send object=5 offset=0 len=8 fd=1
1003ms 200 exit code=0
1004ms 100 switch_in
1004ms 100 recv object=5 offset=0 len=8 fd=3
1004ms 100 syscall_exit name=read ret=8
1005ms 100 exit code=0
)";

TEST_CASE("a culprit the hang's thread only started is no circular wait") {
  testing::Built b = testing::build(kRules, kJob);
  DiagnoseOptions o;
  o.symptom.mode = SymptomRequest::Mode::ThreadAt;
  o.symptom.tid = 100;
  o.symptom.at_ns = 500'000'000;
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.kind == HangKind::LongWait);
  REQUIRE(!d.root_causes.empty());
  CHECK(b.graph().segments[d.root_causes[0].segment].tid == 200);
  bool recursed = false;
  for (const Query& q : d.queries) recursed = recursed || q.question.kind == QuestionKind::Recurse;
  CHECK(recursed);
  for (const std::string& n : d.notes) CHECK_MESSAGE(n.find("circular") == std::string::npos, n);
}

}  // namespace
}  // namespace cw::engine
