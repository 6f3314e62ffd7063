#include "recorder/mutex_owner.h"

#include <sys/stat.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstring>

#include "recorder/blocked_call.h"

namespace cw {

bool read_process_memory(uint32_t pid, uint64_t addr, void* out, size_t n) {
  iovec local{out, n};
  iovec remote{reinterpret_cast<void*>(addr), n};
  return process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0) ==
         static_cast<ssize_t>(n);
}

std::vector<LockWait> find_owner_waits(
    const std::vector<HolderField>& fields,
    const std::function<std::string_view(uint32_t)>& syscall_name,
    const std::function<bool(uint32_t pid)>& keep, const std::string& proc_root,
    const MemoryReader& read) {
  std::vector<LockWait> out;
  if (fields.empty()) return out;
  for (uint32_t pid : numeric_entries(proc_root)) {
    if (!keep(pid)) continue;
    const std::string base = proc_root + "/" + std::to_string(pid) + "/task/";
    for (uint32_t tid : numeric_entries(base)) {
      auto call = blocked_call(base + std::to_string(tid));
      if (!call) continue;
      std::string_view name = syscall_name(call->nr);
      for (const HolderField& f : fields) {
        if (f.peer || std::find(f.syscalls.begin(), f.syscalls.end(), name) == f.syscalls.end())
          continue;
        const uint64_t at = call->args[0] + static_cast<uint64_t>(f.offset);
        uint64_t owner = 0;
        uint32_t owner32 = 0;
        if (f.size == 8 ? !read(pid, at, &owner, 8) : !read(pid, at, &owner32, 4)) continue;
        if (f.size != 8) owner = owner32;
        struct stat st {};
        if (owner == 0 || owner == tid || owner > UINT32_MAX ||
            stat((base + std::to_string(owner)).c_str(), &st) != 0)
          continue;
        LockWait w;
        w.waiter_pid = pid;
        w.waiter_tid = tid;
        w.holder_pid = pid;
        w.holder_tid = static_cast<uint32_t>(owner);
        w.object = call->args[0];
        w.lock = "owner (" + f.rule + ")";
        out.push_back(std::move(w));
        break;
      }
    }
  }
  return out;
}

}  // namespace cw
