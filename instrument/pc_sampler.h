// Samples where one thread's user code is, with perf's cpu-clock: each sample's user
// program counter and the top of its user stack. A thread that yields or sleeps in a
// loop spends most of its time in the kernel; the user registers then show the syscall
// wrapper, and the stack holds the return addresses back into the loop.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace cw::instrument {

struct UserSample {
  uint64_t ip = 0;  // user-mode program counter (where the thread returns to from the kernel)
  uint64_t sp = 0, bp = 0;
  bool in_kernel = false;       // taken while the thread ran kernel code
  std::vector<uint64_t> stack;  // user stack words from sp upward
};

struct SamplerOptions {
  uint64_t frequency = 4000;   // samples per second of the thread's CPU time
  uint32_t stack_bytes = 512;  // user stack copied per sample (a multiple of 8)
  size_t ring_pages = 64;      // data pages of the ring buffer; a power of two
};

enum class SampleFailure { None, NoSuchThread, Environment };

struct SampleRun {
  std::vector<UserSample> samples;
  uint64_t lost = 0;          // samples the kernel dropped (ring full)
  uint64_t without_user = 0;  // samples with no user registers (kernel-only moments)
  SampleFailure failure = SampleFailure::None;
  std::string error;  // what failed, when failure != None
};

// Samples thread `tid` for `duration` (it need not be a child; needs root or
// CAP_PERFMON and perf_event_paranoid allowing kernel-mode samples). Returns the samples,
// or a failure saying what went wrong.
SampleRun sample_user_pcs(pid_t tid, std::chrono::milliseconds duration,
                          const SamplerOptions& options = {});

}  // namespace cw::instrument
