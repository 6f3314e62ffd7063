// For tests: a fixture program run as a child that polls its flag until killed, and
// samples of it.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
    usleep(100 * 1000);  // past the loader, into the loop
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
