// Independent pieces of work spread over the CPUs, with results that do not depend on how
// many there are: the caller gives every index its own result slot and merges the slots
// in index order afterwards.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cw {

// How many threads are worth running: $CAUSEWAY_THREADS when set to a positive number
// (1 runs everything on the calling thread), else the CPUs this process may run on.
unsigned worker_count();

// Calls fn(i) once for every i in [0, n), on up to `workers` threads (the calling thread
// is one of them). Indexes are handed out one at a time, so a few long items do not leave
// the other threads idle. The first exception thrown stops the handing out and is
// rethrown here once every thread has stopped.
template <class Fn>
void parallel_for(size_t n, Fn&& fn, unsigned workers = worker_count()) {
  const size_t threads = std::min<size_t>(workers, n);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&] {
    try {
      for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) fn(i);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(n, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace cw
