// Loads causeway's eBPF programs (kernel/causeway.bpf.c), attaches them system-wide and
// hands their records (kernel/records.h) to the recorder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cw::kernel {

// The machine cannot record: no privilege, no BTF, a kernel without a needed hook.
// The message says what is missing and how to get it (the CLI exits 2 with it).
struct ProbeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class StackMode {
  None,      // no user stacks
  Blocking,  // a thread's user stack when its syscall blocks (the default)
  All,       // also at the entry of every recorded syscall (costly)
};

struct ProbeOptions {
  // Processes to record (their threads, and children forked later); empty records every
  // process on the machine.
  std::vector<uint32_t> pids;
  StackMode stacks = StackMode::Blocking;
  size_t ring_buffer_bytes = 64u << 20;  // the BPF ring buffer; rounded to a power of 2
  uint32_t exclude_pid = 0;              // the recorder itself (its writes make events)
  // Syscall number -> enum cw_sys_class (kernel/syscalls.h); numbers absent are not
  // recorded.
  std::vector<std::pair<uint32_t, uint32_t>> syscall_classes;
};

// Says what this process lacks to record, or "" when it has what it needs: root, or
// CAP_BPF and CAP_PERFMON (and CAP_SYS_RESOURCE where the memlock limit is low).
std::string missing_privileges();

class Probes {
 public:
  // Opens, loads and attaches. Throws ProbeError when the machine cannot.
  explicit Probes(const ProbeOptions& options);
  ~Probes();
  Probes(const Probes&) = delete;
  Probes& operator=(const Probes&) = delete;

  // Adds a process to the recorded set (when recording is filtered by pid).
  void add_pid(uint32_t pid);

  // Waits up to `timeout_ms` for records and passes each to `sink` (a pointer to a
  // cw_rec_header and the record's size in bytes). Returns the number of records
  // consumed, or throws ProbeError when the ring buffer fails.
  using Sink = std::function<void(const void* record, size_t size)>;
  int poll(int timeout_ms, const Sink& sink);
  // Consumes what is already in the ring buffer without waiting.
  int drain(const Sink& sink);

  // Stops the kernel side writing records; what it wrote stays readable through drain().
  void detach();

  // Records the kernel could not write because the ring buffer was full, per CPU,
  // counted since the probes were attached.
  std::vector<uint64_t> lost_per_cpu() const;

 private:
  struct State;
  State* state_;
};

}  // namespace cw::kernel
