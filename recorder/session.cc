#include "recorder/session.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "kernel/syscalls.h"
#include "recorder/dwarf_unwind.h"
#include "recorder/kallsyms.h"
#include "recorder/maps_capture.h"
#include "recorder/perf_map_capture.h"
#include "recorder/proc_locks.h"
#include "recorder/proc_snapshot.h"
#include "recorder/stream_peer.h"
#include "trace/binary_format.h"

namespace cw {

namespace {

// Records reach user space within a poll interval of being written; holding events this
// long lets the ones from other CPUs and late stacks sort in before they are written.
constexpr uint64_t kHoldNs = 200'000'000;
constexpr uint64_t kLostCheckNs = 250'000'000;
constexpr uint64_t kReleaseEveryNs = 100'000'000;
// With calls taken at the scheduler, the pass over the tasks writes a held wait (--min-wait)
// that has lasted, stamped when it began, and the end of a call left open. Each pass visits
// every task on the machine: at one every 20 ms it was a quarter of the recorder's own time
// under pgbench -S, so it runs as seldom as sorting allows, every (kHoldNs - min_wait) / 4
// within these bounds. What it writes is then at most min_wait + a pass + a poll (no longer
// than a pass) late: within kHoldNs.
constexpr uint64_t kTaskPassMinNs = 20'000'000;
constexpr uint64_t kTaskPassMaxNs = 50'000'000;
static_assert(kMaxMinWaitNs + 2 * kTaskPassMinNs < kHoldNs);

uint64_t task_pass_every_ns(uint64_t min_wait_ns) {
  return std::clamp<uint64_t>((kHoldNs - std::min(min_wait_ns, kHoldNs)) / 4, kTaskPassMinNs,
                              kTaskPassMaxNs);
}
// Perf maps are read about once a second: often enough to read a short-lived JIT's map
// while it runs (its owner is checked against the process's), rarely enough to cost nothing.
constexpr uint64_t kPerfMapEveryNs = 1'000'000'000;
constexpr int kRecorderNice = -10;
// Frames kept of a stack unwound with CFI (a frame-pointer walk keeps CW_MAX_STACK).
constexpr size_t kMaxUnwoundFrames = 128;

uint64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

std::vector<std::pair<uint32_t, uint32_t>> syscall_classes() {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& s : kernel::recorded_syscalls()) out.emplace_back(s.nr, s.sys_class);
  return out;
}

bool recorded_process(uint32_t pid, const std::vector<uint32_t>& pids);

}  // namespace

struct MapsCaptureHolder {
  explicit MapsCaptureHolder(MapsCaptureOptions options) : capture(std::move(options)) {}
  MapsCapture capture;
  std::vector<CapturedMap> pending;
};

// The perf maps of the recorded processes: of those the trace knows (running at the start,
// or started since), with --pid those descended from the pids.
struct PerfMapsHolder {
  explicit PerfMapsHolder(std::function<bool(Pid)> recorded)
      : capture(PerfMapCaptureOptions{}, std::move(recorded)) {}
  PerfMapCapture capture;
  std::unordered_set<Pid> known;
  size_t processes_seen = 0;  // of Trace::processes, put in `known`
  std::unordered_map<Pid, bool> recorded;
  uint64_t last_poll = 0;
  std::vector<CapturedJitSymbol> pending;

  // Puts what was read into `trace` and says what was refused.
  void take(Trace& trace) {
    add_jit_symbols(trace, pending);
    pending.clear();
    for (const std::string& note : capture.take_notes())
      std::cerr << "causeway: note: " << note << "\n";
  }
};

Session::Session(SessionOptions options) : options_(std::move(options)) {
  // The reader must keep up with the kernel or records are lost; a busy traced workload
  // would otherwise starve it (worst when the recorder is alone in its own session's
  // scheduling group). Best effort: without the privilege it keeps its priority.
  setpriority(PRIO_PROCESS, 0, kRecorderNice);
  kernel::ProbeOptions probe_options;
  probe_options.pids = options_.pids;
  probe_options.stacks = options_.stacks;
  probe_options.ustack_bytes = options_.ustack_bytes;
  probe_options.sample_hz = options_.sample_hz;
  probe_options.full = options_.full;
  probe_options.calls_at_switch = options_.calls_at_switch;
  if (options_.min_wait_ns > kMaxMinWaitNs)
    throw kernel::ProbeError("a shortest wait written of " +
                             std::to_string(options_.min_wait_ns / 1'000'000) +
                             " ms is more than the recorder can sort in (" +
                             std::to_string(kMaxMinWaitNs / 1'000'000) + " ms)");
  probe_options.min_wait_ns = options_.min_wait_ns;
  probe_options.pipe_bytes = options_.pipe_bytes;
  probe_options.full_waits_per_s = options_.full_waits_per_s;
  probe_options.full_waits_burst = options_.full_waits_burst;
  probe_options.ring_buffer_bytes = options_.buffer_bytes;
  probe_options.exclude_pid = static_cast<uint32_t>(getpid());
  probe_options.syscall_classes = syscall_classes();

  decoder_ = std::make_unique<RecordDecoder>(
      trace_,
      SyscallNaming{[](uint32_t nr) { return kernel::syscall_name(nr); },
                    [](uint32_t nr, uint32_t op) { return kernel::syscall_op_name(nr, op); },
                    [](uint32_t vec) { return kernel::softirq_name(vec); }});
  decoder_->set_waits_held(options_.min_wait_ns != 0);
  if (options_.ustack_bytes > 0 && options_.stacks != kernel::StackMode::None) {
    unwinder_ = std::make_unique<DwarfUnwinder>();
    decoder_->set_unwind([u = unwinder_.get()](Pid pid, Tid tid, const uint64_t* regs,
                                               std::span<const uint8_t> stack) {
      uint64_t r[kUnwindRegs];
      std::copy(regs, regs + kUnwindRegs, r);
      return u->unwind(pid, tid, r, stack, kMaxUnwoundFrames);
    });
  }
  // Map capture starts first, so every mapping an event's stack may need is recorded;
  // the probes attach before /proc is read, so a task created in between is in both.
  MapsCaptureOptions map_options;
  map_options.pids.assign(options_.pids.begin(), options_.pids.end());
  maps_ = std::make_unique<MapsCaptureHolder>(std::move(map_options));
  add_captured_maps(maps_->capture.snapshot());
  probes_ = std::make_unique<kernel::Probes>(probe_options);
  if (options_.stacks != kernel::StackMode::None) {
    // Kernel stacks where calls blocked are named now: kallsyms is this machine's. Read
    // once the probes are loaded, so that their own frames (the innermost, bpf_prog_…)
    // are known, and dropped.
    kernel_symbols_ = std::make_unique<KernelSymbols>();
    if (kernel_symbols_->restricted())
      std::cerr << "causeway: note: /proc/kallsyms hides kernel addresses (kptr_restrict); "
                   "kernel stack frames keep their addresses only\n";
    decoder_->set_kernel_symbols(
        [symbols = kernel_symbols_.get()](uint64_t addr) { return symbols->name(addr); },
        [symbols = kernel_symbols_.get()](uint64_t addr) { return symbols->is_probe(addr); });
  }
  first_ts_ = now_ns();
  for (const ProcProcess& p : snapshot_processes()) {
    decoder_->add_process(p.pid, p.ppid, p.comm, p.exe);
    for (const ProcThread& t : p.threads) decoder_->add_thread(t.tid, t.pid, t.comm, t.kernel);
  }

  perf_maps_ = std::make_unique<PerfMapsHolder>([this](Pid pid) {
    PerfMapsHolder& h = *perf_maps_;
    for (; h.processes_seen < trace_.processes.size(); ++h.processes_seen)
      h.known.insert(trace_.processes[h.processes_seen].pid);
    if (!h.known.count(pid)) return false;
    auto [it, added] = h.recorded.try_emplace(pid, true);
    if (added && !options_.pids.empty()) it->second = recorded_process(pid, options_.pids);
    return it->second;
  });

  if (options_.ring)
    ring_ = std::make_unique<RingWriter>(*options_.ring);
  else
    file_ = std::make_unique<TraceWriter>(options_.output, Schema::builtin(), options_.writer);
  lost_seen_ = probes_->lost_per_cpu();
  write_released();
}

Session::~Session() {
  if (!finished_) {
    try {
      finish();
    } catch (...) {
      // A destructor must not throw; finish() is called explicitly where errors matter.
    }
  }
}

void Session::add_pid(uint32_t pid) {
  probes_->add_pid(pid);
}

void Session::step(int timeout_ms) {
  const uint64_t pass_every = task_pass_every_ns(options_.min_wait_ns);
  if (options_.calls_at_switch)
    timeout_ms = std::min<int>(timeout_ms, static_cast<int>(pass_every / 1'000'000));
  probes_->poll(timeout_ms, [&](const void* r, size_t n) { decoder_->decode(r, n); });
  for (auto& source : sources_) source(*decoder_);
  uint64_t now = now_ns();
  if (options_.calls_at_switch && now - last_task_pass_ >= pass_every) {
    probes_->pass_over_tasks();
    last_task_pass_ = now;
  }
  note_maps_lost(maps_->capture.poll(maps_->pending));
  if (!maps_->pending.empty()) {
    add_captured_maps(maps_->pending);
    maps_->pending.clear();
  }
  if (now - perf_maps_->last_poll >= kPerfMapEveryNs) poll_perf_maps(now);
  if (now - last_lost_check_ >= kLostCheckNs) {
    note_lost();
    last_lost_check_ = now;
  }
  // Releasing sorts and re-indexes what is held: do it a few times a second, not after
  // every wake-up of a busy ring buffer.
  if (now - last_release_ >= kReleaseEveryNs) {
    // Up to what the kernel has delivered, not up to now: when reading falls behind, a
    // marker (stamped when sent) must wait for the older records still queued, or a ring
    // would write it before them and drop it first.
    uint64_t upto = std::min(now, decoder_->newest_ts());
    decoder_->release(upto > kHoldNs ? upto - kHoldNs : 0);
    write_released();
    last_release_ = now;
  }
}

void Session::add_captured_maps(const std::vector<CapturedMap>& maps) {
  add_maps(trace_, maps);
  if (unwinder_)
    for (const CapturedMap& m : maps) unwinder_->add_map(m.pid, m.start, m.end, m.pgoff, m.path);
}

void Session::poll_perf_maps(uint64_t now) {
  perf_maps_->last_poll = now;
  perf_maps_->capture.poll(now, perf_maps_->pending);
  perf_maps_->take(trace_);
}

void Session::read_perf_map(uint32_t pid) {
  perf_maps_->capture.read(pid, now_ns(), perf_maps_->pending);
  perf_maps_->take(trace_);
}

void Session::set_hot_programs(bool scheduler, bool sockets) {
  probes_->set_hot_programs(scheduler, sockets);
}

void Session::mark(uint64_t ts, uint32_t pid, uint32_t tid, std::string_view text) {
  decoder_->add_marker(ts, tid, pid, text);
}

void Session::note_maps_lost(uint64_t n) {
  maps_lost_ += n;
  decoder_->add_loss(LossKind::Maps, n);
}

void Session::note_lost() {
  std::vector<uint64_t> now = probes_->lost_per_cpu();
  if (lost_seen_.size() < now.size()) lost_seen_.resize(now.size(), 0);
  for (size_t cpu = 0; cpu < now.size(); ++cpu)
    if (now[cpu] > lost_seen_[cpu]) {
      trace_.lost.push_back(
          {static_cast<uint16_t>(cpu), now[cpu] - lost_seen_[cpu], decoder_->newest_ts()});
      lost_seen_[cpu] = now[cpu];
    }
}

void Session::write_released() {
  if (ring_) {
    // The ring rotates between appends, judging by the size of the last one: hand it
    // slices, so that one busy interval cannot overshoot a file.
    constexpr size_t kSlice = 16384;
    std::vector<Event> all = std::move(trace_.events).take();
    size_t at = 0;
    do {
      size_t n = std::min(kSlice, all.size() - at);
      trace_.events.assign(all.begin() + static_cast<ptrdiff_t>(at),
                           all.begin() + static_cast<ptrdiff_t>(at + n));
      ring_->append(trace_, 0);
      at += n;
    } while (at < all.size());
    trace_.events = std::move(all);
  } else {
    file_->append(trace_, 0);
  }
  events_written_ += trace_.events.size();
  // Events are never kept once written; the tables (threads, strings, stacks) are.
  trace_.events.clear();
  trace_.values.clear();
}

namespace {

// Whether process `pid` is one of `pids` or descends from one (children join a filtered
// recording, kernel/README.md).
bool recorded_process(uint32_t pid, const std::vector<uint32_t>& pids) {
  if (pids.empty()) return true;
  for (int depth = 0; pid > 1 && depth < 64; ++depth) {
    if (std::find(pids.begin(), pids.end(), pid) != pids.end()) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
    size_t close = line.rfind(')');
    if (close == std::string::npos) return false;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    uint32_t ppid = 0;
    if (!(rest >> state >> ppid)) return false;
    pid = ppid;
  }
  return false;
}

}  // namespace

void Session::note_end_state() {
  if (end_state_noted_) return;
  end_state_noted_ = true;
  const uint64_t now = now_ns();
  auto keep = [&](uint32_t pid) { return recorded_process(pid, options_.pids); };
  std::ifstream in("/proc/locks");
  std::stringstream text;
  text << in.rdbuf();
  for (const LockWait& w : find_lock_waits(parse_proc_locks(text.str())))
    if (keep(w.waiter_pid)) decoder_->add_lock_wait(now, w);
  for (const LockWait& w : find_owner_waits(options_.holders, kernel::syscall_name, keep))
    decoder_->add_lock_wait(now, w);
  for (const LockWait& w : find_peer_waits(options_.holders, kernel::syscall_name, keep))
    decoder_->add_lock_wait(now, w);
}

void Session::finish() {
  if (finished_) return;
  finished_ = true;
  // Detach first: on a busy machine the kernel would otherwise refill the buffer as fast
  // as it is read, and what is left unread when the probes go would be lost uncounted.
  probes_->pass_over_tasks(true);  // a hang's waits, still held; the calls left open
  probes_->detach();
  while (probes_->drain([&](const void* r, size_t n) { decoder_->decode(r, n); }) > 0) {
  }
  note_end_state();
  for (auto& source : sources_) source(*decoder_);
  for (auto& last : finals_) last(*decoder_);
  note_maps_lost(maps_->capture.poll(maps_->pending));
  add_captured_maps(maps_->pending);
  maps_->pending.clear();
  poll_perf_maps(now_ns());
  for (const std::string& note : perf_maps_->capture.bad_line_notes())
    std::cerr << "causeway: note: " << note << "\n";
  note_lost();
  decoder_->release_all();
  write_released();
  if (ring_)
    ring_->close();
  else
    file_->close();
}

void Session::abandon() {
  if (!finished_) probes_->detach();  // finish() detaches first, before it writes
  finished_ = true;
  if (file_) file_->close();  // a spent writer only closes the file, with no end chunk
}

std::vector<std::string> Session::missing_parts() const {
  std::vector<std::string> notes;
  auto note = [&](const std::string& what, const std::string& problem,
                  const std::string& consequence) {
    if (!problem.empty()) notes.push_back(what + ": " + problem + "; " + consequence);
  };
  const kernel::Probes& probes = *probes_;
  note("timer wake-ups carry no cause", probes.timer_owner_problem(),
       "an interrupt's wake-up of a timer's waiter is not traced to the thread that armed the "
       "timer");
  note("no bytes moved on sockets", probes.socket_transfer_problem(),
       "with --calls scheduler a request read without a wait has no message edge from its "
       "sender");
  note("no bytes moved on pipes", probes.pipe_transfer_problem(),
       "with --calls scheduler a write to a pipe whose reader was not waiting has no message "
       "edge to its read");
  note("no file lock results", probes.file_lock_problem(),
       "with --calls scheduler a lock polled until its holder lets go has no edge from the "
       "release");
  note("no children reaped", probes.reap_problem(),
       "with --calls scheduler a parent that polls for its children has no edge from the "
       "child it reaped");
  return notes;
}

SessionStatus Session::status() const {
  SessionStatus s;
  s.records = decoder_->stats().records;
  s.events = events_written_;
  s.first_ts = first_ts_;
  s.newest_ts = decoder_->newest_ts();
  s.lost_per_cpu = lost_seen_;
  for (uint64_t n : lost_seen_) s.lost_total += n;
  s.maps_lost = maps_lost_;
  s.malformed = decoder_->stats().malformed;
  s.switches_unreported = decoder_->stats().switches_unreported;
  s.stacks = decoder_->stats().stacks_attached;
  s.stacks_lost = decoder_->stats().stacks_late + decoder_->stats().user_stacks_unmatched +
                  decoder_->stats().kernel_stacks_unmatched;
  s.samples = decoder_->stats().samples;
  s.sampling_problem = probes_->sampling_problem();
  if (unwinder_) {
    s.unwound_stacks = unwinder_->stats().stacks;
    s.unwound_frames = unwinder_->stats().frames;
    s.unwind_ns = unwinder_->stats().ns;
  }
  s.jit_symbols = perf_maps_->capture.symbols();
  s.perf_maps = perf_maps_->capture.files_read();
  if (ring_) s.ring = ring_->stats();
  return s;
}

}  // namespace cw
