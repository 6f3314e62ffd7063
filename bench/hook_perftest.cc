// cw-bench-hooks: what one call costs under each kind of function instrumentation, side
// by side in one run, against DESIGN.md §10's "an inline hook <= 20 ns per call":
//   plain      a small function (four identical copies, written in assembly so the code
//              measured is the same byte for byte);
//   hooked     the same function with an inline hook (instrument/hook), entry and exit
//              recorded into the event log, which a reader thread drains as the recorder
//              does (so chunks are handed back and filled again); and the same into a
//              log no event has touched yet (a recording's first pass through its log);
//   uprobe     the same function with a uprobe, uretprobe: with a return probe (the uprobe
//              PMU of perf_event_open, counting: no BPF program, the bare trap);
//   write      a store to a variable, and to one watched by a hardware watchpoint
//              (PERF_TYPE_BREAKPOINT, HW_BREAKPOINT_W, this thread, counting).
// Each round times every measure once (interleaved, so drift hits all alike); the figure
// is the median over rounds of the round's ns per call. Each probe's own count is checked
// against the calls made, so a figure never comes from an instrument that did not fire.
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/temp_dir.h"
#include "bench/measure.h"
#include "instrument/hook/event_log.h"
#include "instrument/hook/event_sink.h"
#include "instrument/hook/hook_log_reader.h"
#include "instrument/hook/inline_hook.h"
#include "instrument/hook/log_format.h"

// The function measured, four times: x * 3 + 1 in 6 bytes (lea, ret).
#define CW_BENCH_FUNCTION(name)    \
  ".globl " #name                  \
  "\n"                             \
  ".type " #name                   \
  ", @function\n"                  \
  ".p2align 4\n" #name             \
  ":\n"                            \
  "  lea 0x1(%rdi,%rdi,2), %rax\n" \
  "  ret\n"                        \
  ".size " #name ", .-" #name "\n"
asm(".text\n" CW_BENCH_FUNCTION(cw_bench_plain) CW_BENCH_FUNCTION(cw_bench_hooked)
        CW_BENCH_FUNCTION(cw_bench_uprobed) CW_BENCH_FUNCTION(cw_bench_uretprobed));
extern "C" uint64_t cw_bench_plain(uint64_t);
extern "C" uint64_t cw_bench_hooked(uint64_t);
extern "C" uint64_t cw_bench_uprobed(uint64_t);
extern "C" uint64_t cw_bench_uretprobed(uint64_t);

namespace {

using cw::bench::median;

volatile uint64_t sink;
volatile uint64_t plain_variable;
alignas(8) volatile uint64_t watched_variable;

[[noreturn]] void die(const std::string& message) {
  fprintf(stderr, "cw-bench-hooks: %s\n", message.c_str());
  exit(1);
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// ns per call of `calls` calls of `f`, in this thread's CPU time (kernel time included:
// traps and page faults are part of the cost; time spent waiting for a CPU on a shared
// machine is not). Not inlined, and each measure passes a lambda of its own: the loop then
// keeps its counter in a register and calls the function directly, whatever main's
// register pressure (a counter spilled to the stack added ~2 ns to every row).
template <typename F>
[[gnu::noinline]] double time_calls(F f, uint64_t calls) {
  const double start = thread_cpu_ns();
  uint64_t sum = 0;
  for (uint64_t i = 0; i < calls; ++i) sum += f(i);
  const double stop = thread_cpu_ns();
  sink = sum;
  return (stop - start) / static_cast<double>(calls);
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) die("cannot read " + path);
  return line;
}

long perf_event_open(perf_event_attr* attr) {
  return syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1, -1, 0);
}

uint64_t read_count(int fd) {
  uint64_t count = 0;
  if (read(fd, &count, sizeof count) != sizeof count) die("cannot read a perf counter");
  return count;
}

// The file and offset of code at `address`, from /proc/self/maps.
std::pair<std::string, uint64_t> file_offset(const void* address) {
  std::ifstream maps("/proc/self/maps");
  const auto a = reinterpret_cast<uint64_t>(address);
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode >> path;
    const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const uint64_t end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    if (a >= start && a < end && !path.empty())
      return {path, a - start + std::stoull(offset, nullptr, 16)};
  }
  die("no file mapping holds the benchmark's code");
}

// A uprobe (or uretprobe) on `function` through the uprobe PMU, counting hits.
int open_uprobe(const void* function, bool return_probe) {
  // config1 points at the path, which must outlive the event's creation.
  static const std::string path = file_offset(function).first;
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type =
      static_cast<uint32_t>(std::stoul(read_line("/sys/bus/event_source/devices/uprobe/type")));
  if (return_probe) {
    // "config:N": the bit that makes it a return probe.
    const std::string format = read_line("/sys/bus/event_source/devices/uprobe/format/retprobe");
    attr.config = uint64_t{1} << std::stoul(format.substr(format.find(':') + 1));
  }
  attr.config1 = reinterpret_cast<uint64_t>(path.c_str());
  attr.config2 = file_offset(function).second;
  const long fd = perf_event_open(&attr);
  if (fd < 0)
    die(std::string("perf_event_open(uprobe") + (return_probe ? ", retprobe" : "") +
        ") failed: " + strerror(errno) + " (root, or perf_event_paranoid <= 1?)");
  return static_cast<int>(fd);
}

int open_watchpoint(const volatile void* variable) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.bp_type = HW_BREAKPOINT_W;
  attr.bp_addr = reinterpret_cast<uint64_t>(variable);
  attr.bp_len = HW_BREAKPOINT_LEN_8;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = perf_event_open(&attr);
  if (fd < 0) die(std::string("perf_event_open(breakpoint) failed: ") + strerror(errno));
  return static_cast<int>(fd);
}

// Appends two events' bytes per call to fresh pages of a shared file mapping, populating
// 64 KiB at a time as the event log's chunks are: what the hook's two events cost in
// memory on a log's first pass.
class FreshPages {
 public:
  FreshPages(const std::string& path, uint64_t bytes) : bytes_(bytes) {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) die("cannot create " + path);
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    unlink(path.c_str());
    if (memory == MAP_FAILED) die("cannot map " + path);
    base_ = static_cast<uint8_t*>(memory);
  }
  ~FreshPages() { munmap(base_, bytes_); }
  uint64_t append(uint64_t value) {
    if (used_ + kBytes > populated_) {
      madvise(base_ + populated_, kChunk, 23 /* MADV_POPULATE_WRITE */);
      populated_ += kChunk;
    }
    auto* words = reinterpret_cast<volatile uint64_t*>(base_ + used_);
    for (size_t i = 0; i < kBytes / 8; ++i) words[i] = value;
    used_ += kBytes;
    return 0;
  }
  static constexpr uint64_t kBytes = 2 * sizeof(cw::hook::log::Event);

 private:
  static constexpr uint64_t kChunk = 64 << 10;
  uint8_t* base_ = nullptr;
  uint64_t bytes_, used_ = 0, populated_ = 0;
};

// The recorder's side, as `causeway record` has it (recorder/record_instrumentation.cc, from
// the session loop, which waits up to 100 ms for kernel events between polls): a thread
// polling a HookLogReader on the directory every `period`, counting the benchmark
// function's events. Polling is what hands full chunks back to the writers.
class Drain {
 public:
  Drain(const std::string& dir, std::chrono::milliseconds period)
      : reader_(dir), thread_([this, period] { run(period); }) {}
  ~Drain() { stop(); }
  // Stops after a last poll: every event published by then is counted.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  uint64_t events() const { return events_; }
  uint64_t lost() const { return reader_.lost(); }  // after stop()

 private:
  void run(std::chrono::milliseconds period) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      lock.unlock();
      poll();
      lock.lock();
      wake_.wait_for(lock, period, [this] { return stop_; });
    }
    lock.unlock();
    poll();
  }
  void poll() {
    reader_.poll([this](const cw::hook::HookEvent& e) { events_ += e.fn_index == 1; });
  }

  cw::hook::HookLogReader reader_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<uint64_t> events_{0};
  std::thread thread_;
};

void make_directory(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    die("cannot create " + path + ": " + strerror(errno));
}

struct Measure {
  const char* name;
  const char* what;
  uint64_t calls_per_round;
  std::vector<double> ns;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Cost per call of an inline hook, a uprobe, a uretprobe and a watchpoint"};
  uint64_t rounds = 21, calls = 200000, slow_calls = 20000, poll_ms = 100;
  std::string log_dir;
  app.add_option("--rounds", rounds, "rounds, each timing every measure once (median taken)");
  app.add_option("--calls", calls, "calls per round of the fast measures");
  app.add_option("--slow-calls", slow_calls, "calls per round of the trapping ones");
  app.add_option("--poll-ms", poll_ms,
                 "how often the reader thread drains the hook logs (the recorder: at most "
                 "100 ms apart)");
  app.add_option("--log-dir", log_dir,
                 "where the hook event logs go (default: a temporary "
                 "directory)");
  bool monotonic = false;
  app.add_flag("--monotonic", monotonic,
               "stamp events with CLOCK_MONOTONIC (the fallback where the TSC is not the "
               "kernel's clock) even where the TSC is usable");
  CLI11_PARSE(app, argc, argv);

  // The recording's log (the preload library's default size), which a reader thread
  // drains: the hooked calls fill chunks it has handed back. And one log per round, big
  // enough for the round's events, whose pages no event has touched yet: what a
  // recording pays until its log has been filled once. The rounds switch between them (a
  // switch abandons the thread's chunk, one slow path per round).
  std::optional<cw::TempDir> temporary;
  if (log_dir.empty()) log_dir = temporary.emplace("cw-bench-hooks").path();
  const std::string recording_dir = log_dir + "/recording", first_pass_dir = log_dir + "/first";
  make_directory(recording_dir);
  make_directory(first_pass_dir);
  char reason[256] = {};
  // As the preload library does: the TSC where it is the kernel's clock, else the fallback.
  if (!monotonic && !cw::hook::tsc_usable(reason, sizeof reason)) {
    monotonic = true;
    printf("hook clock: CLOCK_MONOTONIC through the vDSO (%s)\n", reason);
  } else {
    printf("hook clock: %s\n",
           monotonic ? "CLOCK_MONOTONIC through the vDSO (--monotonic)" : "the TSC");
  }
  cw::hook::use_monotonic_clock(monotonic);
  cw::hook::EventLogOptions options;
  if (!cw::hook::open_event_log(recording_dir.c_str(), options, reason, sizeof reason)) die(reason);
  const cw::hook::ActiveLog recording_log = *cw::hook::active_log();
  cw::hook::EventLogOptions first_pass_options;
  first_pass_options.file_bytes =
      calls * 2 * sizeof(cw::hook::log::Event) + 2 * first_pass_options.chunk_bytes + (1 << 20);
  std::vector<cw::hook::ActiveLog> first_pass_logs;
  for (uint64_t round = 0; round < rounds; ++round) {
    if (!cw::hook::open_event_log(first_pass_dir.c_str(), first_pass_options, reason,
                                  sizeof reason))
      die(reason);
    first_pass_logs.push_back(*cw::hook::active_log());
  }
  std::string refusal;
  auto hooked = cw::hook::install_hook({reinterpret_cast<void*>(cw_bench_hooked), 6, 1}, &refusal);
  if (!hooked) die("cannot hook the benchmark function: " + refusal);
  Drain recording_drain(recording_dir, std::chrono::milliseconds(poll_ms));
  Drain first_pass_drain(first_pass_dir, std::chrono::milliseconds(poll_ms));
  const int uprobe = open_uprobe(reinterpret_cast<void*>(cw_bench_uprobed), false);
  const int uretprobe = open_uprobe(reinterpret_cast<void*>(cw_bench_uretprobed), true);
  const int watchpoint = open_watchpoint(&watched_variable);

  FreshPages pages(log_dir + "/pages.bench", rounds * calls * FreshPages::kBytes + (1 << 20));

  enum {
    kPlain,
    kHooked,
    kFirstPass,
    kUprobe,
    kUretprobe,
    kRdtsc,
    kPages,
    kWrite,
    kWatched,
    kCount
  };
  std::vector<Measure> measures(kCount);
  measures[kPlain] = {"plain call", "`lea rax, [rdi+2*rdi+1]; ret`, not inlined", calls, {}};
  measures[kHooked] = {"**inline hook**",
                       "same code, entry and exit recorded to the event log, which a reader "
                       "thread drains as the recorder does",
                       calls,
                       {}};
  measures[kFirstPass] = {"inline hook, first pass",
                          "the same, into a log no event has touched yet (a new one per round)",
                          calls,
                          {}};
  measures[kUprobe] = {"uprobe", "same code, uprobe PMU, counting", slow_calls, {}};
  measures[kUretprobe] = {
      "uretprobe", "same code, uprobe PMU with the retprobe bit, counting", slow_calls, {}};
  measures[kRdtsc] = {"of the hook: two rdtsc",
                      "two `rdtsc`, a hooked call's two timestamps: with the plain call, the "
                      "floor of a hook that times entry and exit",
                      calls,
                      {}};
  measures[kPages] = {"of the hook: fresh log pages",
                      "32 bytes per call (two events) into new pages of a shared file mapping "
                      "beside the log, populated per 64 KiB as its chunks are",
                      calls,
                      {}};
  measures[kWrite] = {"plain write", "a store to a variable", calls, {}};
  measures[kWatched] = {"watched write",
                        "a store to a variable under a hardware watchpoint (W, 8 bytes)",
                        slow_calls,
                        {}};
  for (uint64_t round = 0; round < rounds; ++round) {
    measures[kPlain].ns.push_back(time_calls([](uint64_t x) { return cw_bench_plain(x); }, calls));
    cw::hook::publish_active_log(recording_log);
    measures[kHooked].ns.push_back(
        time_calls([](uint64_t x) { return cw_bench_hooked(x); }, calls));
    cw::hook::publish_active_log(first_pass_logs[round]);
    measures[kFirstPass].ns.push_back(
        time_calls([](uint64_t x) { return cw_bench_hooked(x); }, calls));
    measures[kUprobe].ns.push_back(
        time_calls([](uint64_t x) { return cw_bench_uprobed(x); }, slow_calls));
    measures[kUretprobe].ns.push_back(
        time_calls([](uint64_t x) { return cw_bench_uretprobed(x); }, slow_calls));
    measures[kRdtsc].ns.push_back(
        time_calls([](uint64_t) { return __rdtsc() + __rdtsc(); }, calls));
    measures[kPages].ns.push_back(time_calls([&](uint64_t i) { return pages.append(i); }, calls));
    measures[kWrite].ns.push_back(time_calls(
        [](uint64_t i) {
          plain_variable = i;
          return uint64_t{0};
        },
        calls));
    measures[kWatched].ns.push_back(time_calls(
        [](uint64_t i) {
          watched_variable = i;
          return uint64_t{0};
        },
        slow_calls));
  }

  // Every instrument fired as often as it should have.
  if (!cw::hook::remove_hook(*hooked, &refusal)) die("cannot remove the hook: " + refusal);
  recording_drain.stop();
  first_pass_drain.stop();
  const uint64_t hook_events = recording_drain.events() + first_pass_drain.events();
  const uint64_t hook_lost = recording_drain.lost() + first_pass_drain.lost();
  const uint64_t uprobe_hits = read_count(uprobe), uretprobe_hits = read_count(uretprobe),
                 watch_hits = read_count(watchpoint);
  const uint64_t slow_total = rounds * slow_calls;
  const bool counts_right = hook_events == 4 * rounds * calls && hook_lost == 0 &&
                            uprobe_hits == slow_total && uretprobe_hits == slow_total &&
                            watch_hits == slow_total;

  const double plain = median(measures[kPlain].ns);
  const double plain_write = median(measures[kWrite].ns);
  printf(
      "| measure | what | CPU ns per call (median of %lu rounds) | minus plain | calls per round "
      "|\n",
      static_cast<unsigned long>(rounds));
  printf("| --- | --- | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < measures.size(); ++i) {
    const Measure& m = measures[i];
    const double ns = median(m.ns);
    char extra[32] = "";
    if (i == kHooked || i == kFirstPass || i == kUprobe || i == kUretprobe)
      snprintf(extra, sizeof extra, "%+.1f", ns - plain);
    if (i == kWatched) snprintf(extra, sizeof extra, "%+.1f", ns - plain_write);
    printf("| %s | %s | %.1f | %s | %lu |\n", m.name, m.what, ns, extra,
           static_cast<unsigned long>(m.calls_per_round));
  }
  const double hook = median(measures[kHooked].ns);
  printf(
      "\nChecks: %lu hook events for %lu hooked calls, %lu lost; uprobe %lu, uretprobe "
      "%lu, watchpoint %lu hits for %lu each.\n",
      static_cast<unsigned long>(hook_events), static_cast<unsigned long>(2 * rounds * calls),
      static_cast<unsigned long>(hook_lost), static_cast<unsigned long>(uprobe_hits),
      static_cast<unsigned long>(uretprobe_hits), static_cast<unsigned long>(watch_hits),
      static_cast<unsigned long>(slow_total));
  if (!counts_right) {
    fprintf(stderr,
            "cw-bench-hooks: an instrument did not fire once per call: the figures "
            "above are not valid\n");
    return 1;
  }
  printf("\n| target | measured | |\n| --- | ---: | --- |\n");
  printf("| inline hook <= 20 ns per call | %.1f ns (%.1f ns over the plain call) | %s |\n", hook,
         hook - plain, hook <= 20 ? "met" : "**missed**");
  return 0;
}
