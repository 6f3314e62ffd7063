#include "base/parallel.h"

#include <doctest/doctest.h>

#include <numeric>
#include <stdexcept>
#include <vector>

namespace cw {

TEST_CASE("parallel_for: every index exactly once, whatever the number of threads") {
  for (unsigned workers : {1u, 2u, 3u, 8u}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{5}, size_t{1000}}) {
      std::vector<int> hits(n, 0);
      parallel_for(
          n, [&](size_t i) { ++hits[i]; }, workers);
      CHECK(std::count(hits.begin(), hits.end(), 1) == static_cast<long>(n));
    }
  }
}

TEST_CASE("parallel_for: the first exception reaches the caller, after every thread stopped") {
  std::atomic<int> running{0};
  auto throwing = [&](size_t i) {
    ++running;
    if (i == 3) {
      --running;
      throw std::runtime_error("item 3");
    }
    --running;
  };
  CHECK_THROWS_WITH(parallel_for(100, throwing, 4), "item 3");
  CHECK(running == 0);
}

TEST_CASE("worker_count: CAUSEWAY_THREADS overrides, nonsense is ignored") {
  const char* old = std::getenv("CAUSEWAY_THREADS");
  std::string saved = old ? old : "";
  setenv("CAUSEWAY_THREADS", "3", 1);
  CHECK(worker_count() == 3);
  setenv("CAUSEWAY_THREADS", "zero", 1);
  CHECK(worker_count() >= 1);
  setenv("CAUSEWAY_THREADS", "0", 1);
  CHECK(worker_count() >= 1);
  if (old)
    setenv("CAUSEWAY_THREADS", saved.c_str(), 1);
  else
    unsetenv("CAUSEWAY_THREADS");
}

}  // namespace cw
