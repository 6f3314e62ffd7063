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
