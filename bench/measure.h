// Clocks and memory figures the benchmarks share: wall and process-CPU time, the resident
// high-water mark, and medians.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

namespace cw::bench {

using Clock = std::chrono::steady_clock;

// CPU time of the process: unlike wall time, it does not count waiting for a CPU on a
// shared machine.
inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Stamp {
  Clock::time_point wall = Clock::now();
  double cpu = cpu_seconds();
};

struct Elapsed {
  double wall = 0, cpu = 0;
};

inline Elapsed since(const Stamp& start, const Stamp& now = Stamp{}) {
  return {std::chrono::duration<double>(now.wall - start.wall).count(), now.cpu - start.cpu};
}

// A field of /proc/self/status in KiB ("VmHWM", "VmRSS"), or 0.
inline uint64_t status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  return 0;
}

// Starts a new high-water mark at the current resident size (Linux >= 4.0).
inline void reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}

inline uint64_t max_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss);
}

// The middle value, or the mean of the middle two; 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace cw::bench
