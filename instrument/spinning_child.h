// For tests: a fixture program run as a child that polls its flag until killed, and
// samples of it.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <utility>

#include "instrument/pc_sampler.h"

namespace cw::instrument {

struct SpinningChild {
  pid_t pid = -1;
  explicit SpinningChild(const char* path, const char* arg = nullptr) {
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      execl(path, path, arg, static_cast<char*>(nullptr));
      _exit(127);
    }
    // Past exec and the loader, into the loop: it has run 50 ms on a CPU (it only spins
    // there). A fixed sleep was not enough on a loaded machine: the maps read right after
    // were still the forking test's.
    for (int i = 0; i < 1000 && user_ticks() < 5; ++i) usleep(10 * 1000);
  }
  // Clock ticks the child has run in user mode (utime in /proc/PID/stat), -1 unknown.
  long user_ticks() const {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    std::FILE* f = std::fopen(path, "r");
    if (!f) return -1;
    char buf[1024];
    const size_t got = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[got] = '\0';
    // After the command's closing parenthesis: state, then fields 4-13, then utime (14).
    const char* p = std::strrchr(buf, ')');
    long utime = -1;
    if (!p || std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld", &utime) != 1)
      return -1;
    return utime;
  }
  ~SpinningChild() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  SpinningChild(const SpinningChild&) = delete;
  SpinningChild& operator=(const SpinningChild&) = delete;
};

// A thread that yields gets little CPU next to busy ones (other tests running): samples
// `tid` until there are `wanted` samples, for up to 10 s.
inline SampleRun sample_at_least(pid_t tid, size_t wanted) {
  SampleRun all;
  for (int round = 0; round < 33 && all.samples.size() < wanted; ++round) {
    SampleRun run = sample_user_pcs(tid, std::chrono::milliseconds(300));
    REQUIRE_MESSAGE(run.failure == SampleFailure::None, run.error);
    for (auto& s : run.samples) all.samples.push_back(std::move(s));
  }
  REQUIRE(all.samples.size() >= wanted);
  return all;
}

}  // namespace cw::instrument
