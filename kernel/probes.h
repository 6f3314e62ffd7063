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
  // 0: user stacks are walked by frame pointer in the kernel. Otherwise this many bytes
  // of the user stack (at most CW_MAX_USTACK_BYTES) are copied with the registers, for
  // user space to unwind (CW_REC_USTACK, recorder/dwarf_unwind.h).
  uint32_t ustack_bytes = 0;
  // cpu-clock samples per second on each online CPU (0: none): CW_REC_SAMPLE records.
  uint32_t sample_hz = 0;
  // Every recorded syscall written, whether or not anything happened in it, and every
  // blocked call's kernel stack walked (record --full).
  bool full = false;
  // Calls taken from the scheduler instead of the syscall tracepoints: only the calls a
  // thread blocks in or wakes another from, without their return values, transfers or
  // ready descriptors (kernel/bpf/calls_at_switch.bpf.h; record --calls scheduler).
  bool calls_at_switch = false;
  // With calls_at_switch: a wait is written only once it has lasted this long, and shorter
  // ones are counted per thread (kernel/bpf/held_waits.bpf.h; record --min-wait). 0: all.
  // The recorder must call pass_over_tasks() well within its hold of early records.
  uint64_t min_wait_ns = 0;
  // With calls_at_switch: pipes' bytes counted at the read and write calls' exit tracepoints
  // (record --pipe-bytes). Off by default: while any per-call tracepoint is on, every system
  // call on the machine takes the kernel's slow path (docs/recording.md, "Bytes on pipes").
  bool pipe_bytes = false;
  // With min_wait_ns: the waits per second each thread writes in full whatever their length,
  // up to full_waits_burst at once, before its waits are held (0: none).
  uint32_t full_waits_per_s = 0;
  uint32_t full_waits_burst = 0;         // 0: a second's worth (full_waits_per_s)
  size_t ring_buffer_bytes = 64u << 20;  // the BPF ring buffer; rounded to a power of 2
  uint32_t exclude_pid = 0;              // the recorder itself (its writes make events)
  // Syscall number -> enum cw_sys_class (kernel/syscalls.h); numbers absent are not
  // recorded.
  std::vector<std::pair<uint32_t, uint32_t>> syscall_classes;
};

// Instrumentation the packs ask for (kernel/README.md, "Instrumentation"). Offsets are
// file offsets in `path` (where a uprobe goes); the records carry the indexes, which the
// recorder maps back to names.

// A uprobe at a function's entry and, when `exit`, a uretprobe at its returns: CW_REC_CALL
// records with fn_index.
struct FunctionProbe {
  std::string path;
  uint64_t file_offset = 0;
  uint32_t fn_index = 0;
  bool exit = true;
};

// Read: the instruction reads the flag. WriteArm: it stores to the flag (probe it with
// `length`); WriteAfter: the instruction that follows that store, where the value written
// is read.
// ReadArm: a load recorded at the next instruction (a WriteAfter site) with the value then
// in memory, so a store that lands between the uprobe and the load is not missed.
enum class FlagSiteKind : uint8_t { Read, WriteArm, WriteAfter, ReadArm };

// A uprobe on one instruction that accesses a flag: CW_REC_FLAG records (source PROBE).
struct FlagSiteProbe {
  std::string path;
  uint64_t file_offset = 0;  // where the uprobe goes
  uint32_t flag_index = 0;   // < CW_SITE_MAX_FLAGS
  FlagSiteKind kind = FlagSiteKind::Read;
  bool via_got = false;  // delta leads to a slot holding the flag's address
  int64_t delta = 0;     // flag (or GOT slot) vaddr - site vaddr; fits in 32 bits
  uint8_t size = 4;      // flag bytes: 1, 2, 4 or 8
  uint8_t length = 0;    // instruction length (WriteArm): the next one is at site + length
};

// A hardware watchpoint on `size` bytes at `address` (aligned to size) in process `pid`:
// CW_REC_FLAG records (source WATCH), access WRITE when `writes_only`, else UNKNOWN (x86
// has no read-only watch; the recorded instruction bytes tell). On thread `tid`, or on
// every thread of the process now when tid == 0; threads they create later inherit it.
struct Watchpoint {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t address = 0;
  uint8_t size = 4;
  bool writes_only = false;
  uint32_t flag_index = 0;
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
  // With calls_at_switch, a pass over the machine's tasks: writes the waits that have lasted
  // min_wait_ns and are still held, and closes the calls left open for a thread that may
  // sleep in them again once that has not happened for a while (kernel/bpf/
  // calls_at_switch.bpf.h, resume_call); with `last`, all of them. Before detach() with
  // `last`, so the waits of a hang are written.
  void pass_over_tasks(bool last = false);

  // Instrumentation (the structs above). Each throws ProbeError saying what failed, and
  // leaves nothing of a failed request attached. Uprobes fire in every process mapping
  // the file; only recorded processes make records.
  void attach_function(const FunctionProbe& probe);
  void attach_flag_site(const FlagSiteProbe& site);
  // A thread has four debug registers: a fifth watch on one thread is refused.
  void attach_watchpoint(const Watchpoint& watch);
  // Kernel attachments made by the three calls above: uprobes, uretprobes, and one
  // watchpoint per thread (threads that inherited one not counted).
  size_t attached_instrumentation() const;

  // Why sampling was asked for and is not happening ("" when it is, or was not asked for):
  // the machine would not open cpu-clock perf events. Recording goes on without samples.
  const std::string& sampling_problem() const;

  // Why wake-ups and signals raised by a timer's expiry carry no `cause` ("" when they do):
  // the kernel lacks the hrtimer tracepoints that say who armed each timer.
  const std::string& timer_owner_problem() const;

  // With calls_at_switch: why no bytes moved on sockets are recorded ("" when they are): the
  // kernel lacks the socket layer's tracepoints (sock_send_length, sock_recv_length).
  const std::string& socket_transfer_problem() const;
  // With calls_at_switch: why no bytes moved on pipes are recorded ("" when they are): not
  // asked for (pipe_bytes), or the kernel lacks the read and write calls' own tracepoints
  // (syscalls:sys_exit_write, …).
  const std::string& pipe_transfer_problem() const;

  // With calls_at_switch: why file locks' results are not recorded ("" when they are): the
  // kernel lacks the tracepoints fcntl_setlk and flock_lock_inode.
  const std::string& file_lock_problem() const;

  // With calls_at_switch: why children reaped by a wait that did not block are not recorded
  // ("" when they are): the kernel lacks the tracepoint sched_process_wait.
  const std::string& reap_problem() const;

  // Stops the kernel side writing records; what it wrote stays readable through drain().
  void detach();

  // For the overhead bench alone (bench/overhead/alternate.sh): detaches, or attaches again,
  // the programs that run on every context switch and wake-up (`scheduler`) and on every
  // socket send and receive (`sockets`; only where they were loaded). The machine's speed
  // drifts by more than the recorder costs within a minute on a VM; switching these every
  // few seconds measures their cost against the same minute's. What is recorded meanwhile
  // misses those events and is no recording to diagnose. Throws ProbeError when one cannot
  // be attached again.
  void set_hot_programs(bool scheduler, bool sockets);

  // Records the kernel could not write because the ring buffer was full, per CPU,
  // counted since the probes were attached.
  std::vector<uint64_t> lost_per_cpu() const;

 private:
  void start_sampling(uint32_t hz);
  struct State;
  State* state_;
};

}  // namespace cw::kernel
