#include "instrument/pc_sampler.h"

#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cw::instrument {
namespace {

constexpr uint64_t kUserRegs =
    (1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP);
constexpr uint64_t kKernelSpace = 0xffff800000000000ull;

// The perf event and its ring, closed and unmapped together.
struct Event {
  int fd = -1;
  void* base = nullptr;
  size_t mapped = 0, data_size = 0;
  ~Event() {
    if (base) munmap(base, mapped);
    if (fd >= 0) close(fd);
  }
  const uint8_t* data() const { return static_cast<const uint8_t*>(base) + (mapped - data_size); }
  perf_event_mmap_page* meta() const { return static_cast<perf_event_mmap_page*>(base); }
};

// Reads `size` bytes at ring position `at`, joining the wrap at the ring's end.
void copy_ring(const Event& e, uint64_t at, void* out, size_t size) {
  auto* dest = static_cast<uint8_t*>(out);
  for (size_t done = 0; done < size;) {
    const size_t offset = (at + done) % e.data_size;
    const size_t n = std::min(size - done, e.data_size - offset);
    std::memcpy(dest + done, e.data() + offset, n);
    done += n;
  }
}

// PERF_RECORD_SAMPLE with IP | REGS_USER | STACK_USER: u64 ip; u64 abi; u64 regs[3]
// (bp, sp, ip: bit order); u64 size; u8 data[size]; u64 dyn_size (when size != 0).
void parse_sample(const std::vector<uint8_t>& record, SampleRun& run) {
  size_t at = sizeof(perf_event_header);
  auto u64 = [&](uint64_t& v) {
    if (at + 8 > record.size()) return false;
    std::memcpy(&v, record.data() + at, 8);
    at += 8;
    return true;
  };
  uint64_t ip = 0, abi = 0;
  if (!u64(ip) || !u64(abi)) return;
  if (abi == PERF_SAMPLE_REGS_ABI_NONE) {
    ++run.without_user;
    return;
  }
  UserSample s;
  uint64_t stack_size = 0;
  if (!u64(s.bp) || !u64(s.sp) || !u64(s.ip) || !u64(stack_size)) return;
  s.in_kernel = ip >= kKernelSpace;
  if (stack_size > 0 && at + stack_size + 8 <= record.size()) {
    uint64_t dyn_size = 0;
    std::memcpy(&dyn_size, record.data() + at + stack_size, 8);
    const size_t words = std::min(stack_size, dyn_size) / 8;
    s.stack.resize(words);
    std::memcpy(s.stack.data(), record.data() + at, words * 8);
  }
  run.samples.push_back(std::move(s));
}

void drain(const Event& e, SampleRun& run) {
  perf_event_mmap_page* meta = e.meta();
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  std::vector<uint8_t> record;
  while (head - tail >= sizeof(perf_event_header)) {
    perf_event_header header;
    copy_ring(e, tail, &header, sizeof header);
    if (header.size < sizeof header || header.size > head - tail) break;  // damaged: drop
    record.resize(header.size);
    copy_ring(e, tail, record.data(), header.size);
    if (header.type == PERF_RECORD_SAMPLE) {
      parse_sample(record, run);
    } else if (header.type == PERF_RECORD_LOST && header.size >= sizeof header + 16) {
      uint64_t lost = 0;
      std::memcpy(&lost, record.data() + sizeof header + 8, 8);
      run.lost += lost;
    }
    tail += header.size;
  }
  __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
}

SampleRun failed(SampleFailure failure, std::string error) {
  SampleRun run;
  run.failure = failure;
  run.error = std::move(error);
  return run;
}

}  // namespace

SampleRun sample_user_pcs(pid_t tid, std::chrono::milliseconds duration,
                          const SamplerOptions& options) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (options.ring_pages == 0 || (options.ring_pages & (options.ring_pages - 1)) != 0)
    return failed(SampleFailure::Environment,
                  "ring_pages must be a power of two, got " + std::to_string(options.ring_pages));
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = options.frequency;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  attr.sample_regs_user = kUserRegs;
  attr.sample_stack_user = options.stack_bytes & ~7u;
  attr.disabled = 1;
  attr.exclude_hv = 1;  // kernel-mode samples stay: a yielding thread lives there
  Event e;
  e.fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (e.fd < 0) {
    const int err = errno;
    std::string what =
        "perf_event_open(cpu-clock, thread " + std::to_string(tid) + "): " + strerror(err);
    if (err == ESRCH) return failed(SampleFailure::NoSuchThread, what);
    if (err == EACCES || err == EPERM)
      what +=
          "; sampling another process's thread needs root or CAP_PERFMON "
          "(and kernel.perf_event_paranoid <= 1)";
    return failed(SampleFailure::Environment, what);
  }
  e.data_size = options.ring_pages * page;
  e.mapped = e.data_size + page;
  e.base = mmap(nullptr, e.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, e.fd, 0);
  if (e.base == MAP_FAILED) {
    e.base = nullptr;
    return failed(
        SampleFailure::Environment,
        "mmap of the perf ring (" + std::to_string(e.mapped / 1024) + " KiB): " + strerror(errno));
  }

  SampleRun run;
  ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0);
  const auto until = std::chrono::steady_clock::now() + duration;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
    pollfd p{e.fd, POLLIN, 0};
    // Woken when the ring is partly full or every 20 ms, whichever first.
    poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 20)));
    if (p.revents & POLLHUP) break;  // the thread exited
    drain(e, run);
  }
  ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0);
  drain(e, run);
  return run;
}

}  // namespace cw::instrument
