#include "base/huge_pages.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <string>

using namespace cw;

TEST_CASE("huge pages are asked for only where the machine gives them on request") {
  CHECK(huge_pages_on_request("always [madvise] never\n"));
  CHECK_FALSE(huge_pages_on_request("[always] madvise never\n"));  // malloc's get them anyway
  CHECK_FALSE(huge_pages_on_request("always madvise [never]\n"));
  CHECK_FALSE(huge_pages_on_request(""));  // no THP in this kernel
}

TEST_CASE("malloc's huge pages are added to GLIBC_TUNABLES unless the user set them") {
  CHECK(tunables_with_huge_pages(nullptr) == "glibc.malloc.hugetlb=1");
  CHECK(tunables_with_huge_pages("") == "glibc.malloc.hugetlb=1");
  CHECK(tunables_with_huge_pages("glibc.malloc.arena_max=2") ==
        "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  CHECK(tunables_with_huge_pages("glibc.malloc.hugetlb=0").empty());
  CHECK(tunables_with_huge_pages("glibc.malloc.check=1:glibc.malloc.hugetlb=2").empty());
}

TEST_CASE("the restarted process puts GLIBC_TUNABLES back as it was before it starts anything") {
  const char* before = getenv("GLIBC_TUNABLES");
  const std::string kept = before ? before : "";
  // As restart_with_huge_pages leaves the environment for the process it starts: the
  // tunable set, the value it had in the marker.
  setenv("CAUSEWAY_HUGE_PAGES_RESTARTED", "=glibc.malloc.arena_max=2", 1);
  setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", 1);
  restart_with_huge_pages(nullptr);  // the restarted process: no second start
  CHECK(restarted_with_huge_pages());
  REQUIRE(getenv("GLIBC_TUNABLES") != nullptr);
  CHECK(std::string(getenv("GLIBC_TUNABLES")) == "glibc.malloc.arena_max=2");
  CHECK(getenv("CAUSEWAY_HUGE_PAGES_RESTARTED") == nullptr);

  setenv("CAUSEWAY_HUGE_PAGES_RESTARTED", "", 1);  // it was not set at all
  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
  restart_with_huge_pages(nullptr);
  CHECK(getenv("GLIBC_TUNABLES") == nullptr);
  CHECK(getenv("CAUSEWAY_HUGE_PAGES_RESTARTED") == nullptr);

  if (before) setenv("GLIBC_TUNABLES", kept.c_str(), 1);
}
