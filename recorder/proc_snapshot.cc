#include "recorder/proc_snapshot.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "recorder/blocked_call.h"

namespace cw {

namespace {

constexpr unsigned long kPfKthread = 0x00200000;  // include/linux/sched.h

// /proc/PID/stat: "pid (comm) state ppid ... flags ...". The comm may hold spaces and
// parentheses, so fields are counted from the last ')'.
bool read_stat(const std::string& path, std::string& comm, uint32_t& ppid, unsigned long& flags) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return false;
  size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  long pgrp, session, tty, tpgid;
  rest >> state >> ppid >> pgrp >> session >> tty >> tpgid >> flags;
  return static_cast<bool>(rest);
}

}  // namespace

std::vector<ProcProcess> snapshot_processes(const std::string& proc_root) {
  std::vector<ProcProcess> out;
  for (uint32_t pid : numeric_entries(proc_root)) {
    std::string base = proc_root + "/" + std::to_string(pid);
    ProcProcess p;
    p.pid = pid;
    unsigned long flags = 0;
    if (!read_stat(base + "/stat", p.comm, p.ppid, flags)) continue;
    char exe[4096];
    ssize_t n = readlink((base + "/exe").c_str(), exe, sizeof exe - 1);
    if (n > 0) p.exe.assign(exe, static_cast<size_t>(n));
    for (uint32_t tid : numeric_entries(base + "/task")) {
      ProcThread t;
      t.tid = tid;
      t.pid = pid;
      uint32_t ignored_ppid = 0;
      unsigned long tflags = 0;
      if (!read_stat(base + "/task/" + std::to_string(tid) + "/stat", t.comm, ignored_ppid, tflags))
        continue;
      t.kernel = (tflags & kPfKthread) != 0;
      p.threads.push_back(std::move(t));
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace cw
