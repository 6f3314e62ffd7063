#include "kernel/watchpoints.h"

#include <dirent.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cw::kernel {

std::string watch_address_problem(uint64_t address, uint8_t size) {
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return "a watchpoint covers 1, 2, 4 or 8 bytes, not " + std::to_string(size);
  if (address == 0) return "address 0 cannot be watched";
  if (address % size != 0)
    return "the CPU watches " + std::to_string(size) + " bytes only at an address aligned to " +
           std::to_string(size);
  if (address >> 47 != 0) return "the address is not in user space";
  return "";
}

int open_watchpoint_event(uint32_t tid, uint64_t address, uint8_t size, bool writes_only) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.size = sizeof(attr);
  attr.bp_type = writes_only ? HW_BREAKPOINT_W : HW_BREAKPOINT_RW;
  attr.bp_addr = address;
  attr.bp_len = size;  // HW_BREAKPOINT_LEN_1 .. _8 are the byte counts
  attr.sample_period = 1;
  attr.inherit = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd =
      syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(tid), -1, -1, PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

namespace {
// Written through a volatile pointer so that every store happens.
alignas(8) uint64_t g_self_test_target = 0;
}  // namespace

WatchSelfTest test_watchpoints(uint32_t writes) {
  WatchSelfTest result;
  auto address = reinterpret_cast<uint64_t>(&g_self_test_target);
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.size = sizeof(attr);
  attr.bp_type = HW_BREAKPOINT_W;
  attr.bp_addr = address;
  attr.bp_len = HW_BREAKPOINT_LEN_8;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  // Counting only (no sampling): the test needs the count, not a record per hit.
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    result.open_error = errno;
    return result;
  }
  volatile uint64_t* target = &g_self_test_target;
  for (uint32_t i = 0; i < writes; ++i) *target = i + 1;
  result.writes = writes;
  uint64_t count = 0;
  if (read(static_cast<int>(fd), &count, sizeof(count)) == sizeof(count)) result.hits = count;
  close(static_cast<int>(fd));
  return result;
}

WatchDecision decide_watchpoints(bool explicit_watch, const WatchSelfTest& test) {
  WatchDecision d;
  std::string problem;
  if (test.open_error != 0)
    problem = "this machine cannot open a hardware watchpoint (perf_event_open: " +
              std::string(std::strerror(test.open_error)) + ")";
  else if (test.writes > 0 && test.hits == 0)
    problem = "this machine's hardware watchpoints do not fire (a self-test counted 0 of " +
              std::to_string(test.writes) + " writes)";
  if (problem.empty()) return d;
  d.use_watchpoints = false;
  d.refuse = explicit_watch;
  d.message = explicit_watch
                  ? "--flags watch: " + problem + "; use --flags auto or probe"
                  : "flags: " + problem + "; data flags are traced with instruction probes instead";
  return d;
}

std::vector<uint32_t> threads_of(uint32_t pid) {
  std::vector<uint32_t> tids;
  std::string path = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(path.c_str());
  if (!dir) return tids;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    unsigned long tid = std::strtoul(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0') tids.push_back(static_cast<uint32_t>(tid));
  }
  closedir(dir);
  return tids;
}

}  // namespace cw::kernel
