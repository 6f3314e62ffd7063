// A hang still in progress when the recording ended: the wait has no waker, only the
// holder the recorder found at the end (lock_held / lock_wait, docs/recording.md). The
// diagnosis follows that edge to the holder and says what the holder is doing.
#include <doctest/doctest.h>

#include <string>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::build;

const char* const kRules = R"(
split wait.entry {
  at syscall_enter
  where name in ["read", "clock_nanosleep", "futex"]
  cut before
  neighbour weak
}
link wakeup { from wakeup to switch_in join from.target == to.tid pick next }
edge wakeup.default { link wakeup strength weak kind wakeup }
link lock.wait {
  from lock_held
  to lock_wait
  join from.object == to.object
  where from.waiter == to.tid
  pick latest
}
edge lock.holder { link lock.wait strength strong kind holder }
)";

// cw-owner (102) takes the mutex and sleeps 30 s in clock_nanosleep from 5 ms; cw-waiter
// (101) blocks on the mutex at 10 ms. The recording ends at 2 s with both still blocked:
// the recorder read the mutex's owner then.
const char* const kFrozen = R"trace(
process 101 comm=cw-waiter
thread 101 pid=101 comm=cw-waiter
thread 102 pid=101 comm=cw-owner
1ms 101 switch_in
1ms 102 switch_in
5ms 102 syscall_enter name=clock_nanosleep
5ms 102 switch_out state=S
10ms 101 syscall_enter name=futex op=wait resource=0x1000
10ms 101 switch_out state=S
2s 102 lock_held object=0x1000 waiter=101 lock="owner (glibc.pthread/mutex.owner)"
2000000001 101 lock_wait object=0x1000 holder=102
)trace";

TEST_CASE("a wait still open at the end follows its holder edge to what the holder is doing") {
  auto b = build(kRules, kFrozen);
  Diagnosis d = diagnose(b.trace, b.result, b.rules, {});
  CHECK(d.hang.tid == 101);
  CHECK(d.hang.kind == HangKind::LongWait);
  REQUIRE(d.path.size() == 2);
  CHECK(b.graph().segments[d.path[0].segment].tid == 102);
  CHECK(b.graph().kind_name(b.graph().edges[d.path[0].edge]) == "holder");
  CHECK(b.graph().segments[d.path[1].segment].tid == 101);
  REQUIRE(!d.root_causes.empty());
  // The owner's sleep is what the waiter is waiting for.
  const RootCause& owner = d.root_causes[0];
  CHECK(b.graph().segments[owner.segment].tid == 102);
  CHECK(owner.what.starts_with("blocked 1995.0 ms in clock_nanosleep"));
  for (const RootCause& r : d.root_causes)
    if (b.graph().segments[r.segment].tid == 101)
      CHECK(r.what.find("still waiting when the recording ended, for a holder edge (strong) "
                        "from cw-owner 102") != std::string::npos);
}

}  // namespace
}  // namespace cw::engine
