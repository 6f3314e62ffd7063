#include "recorder/proc_snapshot.h"

#include <doctest/doctest.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace cw {
namespace {

TEST_CASE("the /proc snapshot names this process, its threads and kernel threads") {
  std::atomic<bool> named{false}, done{false};
  std::thread worker([&] {
    pthread_setname_np(pthread_self(), "cw snap (x)");
    named = true;
    while (!done) usleep(1000);
  });
  while (!named) usleep(1000);
  auto all = snapshot_processes();
  done = true;
  worker.join();

  auto self = std::find_if(all.begin(), all.end(),
                           [](const ProcProcess& p) { return p.pid == uint32_t(getpid()); });
  REQUIRE(self != all.end());
  CHECK(self->ppid == uint32_t(getppid()));
  CHECK(self->exe.find("recorder_tests") != std::string::npos);
  CHECK(self->threads.size() >= 2);
  bool found = std::any_of(self->threads.begin(), self->threads.end(),
                           [](const ProcThread& t) { return t.comm == "cw snap (x)"; });
  CHECK(found);  // a name with a space and parentheses survives the stat parsing
  // kthreadd (pid 2) is the kernel's thread factory.
  auto kthreadd =
      std::find_if(all.begin(), all.end(), [](const ProcProcess& p) { return p.pid == 2; });
  REQUIRE(kthreadd != all.end());
  REQUIRE(!kthreadd->threads.empty());
  CHECK(kthreadd->threads[0].kernel);
  CHECK_FALSE(self->threads[0].kernel);
}

}  // namespace
}  // namespace cw
