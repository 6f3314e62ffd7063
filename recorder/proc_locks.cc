#include "recorder/proc_locks.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "recorder/blocked_call.h"

namespace cw {

std::vector<ProcLock> parse_proc_locks(std::string_view text) {
  // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF", "1: -> FLOCK  ADVISORY  WRITE ..."
  std::vector<ProcLock> out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, type, advisory, mode, pid, dev;
    if (!(f >> id) || id.empty() || id.back() != ':') continue;
    ProcLock l;
    l.id = static_cast<uint32_t>(std::strtoul(id.c_str(), nullptr, 10));
    if (!(f >> type)) continue;
    if (type == "->") {
      l.blocked = true;
      if (!(f >> type)) continue;
    }
    if (!(f >> advisory >> mode >> pid >> dev)) continue;
    l.type = type;
    l.mode = mode;
    l.pid = std::strtoll(pid.c_str(), nullptr, 10);
    // MAJOR:MINOR:INODE, the device numbers in hex.
    unsigned major = 0, minor = 0;
    unsigned long long inode = 0;
    if (std::sscanf(dev.c_str(), "%x:%x:%llu", &major, &minor, &inode) != 3) continue;
    l.dev_major = major, l.dev_minor = minor, l.inode = inode;
    out.push_back(std::move(l));
  }
  return out;
}

std::vector<LockWait> find_lock_waits(const std::vector<ProcLock>& locks,
                                      const std::string& proc_root) {
  std::vector<LockWait> out;
  for (size_t i = 0; i < locks.size(); ++i) {
    const ProcLock& w = locks[i];
    if (!w.blocked || w.pid <= 0) continue;
    // The blocker is the lock of the same id listed before its waiters.
    const ProcLock* holder = nullptr;
    for (size_t j = i; j-- > 0;)
      if (locks[j].id == w.id && !locks[j].blocked) {
        holder = &locks[j];
        break;
      }
    if (!holder) continue;
    std::string base = proc_root + "/" + std::to_string(w.pid);
    for (uint32_t tid : numeric_entries(base + "/task")) {
      // The waiting thread's call has an fd on the locked file as its first argument
      // (flock, fcntl).
      auto call = blocked_call(base + "/task/" + std::to_string(tid));
      if (!call || call->args[0] >= (1u << 24)) continue;
      const uint64_t fd = call->args[0];
      struct stat st {};
      if (stat((base + "/fd/" + std::to_string(fd)).c_str(), &st) != 0) continue;
      if (st.st_ino != w.inode || major(st.st_dev) != w.dev_major ||
          minor(st.st_dev) != w.dev_minor)
        continue;
      LockWait found;
      found.waiter_pid = static_cast<uint32_t>(w.pid);
      found.waiter_tid = tid;
      found.holder_pid = holder->pid;
      found.object = w.inode;
      found.lock = holder->type + " " + holder->mode;
      out.push_back(std::move(found));
    }
  }
  return out;
}

}  // namespace cw
