#include "engine/diagnosis/logical_wait.h"

#include <doctest/doctest.h>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::build;
using testing::Built;

const char* const kRules = R"(
split wait.entry {
  at syscall_enter
  where name in ["poll", "clock_nanosleep"]
  cut before
  neighbour weak
}
link stream { from send to recv join from.object == to.object pick overlap range offset, len }
edge message { link stream strength strong kind message }
)";

uint32_t segment_at(const Built& b, Tid tid, uint64_t ms) {
  const auto* t = b.graph().thread_segments(tid);
  REQUIRE(t);
  for (uint32_t s = t->end; s-- > t->begin;)
    if (b.graph().segments[s].start_ns == ms * 1000000) return s;
  FAIL("no segment of " << tid << " starts at " << ms << " ms");
  return kNoIndex;
}

TEST_CASE("a poll loop on a set of descriptors is one wait: the slice a message ended is found") {
  // cw-client polls its two descriptors (poll names no one descriptor: fd -1, count 2) with
  // a 100 ms timeout; the first two slices time out, the third is ended by cw-server's
  // answer at 250 ms. The slice at 0 ms is one of the three of a single wait.
  Built b = build(kRules, R"(
process 100 comm=cw-client
thread 100 pid=100 comm=cw-client
process 200 comm=cw-server ppid=100
thread 200 pid=200 comm=cw-server
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

TEST_CASE("polls of sets of different sizes, or of no descriptor, are different waits") {
  // The slice at 0 ms polls two descriptors, the one at 100 ms three; the sleeps at 300
  // and 400 ms (poll of no descriptor) wait for time only.
  Built b = build(kRules, R"(
process 100 comm=cw-client
thread 100 pid=100 comm=cw-client
process 200 comm=cw-server ppid=100
thread 200 pid=200 comm=cw-server
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

}  // namespace
}  // namespace cw::engine
