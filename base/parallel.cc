#include "base/parallel.h"

#include <sched.h>

#include <cstdlib>
#include <string_view>

namespace cw {

unsigned worker_count() {
  if (const char* env = std::getenv("CAUSEWAY_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) return static_cast<unsigned>(std::min(n, 256L));
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

}  // namespace cw
