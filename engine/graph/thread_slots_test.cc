#include "engine/graph/thread_slots.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

namespace cw::engine {
namespace {

TEST_CASE("thread slots: any 32-bit tid is a key; the table grows with the threads, not the ids") {
  ThreadSlots slots;
  CHECK(slots.get(0) == ThreadSlots::kNone);
  CHECK(slots.get(4294967295u) == ThreadSlots::kNone);
  CHECK(slots.add(4294967295u) == 0);
  CHECK(slots.add(0) == 1);
  CHECK(slots.add(4294967294u) == 2);
  CHECK(slots.add(4294967295u) == 0);  // already there
  CHECK(slots.get(4294967295u) == 0);
  CHECK(slots.get(0) == 1);
  CHECK(slots.get(4294967294u) == 2);
  CHECK(slots.get(12345) == ThreadSlots::kNone);
  slots.set(0, 7);
  CHECK(slots.get(0) == 7);
  CHECK(slots.size() == 3);
  std::vector<Tid> tids = slots.tids();
  std::sort(tids.begin(), tids.end());
  CHECK(tids == std::vector<Tid>{0, 4294967294u, 4294967295u});

  // Many threads, consecutive and scattered: each finds its own slot after the table grew.
  ThreadSlots many;
  for (uint32_t i = 0; i < 10000; ++i) CHECK(many.add(i * 429497u + (i % 3)) == i);
  for (uint32_t i = 0; i < 10000; ++i) CHECK(many.get(i * 429497u + (i % 3)) == i);
  CHECK(many.size() == 10000);
}

}  // namespace
}  // namespace cw::engine
