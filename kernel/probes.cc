#include "kernel/probes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "causeway.skel.h"
#include "kernel/libbpf_log.h"
#include "kernel/records.h"
#include "kernel/syscalls.h"
#include "kernel/watchpoints.h"

namespace cw::kernel {
namespace {

[[noreturn]] void fail(const std::string& what, int error) {
  std::string message = what + ": " + std::strerror(error < 0 ? -error : error);
  std::string log = take_libbpf_log();
  if (!log.empty()) message += "; libbpf said:" + log;
  throw ProbeError(message);
}

// Addresses of the kernel symbols the BPF side compares file->f_op with; data symbols are
// missing from kallsyms without CONFIG_KALLSYMS_ALL, function symbols are always there.
std::map<std::string, uint64_t> kernel_symbols(const std::vector<std::string>& names) {
  std::map<std::string, uint64_t> found;
  std::ifstream kallsyms("/proc/kallsyms");
  std::string line;
  while (std::getline(kallsyms, line) && found.size() < names.size()) {
    std::istringstream fields(line);
    std::string address, type, name;
    if (!(fields >> address >> type >> name)) continue;
    for (const auto& wanted : names) {
      if (name == wanted && !found.contains(name)) found[name] = std::stoull(address, nullptr, 16);
    }
  }
  return found;
}

size_t ring_buffer_size(size_t requested) {
  size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  while (size < requested) size <<= 1;
  return size;
}

// Which of the syscall tracepoints `names` (syscalls:NAME, made per call with
// CONFIG_FTRACE_SYSCALLS) this kernel lacks, as "the kernel has no tracepoint …"; "" when it
// has them all. Looked up where libbpf looks, in tracefs and under debugfs.
std::string missing_syscall_tracepoints(std::initializer_list<const char*> names) {
  std::string missing;
  for (const char* name : names) {
    bool found = false;
    for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
      found = found ||
              access((std::string(root) + "/events/syscalls/" + name + "/id").c_str(), R_OK) == 0;
    if (!found) missing += (missing.empty() ? "" : ", ") + std::string("syscalls:") + name;
  }
  return missing.empty() ? std::string() : "the kernel has no tracepoint " + missing;
}

int64_t realtime_minus_monotonic_ns() {
  timespec real{}, mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  return (int64_t{real.tv_sec} - mono.tv_sec) * 1000000000 + (real.tv_nsec - mono.tv_nsec);
}

}  // namespace

struct Probes::State {
  causeway* skeleton = nullptr;
  ring_buffer* ring = nullptr;
  const Sink* sink = nullptr;
  bool filtered = false;
  // libbpf consumes for as long as records keep coming; under a steady flood that is
  // forever. A call takes at most `budget` records, then returns so the caller can write.
  size_t budget = 0, taken = 0;
  static constexpr int kBudgetSpent = -ECANCELED;

  // One ring buffer sample: a record, or a CPU's block of staged records back to back
  // (kernel/bpf/output.bpf.h), each told apart by its header's size.
  static int on_record(void* context, void* data, size_t size) {
    auto* state = static_cast<State*>(context);
    state->split(data, size);
    // libbpf has already consumed a sample whose callback fails: stop *after* it.
    return state->taken >= state->budget ? kBudgetSpent : 0;
  }

  void split(const void* data, size_t size) {
    const auto* at = static_cast<const uint8_t*>(data);
    while (size >= sizeof(cw_rec_header)) {
      cw_rec_header h;
      std::memcpy(&h, at, sizeof(h));
      // A size that does not fit is passed on whole, for the decoder to refuse and count.
      size_t n = h.size >= sizeof(cw_rec_header) && h.size <= size ? h.size : size;
      if (sink) (*sink)(at, n);
      ++taken;
      at += n;
      size -= n;
    }
  }

  // After detach(): the records still staged on every CPU, level by level (each level's
  // block holds whole records; a record being written when the programs stopped is not
  // counted in its block's length).
  bool stages_read = false;
  bool detached = false;
  bool task_pass = false;  // calls_at_switch: on_task_pass is loaded and attached
  void read_stages() {
    stages_read = true;
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) return;
    const bpf_map* map = skeleton->maps.stages;
    const size_t value = (bpf_map__value_size(map) + 7) / 8 * 8;
    std::vector<uint8_t> values(value * static_cast<size_t>(cpus));
    for (uint32_t level = 0; level < CW_STAGE_LEVELS; ++level) {
      if (bpf_map__lookup_elem(map, &level, sizeof(level), values.data(), values.size(), 0) != 0)
        continue;
      for (int cpu = 0; cpu < cpus; ++cpu) {
        const uint8_t* v = values.data() + value * static_cast<size_t>(cpu);
        cw_stage head;
        std::memcpy(&head, v, offsetof(cw_stage, data));
        const size_t len = std::min<size_t>(head.len, CW_STAGE_CAP + CW_STAGE_SLACK);
        if (head.sent < len) split(v + offsetof(cw_stage, data) + head.sent, len - head.sent);
      }
    }
  }

  // Uprobes, uretprobes and watchpoint events (libbpf owns the events' fds).
  std::vector<bpf_link*> instrumentation;
  // Watches by (process, address), as the watch program finds them (map `watched`), and
  // the debug registers causeway holds per thread.
  std::map<std::pair<uint32_t, uint64_t>, cw_watch_info> watches;
  std::map<uint32_t, int> registers_held;
  // One cpu-clock event per online CPU with the sampling program (record --sample).
  std::vector<bpf_link*> samplers;
  std::string sampling_problem;
  std::string timer_owner_problem;
  std::string socket_transfer_problem;
  std::string pipe_transfer_problem;
  std::string file_lock_problem;
  std::string reap_problem;

  void destroy_samplers() {
    for (bpf_link* link : samplers) bpf_link__destroy(link);
    samplers.clear();
  }

  void destroy_instrumentation() {
    for (bpf_link* link : instrumentation) bpf_link__destroy(link);
    instrumentation.clear();
  }

  ~State() {
    destroy_samplers();
    destroy_instrumentation();
    if (ring) ring_buffer__free(ring);
    if (skeleton) causeway__destroy(skeleton);
  }
};

Probes::Probes(const ProbeOptions& options) : state_(new State) {
  try {
    if (std::string missing = missing_privileges(); !missing.empty()) throw ProbeError(missing);
    libbpf_set_print(keep_libbpf_message);
    take_libbpf_log();

    state_->skeleton = causeway__open();
    if (!state_->skeleton) fail("opening the eBPF object failed", errno);
    auto* skel = state_->skeleton;
    auto* rodata = skel->rodata;
    rodata->self_tgid = options.exclude_pid;
    rodata->stack_mode = options.stacks == StackMode::None       ? 0
                         : options.stacks == StackMode::Blocking ? 1
                                                                 : 2;
    if (options.ustack_bytes > CW_MAX_USTACK_BYTES)
      throw ProbeError("a user stack copy of " + std::to_string(options.ustack_bytes) +
                       " bytes is more than the " + std::to_string(CW_MAX_USTACK_BYTES) +
                       " a record can carry");
    rodata->ustack_bytes = options.stacks == StackMode::None ? 0 : options.ustack_bytes;
    rodata->full_stream = options.full ? 1 : 0;
    rodata->calls_at_switch = options.calls_at_switch ? 1 : 0;
    if (options.calls_at_switch) {
      bpf_program__set_autoload(skel->progs.on_sys_enter, false);
      bpf_program__set_autoload(skel->progs.on_sys_exit, false);
    }
    if (options.min_wait_ns != 0 && !options.calls_at_switch)
      throw ProbeError("holding waits back needs the calls taken at the scheduler");
    rodata->min_wait_ns = options.min_wait_ns;
    if (const int cpus = libbpf_num_possible_cpus(); cpus > 0)
      rodata->possible_cpus = static_cast<uint32_t>(cpus);
    // Programs that the kernel may preempt hold their CPU while they write, where it lets
    // them (kernel/bpf/output.bpf.h, keep_cpu).
    rodata->preempt_guard =
        libbpf_find_vmlinux_btf_id("bpf_preempt_disable", BPF_TRACE_FENTRY) >= 0 ? 1 : 0;
    if (options.full_waits_per_s != 0) {
      rodata->wait_budget_ns = std::max<uint64_t>(1, 1'000'000'000ull / options.full_waits_per_s);
      rodata->wait_burst =
          options.full_waits_burst != 0 ? options.full_waits_burst : options.full_waits_per_s;
    } else {
      rodata->wait_budget_ns = 1ull << 62;  // never earned
      rodata->wait_burst = 1;
    }
    state_->task_pass = options.calls_at_switch;
    bpf_program__set_autoload(skel->progs.on_task_pass, state_->task_pass);
    state_->filtered = !options.pids.empty();
    rodata->filter_pids = state_->filtered;
    auto symbols =
        kernel_symbols({"eventfd_fops", "timerfd_fops", "pipefifo_fops", "socket_file_ops",
                        "eventfd_release", "timerfd_release", "pipe_release", "sock_close"});
    rodata->eventfd_fops = symbols["eventfd_fops"];
    rodata->timerfd_fops = symbols["timerfd_fops"];
    rodata->pipefifo_fops = symbols["pipefifo_fops"];
    rodata->socket_fops = symbols["socket_file_ops"];
    rodata->eventfd_release = symbols["eventfd_release"];
    rodata->timerfd_release = symbols["timerfd_release"];
    rodata->pipe_release = symbols["pipe_release"];
    rodata->sock_release = symbols["sock_close"];
    rodata->nr_flock = SYS_flock;
    rodata->nr_fcntl = SYS_fcntl;
    rodata->nr_waitid = SYS_waitid;
    rodata->nr_tgkill = SYS_tgkill;
    rodata->realtime_offset_ns = realtime_minus_monotonic_ns();

    size_t ring_bytes = ring_buffer_size(options.ring_buffer_bytes);
    if (int err = bpf_map__set_max_entries(skel->maps.events, ring_bytes))
      fail("sizing the ring buffer failed", err);
    rodata->wakeup_bytes = ring_bytes / 8;
    // Two stack-copy slots per CPU (causeway.bpf.c, ustack_scratch); one pair when unused.
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) fail("counting the possible CPUs failed", cpus);
    uint32_t slots = rodata->ustack_bytes != 0 ? 2 * static_cast<uint32_t>(cpus) : 2;
    if (int err = bpf_map__set_max_entries(skel->maps.ustack_scratch, slots))
      fail("sizing the stack copy slots failed", err);
    // Timer owners (which thread armed the timer an interrupt expires) need the hrtimer
    // tracepoints; a kernel without them records everything else, and says so.
    {
      std::string missing;
      for (const char* tp : {"hrtimer_start", "hrtimer_expire_entry", "hrtimer_expire_exit"})
        if (libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP) < 0)
          missing += (missing.empty() ? "" : ", ") + std::string(tp);
      take_libbpf_log();
      // Staging records per CPU needs the tick's tracepoint to send a block that waits.
      rodata->stage_records = missing.empty() ? 1 : 0;
      if (!missing.empty()) {
        bpf_program__set_autoload(skel->progs.on_hrtimer_start, false);
        bpf_program__set_autoload(skel->progs.on_hrtimer_expire_entry, false);
        bpf_program__set_autoload(skel->progs.on_hrtimer_expire_exit, false);
        state_->timer_owner_problem = "the kernel has no tracepoint " + missing;
      }
    }
    // Taken at the scheduler, what only a call's end shows comes from tracepoints inside
    // the calls: bytes moved on sockets (Linux 6.3 and later; without them such a recording
    // has no message edge for a request read without a wait) and file locks' results.
    auto load_if_present = [&](std::initializer_list<const char*> tracepoints,
                               std::initializer_list<bpf_program*> programs) {
      std::string missing;
      if (options.calls_at_switch) {
        for (const char* tp : tracepoints)
          if (libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP) < 0)
            missing += (missing.empty() ? "" : ", ") + std::string(tp);
        take_libbpf_log();
      }
      for (bpf_program* program : programs)
        bpf_program__set_autoload(program, options.calls_at_switch && missing.empty());
      return missing.empty() ? std::string() : "the kernel has no tracepoint " + missing;
    };
    state_->socket_transfer_problem =
        load_if_present({"sock_send_length", "sock_recv_length"},
                        {skel->progs.on_sock_send, skel->progs.on_sock_recv});
    // A pipe's bytes, when asked for: the read and write calls' own exit tracepoints. Any
    // per-call tracepoint puts every system call on the machine on the kernel's slow path,
    // so they are not on by default. The syscall programs count them themselves.
    if (options.calls_at_switch && !options.pipe_bytes)
      state_->pipe_transfer_problem =
          "not asked for (--pipe-bytes: the read and write calls' tracepoints cost every "
          "system call on the machine)";
    else if (options.calls_at_switch)
      state_->pipe_transfer_problem = missing_syscall_tracepoints(
          {"sys_exit_write", "sys_exit_writev", "sys_exit_read", "sys_exit_readv"});
    for (bpf_program* program : {skel->progs.on_write_exit, skel->progs.on_writev_exit,
                                 skel->progs.on_read_exit, skel->progs.on_readv_exit})
      bpf_program__set_autoload(program,
                                options.calls_at_switch && state_->pipe_transfer_problem.empty());
    state_->file_lock_problem =
        load_if_present({"fcntl_setlk", "flock_lock_inode"},
                        {skel->progs.on_fcntl_setlk, skel->progs.on_flock_lock_inode});
    state_->reap_problem =
        load_if_present({"sched_process_wait"}, {skel->progs.on_sched_process_wait});
    if (int err = causeway__load(skel)) fail("loading the eBPF programs failed", err);

    for (auto [nr, sys_class] : options.syscall_classes) {
      if (nr >= CW_MAX_SYSCALLS)
        throw ProbeError("syscall number " + std::to_string(nr) + " is beyond the class table (" +
                         std::to_string(CW_MAX_SYSCALLS) + " entries)");
      if (int err = bpf_map__update_elem(skel->maps.syscall_class, &nr, sizeof(nr), &sys_class,
                                         sizeof(sys_class), BPF_ANY))
        fail("filling the syscall class table failed", err);
    }
    for (uint32_t pid : options.pids) add_pid(pid);

    if (int err = causeway__attach(skel)) fail("attaching the eBPF programs failed", err);
    state_->ring =
        ring_buffer__new(bpf_map__fd(skel->maps.events), &State::on_record, state_, nullptr);
    if (!state_->ring) fail("opening the ring buffer failed", errno);
    if (options.sample_hz > 0) start_sampling(options.sample_hz);
  } catch (...) {
    delete state_;
    throw;
  }
}

Probes::~Probes() {
  delete state_;
}

void Probes::set_hot_programs(bool scheduler, bool sockets) {
  causeway* skel = state_->skeleton;
  struct Hot {
    bpf_program* program;
    bpf_link** link;
    bool wanted;
  };
  const Hot hot[] = {{skel->progs.on_sched_switch, &skel->links.on_sched_switch, scheduler},
                     {skel->progs.on_sched_waking, &skel->links.on_sched_waking, scheduler},
                     {skel->progs.on_sock_send, &skel->links.on_sock_send, sockets},
                     {skel->progs.on_sock_recv, &skel->links.on_sock_recv, sockets}};
  for (const Hot& h : hot) {
    if (!bpf_program__autoload(h.program)) continue;  // never loaded here
    if (!h.wanted && *h.link) {
      bpf_link__destroy(*h.link);
      *h.link = nullptr;
    } else if (h.wanted && !*h.link) {
      bpf_link* link = bpf_program__attach(h.program);
      if (!link)
        throw ProbeError("attaching " + std::string(bpf_program__name(h.program)) +
                         " again failed: " + std::strerror(errno));
      *h.link = link;
    }
  }
}

const std::string& Probes::sampling_problem() const {
  return state_->sampling_problem;
}

const std::string& Probes::timer_owner_problem() const {
  return state_->timer_owner_problem;
}

const std::string& Probes::socket_transfer_problem() const {
  return state_->socket_transfer_problem;
}

const std::string& Probes::pipe_transfer_problem() const {
  return state_->pipe_transfer_problem;
}

const std::string& Probes::file_lock_problem() const {
  return state_->file_lock_problem;
}

const std::string& Probes::reap_problem() const {
  return state_->reap_problem;
}

namespace {

// The CPUs in /sys/devices/system/cpu/online ("0-3,6"); empty when it cannot be read.
std::vector<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string text;
  std::getline(in, text);
  std::vector<int> cpus;
  std::istringstream ranges(text);
  for (std::string range; std::getline(ranges, range, ',');) {
    if (range.empty()) continue;
    size_t dash = range.find('-');
    int first = std::stoi(range.substr(0, dash));
    int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace

void Probes::start_sampling(uint32_t hz) {
  // A fixed period in ns of CPU time, not perf's frequency mode: every sample then stands
  // for the same time, which is what the latency inference adds up.
  uint64_t period_ns = 1'000'000'000ull / hz;
  std::vector<int> cpus = online_cpus();
  if (cpus.empty()) {
    state_->sampling_problem = "the online CPUs could not be read from /sys";
    return;
  }
  for (int cpu : cpus) {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = period_ns;
    int fd =
        static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0) {
      state_->sampling_problem = "perf_event_open(cpu-clock) on cpu " + std::to_string(cpu) +
                                 " failed: " + std::strerror(errno);
      state_->destroy_samplers();
      return;
    }
    bpf_link* link = bpf_program__attach_perf_event(state_->skeleton->progs.on_cpu_clock, fd);
    if (!link) {
      int error = errno;
      close(fd);
      state_->sampling_problem = "attaching the sampling program to cpu " + std::to_string(cpu) +
                                 "'s cpu-clock event failed: " + std::strerror(error) +
                                 take_libbpf_log();
      state_->destroy_samplers();
      return;
    }
    state_->samplers.push_back(link);
  }
}

void Probes::detach() {
  state_->destroy_samplers();
  state_->destroy_instrumentation();
  causeway__detach(state_->skeleton);
  state_->detached = true;
}

void Probes::add_pid(uint32_t pid) {
  uint8_t one = 1;
  if (int err = bpf_map__update_elem(state_->skeleton->maps.traced_pids, &pid, sizeof(pid), &one,
                                     sizeof(one), BPF_ANY))
    fail("adding pid " + std::to_string(pid) + " to the recorded set failed", err);
}

namespace {

constexpr size_t kRecordsPerCall = 1u << 18;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

bpf_link* attach_uprobe(bpf_program* program, const std::string& path, uint64_t offset,
                        uint64_t cookie, bool retprobe, const std::string& what) {
  LIBBPF_OPTS(bpf_uprobe_opts, options, .bpf_cookie = cookie, .retprobe = retprobe);
  // pid -1: every process mapping the file; the BPF side filters by process.
  bpf_link* link = bpf_program__attach_uprobe_opts(program, -1, path.c_str(), offset, &options);
  if (!link)
    fail(std::string(retprobe ? "uretprobe" : "uprobe") + " at " + path + "+" + hex(offset) + " (" +
             what + ") failed",
         errno);
  return link;
}

int size_log2(uint8_t size) {
  switch (size) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: return -1;
  }
}

}  // namespace

void Probes::attach_function(const FunctionProbe& probe) {
  auto* progs = &state_->skeleton->progs;
  std::string what = "function " + std::to_string(probe.fn_index);
  bpf_link* entry = attach_uprobe(progs->on_function_entry, probe.path, probe.file_offset,
                                  probe.fn_index, false, what);
  if (probe.exit) {
    try {
      state_->instrumentation.push_back(attach_uprobe(
          progs->on_function_exit, probe.path, probe.file_offset, probe.fn_index, true, what));
    } catch (...) {
      bpf_link__destroy(entry);
      throw;
    }
  }
  state_->instrumentation.push_back(entry);
}

void Probes::attach_flag_site(const FlagSiteProbe& site) {
  std::string where =
      site.path + "+" + hex(site.file_offset) + " (flag " + std::to_string(site.flag_index) + ")";
  int log2 = size_log2(site.size);
  if (log2 < 0)
    throw ProbeError("flag site " + where + ": a flag has 1, 2, 4 or 8 bytes, not " +
                     std::to_string(site.size));
  if (site.flag_index >= CW_SITE_MAX_FLAGS)
    throw ProbeError("flag site " + where + ": flag indexes stop at " +
                     std::to_string(CW_SITE_MAX_FLAGS - 1));
  if (site.delta < INT32_MIN || site.delta > INT32_MAX)
    throw ProbeError("flag site " + where + ": the flag is " + std::to_string(site.delta) +
                     " bytes away, beyond the ±2 GiB an instruction can reach");
  bool arms = site.kind == FlagSiteKind::WriteArm || site.kind == FlagSiteKind::ReadArm;
  if (arms && (site.length == 0 || site.length > 15))
    throw ProbeError("flag site " + where + ": a store's instruction length must be 1..15, not " +
                     std::to_string(site.length));
  uint32_t kind = site.kind == FlagSiteKind::Read       ? CW_SITE_READ
                  : site.kind == FlagSiteKind::WriteArm ? CW_SITE_WRITE_ARM
                  : site.kind == FlagSiteKind::ReadArm  ? CW_SITE_READ_ARM
                                                        : CW_SITE_WRITE_AFTER;
  uint64_t cookie = cw_site_cookie(static_cast<int32_t>(site.delta), site.flag_index, kind,
                                   site.via_got, static_cast<uint32_t>(log2), site.length);
  state_->instrumentation.push_back(attach_uprobe(state_->skeleton->progs.on_flag_site, site.path,
                                                  site.file_offset, cookie, false,
                                                  "flag " + std::to_string(site.flag_index)));
}

void Probes::attach_watchpoint(const Watchpoint& watch) {
  std::string where = "watchpoint on " + hex(watch.address) + " (flag " +
                      std::to_string(watch.flag_index) + ") in process " +
                      std::to_string(watch.pid);
  if (std::string problem = watch_address_problem(watch.address, watch.size); !problem.empty())
    throw ProbeError(where + ": " + problem);
  auto* skel = state_->skeleton;
  cw_watch_info info{};
  info.flag_index = watch.flag_index;
  info.size = watch.size;
  info.writes_only = watch.writes_only;
  auto key = std::make_pair(watch.pid, watch.address);
  auto known = state_->watches.find(key);
  bool fresh = known == state_->watches.end();
  if (!fresh && std::memcmp(&known->second, &info, sizeof(info)) != 0)
    throw ProbeError(where + ": the address is already watched for flag " +
                     std::to_string(known->second.flag_index) +
                     " with another size or access; a hit could not tell which");

  std::vector<uint32_t> threads = threads_of(watch.pid);
  if (threads.empty()) throw ProbeError(where + ": no such process");
  if (watch.tid != 0) {
    if (std::find(threads.begin(), threads.end(), watch.tid) == threads.end())
      throw ProbeError(where + ": thread " + std::to_string(watch.tid) + " is not in the process");
    threads = {watch.tid};
  }

  // In the table first: the first hit may come as soon as a thread is watched.
  cw_watch_key map_key{watch.pid, 0, watch.address};
  if (fresh) {
    if (int err = bpf_map__update_elem(skel->maps.watched, &map_key, sizeof(map_key), &info,
                                       sizeof(info), BPF_ANY))
      fail(where + ": filling the watch table failed", err);
  }
  std::vector<bpf_link*> links;
  std::vector<uint32_t> done;
  auto undo = [&] {
    for (bpf_link* link : links) bpf_link__destroy(link);
    for (uint32_t tid : done) --state_->registers_held[tid];
    if (fresh) bpf_map__delete_elem(skel->maps.watched, &map_key, sizeof(map_key), 0);
  };
  // A thread listed for tid == 0 may end before it is watched: then it is skipped.
  auto watch_thread = [&](uint32_t tid, bool may_be_gone) {
    int fd = open_watchpoint_event(tid, watch.address, watch.size, watch.writes_only);
    if (fd == -ESRCH && may_be_gone) return;
    if (fd == -ENOSPC)
      throw ProbeError(where + ": thread " + std::to_string(tid) +
                       " has no free debug register (x86 has " + std::to_string(kDebugRegisters) +
                       " per thread; causeway holds " +
                       std::to_string(state_->registers_held[tid]) + " of them there)");
    if (fd < 0) fail(where + ": perf_event_open on thread " + std::to_string(tid) + " failed", fd);
    bpf_link* link = bpf_program__attach_perf_event(skel->progs.on_watch_hit, fd);
    if (!link) {
      int error = errno;
      close(fd);
      fail(where + ": attaching the watch program to thread " + std::to_string(tid) + " failed",
           error);
    }
    links.push_back(link);
    done.push_back(tid);
    ++state_->registers_held[tid];
  };
  try {
    // One walk: a second would find the threads that inherited the watch meanwhile and
    // watch them twice. (A thread created during the walk by one not yet watched is missed.)
    for (uint32_t tid : threads) watch_thread(tid, watch.tid == 0);
    if (done.empty()) throw ProbeError(where + ": the process has no thread left to watch");
  } catch (...) {
    undo();
    throw;
  }
  state_->watches.emplace(key, info);
  state_->instrumentation.insert(state_->instrumentation.end(), links.begin(), links.end());
}

size_t Probes::attached_instrumentation() const {
  return state_->instrumentation.size();
}

int Probes::poll(int timeout_ms, const Sink& sink) {
  state_->sink = &sink;
  state_->budget = kRecordsPerCall;
  state_->taken = 0;
  // The kernel side wakes the reader only when the buffer fills up (see wakeup_bytes), so
  // what came in while waiting is consumed after the wait too.
  int err = ring_buffer__poll(state_->ring, timeout_ms);
  if (err >= 0 || err == -EINTR) err = ring_buffer__consume(state_->ring);
  state_->sink = nullptr;
  if (err < 0 && err != State::kBudgetSpent && err != -EINTR)
    fail("reading the ring buffer failed", err);
  return static_cast<int>(state_->taken);
}

int Probes::drain(const Sink& sink) {
  state_->sink = &sink;
  state_->budget = kRecordsPerCall * 8;
  state_->taken = 0;
  int err = ring_buffer__consume(state_->ring);
  // Once the ring is empty, what the CPUs still hold staged (the programs no longer run).
  if (err == 0 && state_->taken == 0 && state_->detached && !state_->stages_read)
    state_->read_stages();
  state_->sink = nullptr;
  if (err < 0 && err != State::kBudgetSpent) fail("reading the ring buffer failed", err);
  return static_cast<int>(state_->taken);
}

void Probes::pass_over_tasks(bool last) {
  if (!state_->task_pass || state_->detached) return;
  bpf_link* link = state_->skeleton->links.on_task_pass;
  if (!link) return;
  if (last) state_->skeleton->bss->stopping = 1;
  // Reading the iterator runs the program over every task; it prints nothing.
  int fd = bpf_iter_create(bpf_link__fd(link));
  if (fd < 0) fail("starting the pass over held waits failed", fd);
  char buffer[64];
  ssize_t got;
  while ((got = read(fd, buffer, sizeof(buffer))) > 0 || (got < 0 && errno == EINTR)) {
  }
  const int err = got < 0 ? -errno : 0;
  close(fd);
  if (err < 0) fail("the pass over held waits failed", err);
}

std::vector<uint64_t> Probes::lost_per_cpu() const {
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) fail("counting the possible CPUs failed", cpus);
  std::vector<uint64_t> lost(static_cast<size_t>(cpus));
  uint32_t zero = 0;
  if (int err = bpf_map__lookup_elem(state_->skeleton->maps.lost, &zero, sizeof(zero), lost.data(),
                                     lost.size() * sizeof(uint64_t), 0))
    fail("reading the lost-record counters failed", err);
  return lost;
}

}  // namespace cw::kernel
