// The event names entry: read back equal, and a miss when it is of another trace or its
// lists do not lie inside it.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"

using namespace cw;
using namespace cw::engine;
using namespace cw::cache::testing;

namespace {

// Every list of `names`, read.
std::vector<std::vector<uint32_t>> all_lists(const EventNames& names) {
  std::vector<std::vector<uint32_t>> out;
  for (const EventNames::List& l : names.lists())
    out.push_back(names.events(l.kind, l.named ? NameSelector{true, {l.name}} : NameSelector{}));
  return out;
}

}  // namespace

TEST_CASE("the event names come back equal; of another trace or key, a miss") {
  auto b = sample();
  const uint64_t n = b.trace.events.size();
  TempDir dir;
  const cache::Key key{7, 0, 0, 1};
  const EventNames made = EventNames::of(b.trace);
  REQUIRE(made.lists().size() > 2);
  CHECK_FALSE(cache::has_event_names(dir.f, key));
  REQUIRE(cache::save_event_names(dir.f, key, made));
  CHECK(cache::has_event_names(dir.f, key));
  std::string why;
  auto loaded = cache::load_event_names(dir.f, key, n, &why);
  REQUIRE_MESSAGE(loaded, why);
  REQUIRE(loaded->lists().size() == made.lists().size());
  for (size_t i = 0; i < made.lists().size(); ++i) {
    CHECK(loaded->lists()[i].kind == made.lists()[i].kind);
    CHECK(loaded->lists()[i].name == made.lists()[i].name);
    CHECK(loaded->lists()[i].named == made.lists()[i].named);
  }
  CHECK(all_lists(*loaded) == all_lists(made));
  CHECK_FALSE(cache::has_event_names(dir.f, cache::Key{8, 0, 0, 1}));
  CHECK_FALSE(cache::load_event_names(dir.f, cache::Key{8, 0, 0, 1}, n));
  CHECK_FALSE(cache::load_event_names(dir.f, key, n - 1, &why));
  CHECK(why.find("another number of events") != std::string::npos);
}

TEST_CASE("event names whose lists do not lie inside the entry are a miss") {
  auto b = sample();
  const uint64_t n = b.trace.events.size();
  const std::string good = cache::encode_event_names(EventNames::of(b.trace));
  CHECK_NOTHROW(cache::decode_event_names(good, n));
  // Cut anywhere: never read past the end.
  for (size_t size = 0; size < good.size(); ++size)
    CHECK_THROWS_AS(cache::decode_event_names(good.substr(0, size), n), cache::CorruptEntry);
  CHECK_THROWS_AS(cache::decode_event_names(good + "x", n), cache::CorruptEntry);
  // A list count far past the entry (a count is a key, never a size).
  std::string many = good;
  const uint64_t huge = uint64_t{1} << 60;
  std::memcpy(many.data() + 8, &huge, 8);
  CHECK_THROWS_AS(cache::decode_event_names(many, n), cache::CorruptEntry);
  // A flag byte that is not one.
  std::string flags = good;
  flags[16 + 3] = 1;  // the first list's pad
  CHECK_THROWS_AS(cache::decode_event_names(flags, n), cache::CorruptEntry);
}

TEST_CASE("a trace without events has no lists, and they read back") {
  const Trace empty;
  const EventNames none = EventNames::of(empty);
  CHECK(none.lists().empty());
  const std::string payload = cache::encode_event_names(none);
  CHECK(cache::decode_event_names(payload, 0).lists().empty());
  CHECK_THROWS_AS(cache::decode_event_names(payload, 1), cache::CorruptEntry);
}
