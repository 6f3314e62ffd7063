#include "base/populate.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "base/parallel.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14's uapi value (older headers lack it)
#endif

namespace cw {

bool populate(void* begin, size_t bytes, unsigned workers) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(begin) + bytes) & ~(page - 1);
  if (end <= first) return true;
  const uintptr_t pages = (end - first) / page;
  const size_t parts = std::min<size_t>(std::max(workers, 1u), pages);
  std::atomic<bool> refused{false};
  parallel_for(
      parts,
      [&](size_t p) {
        const uintptr_t from = first + pages * p / parts * page;
        const uintptr_t to = first + pages * (p + 1) / parts * page;
        if (madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0)
          refused = true;
      },
      static_cast<unsigned>(parts));
  return !refused;
}

bool populate(void* begin, size_t bytes) {
  return populate(begin, bytes, worker_count());
}

}  // namespace cw
