#include "base/populate.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace cw {

namespace {

// How many of the pages of the mapping at `p` (`pages` of them) are in memory.
size_t resident(void* p, size_t pages) {
  std::vector<unsigned char> in(pages);
  REQUIRE(mincore(p, pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)), in.data()) == 0);
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

}  // namespace

TEST_CASE("populate fills in every page of the range, in parts, and changes nothing in it") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), pages = 64;
  void* map =
      mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(map != MAP_FAILED);
  auto* bytes = static_cast<unsigned char*>(map);
  bytes[5 * page + 7] = 42;  // a page written already keeps what it holds
  CHECK(resident(map, pages) == 1);
  // From mid-page: the pages wholly inside the range, not the one it begins in.
  if (!populate(bytes + 3 * page + 1, 40 * page, 3)) {
    MESSAGE("this kernel does not fill in pages when asked (MADV_POPULATE_WRITE): skipped");
  } else {
    CHECK(resident(map, pages) == 39);  // pages 4 to 42, page 5 among them
    CHECK(resident(bytes + 3 * page, 1) == 0);
    CHECK(resident(bytes + 4 * page, 39) == 39);
    CHECK(bytes[5 * page + 7] == 42);
    CHECK(bytes[20 * page] == 0);
  }
  munmap(map, pages * page);
}

TEST_CASE("resize_populated is resize: the elements kept, the new ones value-initialised") {
  struct Item {
    uint32_t a = 7;
    uint64_t b = 9;
  };
  std::vector<Item> v(3, Item{1, 2});
  const size_t n = kPopulateFrom / sizeof(Item) + 5;
  resize_populated(v, n);
  REQUIRE(v.size() == n);
  CHECK(v[2].a == 1);
  CHECK(v[3].a == 7);
  CHECK(v.back().b == 9);
  resize_populated(v, 2);  // smaller: as resize
  CHECK(v.size() == 2);
  std::vector<uint32_t> small;
  resize_populated(small, 10);
  CHECK(small == std::vector<uint32_t>(10, 0));
}

}  // namespace cw
