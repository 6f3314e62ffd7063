// The thread index entry: mapped back equal, and a miss when its lists do not hold
// together or name events the trace does not have.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"

using namespace cw;
using namespace cw::engine;
using namespace cw::cache::testing;

TEST_CASE("the thread index comes back mapped and equal; offsets that do not hold are a miss") {
  auto b = sample();
  TempDir dir;
  const cache::Key key{7, 0, 0, 1};
  const ThreadEvents made(b.trace);
  REQUIRE(cache::save_thread_index(dir.f, key, made));
  std::string why;
  auto loaded = cache::load_thread_index(dir.f, key, b.trace.events.size(), &why);
  REQUIRE_MESSAGE(loaded, why);
  CHECK(loaded->parts().events.is_view());
  auto same = [](EventList a, EventList b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  };
  REQUIRE(loaded->tids().size() == made.tids().size());
  for (Tid tid : made.tids()) {
    CHECK(same(loaded->of(tid), made.of(tid)));
    CHECK(same(loaded->switches_of(tid), made.switches_of(tid)));
    CHECK(same(loaded->syscalls_of(tid), made.syscalls_of(tid)));
  }
  CHECK(!made.of(101).empty());
  CHECK_FALSE(cache::load_thread_index(dir.f, cache::Key{8, 0, 0, 1}, b.trace.events.size()));

  // Offsets past their list: rejected even when the checksum holds (an entry written by
  // a build whose layout differed without a version bump).
  ThreadEvents::Parts bad;
  bad.tids = std::vector<Tid>{101};
  bad.events = std::vector<uint32_t>{0, 1};
  bad.events_at = std::vector<uint32_t>{0, 3};
  bad.switches_at = std::vector<uint32_t>{0, 0};
  bad.syscalls_at = std::vector<uint32_t>{0, 0};
  CHECK_THROWS_AS(ThreadEvents(bad, 2), std::invalid_argument);
  bad.events_at = std::vector<uint32_t>{0, 2};
  CHECK_NOTHROW(ThreadEvents(bad, 2));
  bad.tids = std::vector<Tid>{101, 101};
  bad.events_at = std::vector<uint32_t>{0, 1, 2};
  bad.switches_at = std::vector<uint32_t>{0, 0, 0};
  bad.syscalls_at = std::vector<uint32_t>{0, 0, 0};
  CHECK_THROWS_AS(ThreadEvents(bad, 2), std::invalid_argument);
}

TEST_CASE("a thread index naming events the trace lacks, or out of order, is a miss") {
  auto b = sample();
  const auto events = b.trace.events.size();
  ThreadEvents::Parts parts;
  parts.tids = std::vector<Tid>{101};
  parts.events = std::vector<uint32_t>{0, 1};
  parts.events_at = std::vector<uint32_t>{0, 2};
  parts.switches_at = std::vector<uint32_t>{0, 0};
  parts.syscalls_at = std::vector<uint32_t>{0, 0};
  CHECK_NOTHROW(ThreadEvents(parts, events));
  CHECK_THROWS_AS(ThreadEvents(parts, 1), std::invalid_argument);  // event 1 past a 1-event trace
  parts.events = std::vector<uint32_t>{1, 0};
  CHECK_THROWS_AS(ThreadEvents(parts, events), std::invalid_argument);
  parts.events = std::vector<uint32_t>{0, 0xfffffff0u};
  CHECK_THROWS_AS(ThreadEvents(parts, events), std::invalid_argument);
  // Through the cache: an index of a longer trace is no index of this one.
  TempDir dir;
  const cache::Key key{7, 0, 0, 1};
  REQUIRE(cache::save_thread_index(dir.f, key, ThreadEvents(b.trace)));
  std::string why;
  CHECK(cache::load_thread_index(dir.f, key, events, &why));
  CHECK_FALSE(cache::load_thread_index(dir.f, key, events - 1, &why));
  CHECK(why.find("past the trace") != std::string::npos);
}
