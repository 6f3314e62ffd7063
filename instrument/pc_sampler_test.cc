// Samples real threads through the kernel's perf events (needs root or CAP_PERFMON).
#include "instrument/pc_sampler.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include "instrument/proc_maps.h"
#include "instrument/spinning_child.h"

namespace cw::instrument {
namespace {

TEST_CASE("a yielding thread's samples: user pcs in its code or libc, with its stack") {
  SpinningChild child(CW_FLAG_PIE, "0");
  SampleRun run = sample_at_least(child.pid, 10);
  std::string error;
  auto maps = read_proc_maps(child.pid, &error);
  REQUIRE_MESSAGE(maps.has_value(), error);
  size_t in_code = 0, in_kernel = 0;
  for (const UserSample& s : run.samples) {
    const ProcMap* m = map_at(*maps, s.ip);
    in_code += m && m->executable && m->file_backed();
    in_kernel += s.in_kernel;
    CHECK(map_at(*maps, s.sp) != nullptr);
    CHECK(s.stack.size() == SamplerOptions{}.stack_bytes / 8);
  }
  CHECK(in_code == run.samples.size());
  CHECK(in_kernel > 0);  // sched_yield runs in the kernel
}

TEST_CASE("sampling a thread that does not exist says so") {
  SampleRun run = sample_user_pcs(0x3fffffff, std::chrono::milliseconds(10));
  CHECK(run.failure == SampleFailure::NoSuchThread);
  CHECK(run.error.find("thread 1073741823") != std::string::npos);
}

TEST_CASE("a ring size that is not a power of two is refused") {
  SamplerOptions options;
  options.ring_pages = 3;
  SampleRun run = sample_user_pcs(getpid(), std::chrono::milliseconds(10), options);
  CHECK(run.failure == SampleFailure::Environment);
  CHECK(run.error == "ring_pages must be a power of two, got 3");
}

}  // namespace
}  // namespace cw::instrument
