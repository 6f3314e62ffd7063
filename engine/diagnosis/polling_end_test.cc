#include "engine/diagnosis/polling_end.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::build;
using testing::Built;

// Sleeps cut segments; a lock's release joins the next try of another process that got
// the lock (as linux.kernel's lock.release); timers and wake-ups as usual. `%s` is the
// handover edge rule's extra clause.
const char* const kRules = R"(
split wait.entry {{
  at syscall_enter
  where name == "clock_nanosleep"
  cut before
  neighbour weak
}}
link lock.release {{
  from syscall_enter
  from_where name == "flock" and op == "un"
  to syscall_exit
  to_where ret == 0 and syscall.name == "flock" and syscall.op == "ex"
  join from.resource == to.syscall.resource
  where from.pid != to.pid
  pick next
}}
edge lock.handover {{
  link lock.release
  strength strong
  kind lock
  {}
}}
link wakeup {{ from wakeup to switch_in join from.target == to.tid pick next }}
edge wakeup.default {{ link wakeup strength weak kind wakeup }}
)";

// cw-holder takes the lock on file 77 at 1 ms, sleeps 200 ms holding it, and lets go.
// cw-poller tries the lock (LOCK_EX | LOCK_NB) every 10 ms from 5 ms, failing with
// EAGAIN, and gets it at the first try after the release.
std::string lock_polling() {
  std::string t =
      "process 100 comm=cw-poller\n"
      "thread 100 pid=100 comm=cw-poller\n"
      "process 200 comm=cw-holder\n"
      "thread 200 pid=200 comm=cw-holder\n"
      "1ms 200 syscall_enter name=flock fd=3 resource=77 op=ex value=2\n"
      "1ms 200 syscall_exit name=flock ret=0\n"
      "2ms 200 syscall_enter name=clock_nanosleep fd=-1\n"
      "2ms 200 switch_out state=S\n";
  uint32_t ms = 5;
  for (; ms < 205; ms += 10) {
    t += fmt::format("{}ms 100 syscall_enter name=flock fd=4 resource=77 op=ex value=6\n", ms);
    t += fmt::format("{}ms 100 syscall_exit name=flock ret=-11\n", ms);
    t += fmt::format("{}ms 100 syscall_enter name=clock_nanosleep fd=-1\n", ms);
    t += fmt::format("{}ms 100 switch_out state=S\n", ms);
    t += fmt::format("{}ms 100 switch_in\n", ms + 10);
    t += fmt::format("{}ms 100 syscall_exit name=clock_nanosleep ret=0\n", ms + 10);
  }
  t += "202ms 200 switch_in\n"
       "202ms 200 syscall_exit name=clock_nanosleep ret=0\n"
       "203ms 200 syscall_enter name=flock fd=3 resource=77 op=un value=8\n"
       "203ms 200 syscall_exit name=flock ret=0\n";
  t += fmt::format("{}ms 100 syscall_enter name=flock fd=4 resource=77 op=ex value=6\n", ms);
  t += fmt::format("{}ms 100 syscall_exit name=flock ret=0\n", ms);
  return t;
}

std::string causes(const Built& b, const Diagnosis& d) {
  std::string out;
  for (const RootCause& r : d.root_causes)
    out += (out.empty() ? "" : ", ") + std::to_string(b.graph().segments[r.segment].tid) + " " +
           std::string(hang_kind_name(r.kind)) + " depth " + std::to_string(r.depth);
  return out;
}

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

}  // namespace

TEST_CASE("a lock-polling loop that a release ended points at the lock's holder") {
  Built b = build(fmt::format(fmt::runtime(kRules), "ends_polling"), lock_polling());
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.tid == 100);
  CHECK(d.hang.kind == HangKind::RepeatedYield);
  CHECK_FALSE(d.yield_without_flag);
  CHECK(causes(b, d) == "200 LongWait depth 1, 100 RepeatedYield depth 0");
  CHECK(d.root_causes[0].what.rfind("blocked 200.0 ms in clock_nanosleep", 0) == 0);
  // From the holder's sleep, through its release, to the try that got the lock.
  CHECK(path(b, d.path) == "200@2 lock, 100@195 -");
}

TEST_CASE("of the releases that join one try, the last before it ended the polling") {
  // cw-reader lets go of the lock at 0 ms, before cw-holder takes it at 1 ms; the holder's
  // lock, which was free, is not written (record --calls scheduler writes only the locks
  // got after failed tries), so the reader's release joins cw-poller's try too, as the
  // holder's does. The holder's, the later, is what let the try through.
  std::string t = lock_polling();
  // Recorded as the scheduler's calls are: the holder's lock, free, is not written.
  const std::string taken =
      "1ms 200 syscall_enter name=flock fd=3 resource=77 op=ex value=2\n"
      "1ms 200 syscall_exit name=flock ret=0\n";
  REQUIRE(t.find(taken) != std::string::npos);
  t.erase(t.find(taken), taken.size());
  t.insert(t.find("2ms 200 syscall_enter"),
           "process 150 comm=cw-reader\nthread 150 pid=150 comm=cw-reader\n"
           "0ms 150 syscall_enter name=flock fd=3 resource=77 op=un value=8\n"
           "0ms 150 syscall_exit name=flock ret=0\n");
  Built b = build(fmt::format(fmt::runtime(kRules), "ends_polling"), t);
  DiagnoseOptions o;
  o.symptom.thread_name = "cw-poller";
  Diagnosis d = diagnose(b.trace, b.result, b.rules, o);
  CHECK(d.hang.tid == 100);
  CHECK(causes(b, d) == "200 LongWait depth 1, 100 RepeatedYield depth 0");
  CHECK(path(b, d.path) == "200@2 lock, 100@195 -");
}

TEST_CASE("a strong edge whose rule does not say ends_polling leaves the loop unexplained") {
  Built b = build(fmt::format(fmt::runtime(kRules), ""), lock_polling());
  REQUIRE(polling_end_edge(b.graph(), 0, static_cast<uint32_t>(b.graph().segments.size() - 1)) ==
          kNoIndex);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.kind == HangKind::RepeatedYield);
  CHECK(d.yield_without_flag);
  CHECK(causes(b, d) == "100 RepeatedYield depth 0");
}

}  // namespace cw::engine
