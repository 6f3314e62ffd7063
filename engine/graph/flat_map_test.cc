#include "engine/graph/flat_map.h"

#include <doctest/doctest.h>

namespace cw::engine {
namespace {

struct IdentityHash {
  size_t operator()(uint64_t x) const { return static_cast<size_t>(x); }
};

TEST_CASE("a flat map finds what was stored, across growth, colliding keys and clear") {
  FlatMap<uint64_t, int, IdentityHash> map;
  for (uint64_t k = 0; k < 1000; ++k) map[k * 1024] = static_cast<int>(k);  // all collide
  CHECK(map.size() == 1000);
  for (uint64_t k = 0; k < 1000; ++k) {
    REQUIRE(map.find(k * 1024));
    CHECK(*map.find(k * 1024) == static_cast<int>(k));
  }
  CHECK(map.find(7) == nullptr);
  map.clear();
  CHECK(map.size() == 0);
  CHECK(map.find(1024) == nullptr);
  map[5] = 1;
  CHECK(*map.find(5) == 1);
}

}  // namespace
}  // namespace cw::engine
