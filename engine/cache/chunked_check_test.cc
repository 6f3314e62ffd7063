#include "engine/cache/chunked_check.h"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace cw::cache {
namespace {

TEST_CASE("checks in chunks see every item once and report the first bad one in order") {
  for (size_t n : {size_t{10}, kCheckInChunksFrom * 3 + 7}) {
    CAPTURE(n);
    std::vector<std::atomic<int>> seen(n);
    check_in_chunks(n, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) ++seen[i];
    });
    size_t once = 0;
    for (auto& s : seen) once += s.load() == 1;
    CHECK(once == n);
    // Two bad items far apart: the earlier one is reported, whichever chunk ends first.
    const size_t first_bad = n / 3, second_bad = n - 1;
    for (int round = 0; round < 4; ++round) {
      std::string message;
      try {
        check_in_chunks(n, [&](size_t begin, size_t end) {
          for (size_t i = begin; i < end; ++i)
            if (i == first_bad || i == second_bad)
              throw std::runtime_error("bad item " + std::to_string(i));
        });
      } catch (const std::runtime_error& e) {
        message = e.what();
      }
      CHECK(message == "bad item " + std::to_string(first_bad));
    }
  }
}

}  // namespace
}  // namespace cw::cache
