// Checks of an entry's many items (events, segments, edges) in a fixed number of chunks on
// every CPU. The error reported is the one a check in order would meet first (the lowest
// chunk's first), so neither the message nor whether there is one depends on the CPUs.
#pragma once

#include <cstddef>
#include <exception>
#include <vector>

#include "base/parallel.h"

namespace cw::cache {

inline constexpr size_t kCheckChunks = 16;
// Below this many items one pass on the calling thread costs less than starting others.
inline constexpr size_t kCheckInChunksFrom = size_t{1} << 16;

// check(begin, end) checks items [begin, end) in order and throws at the first bad one.
template <class Check>
void check_in_chunks(size_t n, Check&& check) {
  if (n < kCheckInChunksFrom) {
    check(size_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(kCheckChunks);
  parallel_for(kCheckChunks, [&](size_t c) {
    try {
      check(n * c / kCheckChunks, n * (c + 1) / kCheckChunks);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace cw::cache
