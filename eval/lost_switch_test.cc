#include "eval/lost_switch.h"

#include <doctest/doctest.h>

#include <string>

#include "engine/graph/test_support.h"
#include "trace/text_format.h"
#include "trace/text_test_support.h"

namespace cw::eval {
namespace {

using testing_text::events_text;

// The decoder's own test case (record_decoder_test.cc, "a switch to a thread the kernel
// never reported…") as the trace it writes when every switch is reported.
const char* const kWoken =
    "process 100 comm=app\n"
    "thread 101 pid=100 comm=waiter\n"
    "thread 102 pid=100 comm=waker\n"
    "thread 103 pid=100 comm=other\n"
    "1000 101 switch_out state=S\n"
    "1000 103 switch_in\n"
    "1500 102 switch_in cpu=1\n"
    "2000 102 wakeup cpu=1 target=101\n"
    "2100 103 switch_out state=R\n"
    "2100 101 switch_in\n"
    "2200 101 syscall_exit name=futex\n"
    "3000 101 switch_out state=S\n"
    "9000 101 switch_in\n";

TEST_CASE("a lost switch: the decoder's `?` and switch_in where the CPU's next record is") {
  const Trace t = cw::engine::testing::load_trace(kWoken);
  const auto records = switch_records(t);
  REQUIRE(records.size() == 5);
  CHECK(records[2] == SwitchRecord{4, 5});  // other -> waiter at 2100 on CPU 0
  const Trace lost = lose_switch(t, records[2]);
  CHECK(events_text(lost) ==
        "1000 101 switch_out state=S\n"
        "1000 103 switch_in\n"
        "1500 102 switch_in cpu=1\n"
        "2000 102 wakeup cpu=1 target=101\n"
        "2200 103 switch_out state=?\n"
        "2200 101 switch_in\n"
        "2200 101 syscall_exit name=futex\n"
        "3000 101 switch_out state=S\n"
        "9000 101 switch_in\n");
  CHECK(lost.losses_of(LossKind::SwitchUnreported) == 1);

  SUBCASE("no record of the CPU before its next switch: the `?` goes there") {
    const Trace u = lose_switch(t, records[0]);  // waiter -> other at 1000
    CHECK(events_text(u) ==
          "1500 102 switch_in cpu=1\n"
          "2000 102 wakeup cpu=1 target=101\n"
          "2100 101 switch_out state=?\n"
          "2100 103 switch_out state=R\n"
          "2100 101 switch_in\n"
          "2200 101 syscall_exit name=futex\n"
          "3000 101 switch_out state=S\n"
          "9000 101 switch_in\n");
  }
  SUBCASE("only the records of some threads") {
    CHECK(switch_records(t, {102}).size() == 1);
    CHECK(switch_records(t, {103}).size() == 2);
  }
}

}  // namespace
}  // namespace cw::eval
