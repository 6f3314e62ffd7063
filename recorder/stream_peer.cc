#include "recorder/stream_peer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "recorder/blocked_call.h"

namespace cw {
namespace {

constexpr size_t kMaxHolders = 4;

// "pipe:[123]" / "socket:[123]": the kind and the inode; false for anything else.
bool stream_of(const std::string& link, bool& pipe, uint64_t& inode) {
  for (std::string_view prefix : {"pipe:[", "socket:["}) {
    if (!link.starts_with(prefix) || link.back() != ']') continue;
    pipe = prefix == "pipe:[";
    inode = std::strtoull(link.c_str() + prefix.size(), nullptr, 10);
    return inode != 0;
  }
  return false;
}

std::string read_link(const std::string& path) {
  char buf[256];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The access mode an fd was opened with (/proc/PID/fdinfo/FD "flags: OCTAL").
int access_mode(const std::string& fdinfo) {
  std::ifstream in(fdinfo);
  std::string key, value;
  while (in >> key >> value)
    if (key == "flags:")
      return static_cast<int>(std::strtol(value.c_str(), nullptr, 8)) & O_ACCMODE;
  return O_RDWR;  // unknown: either way
}

struct Opener {
  uint32_t pid;
  int mode;
};

// Every process's pipes and sockets: inode -> the processes with it open, and how.
std::map<uint64_t, std::vector<Opener>> open_streams(const std::string& proc_root) {
  std::map<uint64_t, std::vector<Opener>> out;
  for (uint32_t pid : numeric_entries(proc_root)) {
    const std::string base = proc_root + "/" + std::to_string(pid);
    for (uint32_t fd : numeric_entries(base + "/fd")) {
      bool pipe = false;
      uint64_t inode = 0;
      if (!stream_of(read_link(base + "/fd/" + std::to_string(fd)), pipe, inode)) continue;
      int mode = pipe ? access_mode(base + "/fdinfo/" + std::to_string(fd)) : O_RDWR;
      auto& openers = out[inode];
      if (std::none_of(openers.begin(), openers.end(),
                       [&](const Opener& o) { return o.pid == pid && o.mode == mode; }))
        openers.push_back({pid, mode});
    }
  }
  return out;
}

// TCP sockets (/proc/net/tcp and tcp6): inode -> the inode of the socket whose local and
// remote addresses are its own swapped.
std::map<uint64_t, uint64_t> tcp_peers(const std::string& proc_root) {
  std::map<std::pair<std::string, std::string>, uint64_t> by_ends;
  std::vector<std::tuple<std::string, std::string, uint64_t>> sockets;
  for (const char* file : {"/net/tcp", "/net/tcp6"}) {
    std::ifstream in(proc_root + file);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string sl, local, remote, st, queues, timer, retr, uid, timeout, inode;
      if (!(f >> sl >> local >> remote >> st >> queues >> timer >> retr >> uid >> timeout >> inode))
        continue;
      uint64_t ino = std::strtoull(inode.c_str(), nullptr, 10);
      if (ino == 0) continue;
      by_ends[{local, remote}] = ino;
      sockets.emplace_back(local, remote, ino);
    }
  }
  std::map<uint64_t, uint64_t> out;
  for (const auto& [local, remote, ino] : sockets)
    if (auto it = by_ends.find({remote, local}); it != by_ends.end()) out[ino] = it->second;
  return out;
}

}  // namespace

std::vector<LockWait> find_peer_waits(const std::vector<HolderField>& fields,
                                      const std::function<std::string_view(uint32_t)>& syscall_name,
                                      const std::function<bool(uint32_t pid)>& keep,
                                      const std::string& proc_root) {
  struct Waiting {
    uint32_t pid, tid;
    bool pipe;
    uint64_t inode;
    int mode;
    const HolderField* field;
  };
  std::vector<Waiting> waiting;
  if (std::none_of(fields.begin(), fields.end(), [](const HolderField& f) { return f.peer; }))
    return {};
  for (uint32_t pid : numeric_entries(proc_root)) {
    if (!keep(pid)) continue;
    const std::string base = proc_root + "/" + std::to_string(pid);
    for (uint32_t tid : numeric_entries(base + "/task")) {
      auto call = blocked_call(base + "/task/" + std::to_string(tid));
      if (!call || call->args[0] >= (1u << 24)) continue;
      std::string_view name = syscall_name(call->nr);
      auto field = std::find_if(fields.begin(), fields.end(), [&](const HolderField& f) {
        return f.peer && std::find(f.syscalls.begin(), f.syscalls.end(), name) != f.syscalls.end();
      });
      if (field == fields.end()) continue;
      const std::string fd = std::to_string(call->args[0]);
      Waiting w{pid, tid, false, 0, O_RDWR, &*field};
      if (!stream_of(read_link(base + "/fd/" + fd), w.pipe, w.inode)) continue;
      if (w.pipe) w.mode = access_mode(base + "/fdinfo/" + fd);
      waiting.push_back(w);
    }
  }
  if (waiting.empty()) return {};
  const auto streams = open_streams(proc_root);
  const auto peers = tcp_peers(proc_root);
  std::vector<LockWait> out;
  for (const Waiting& w : waiting) {
    uint64_t other = w.inode;
    if (!w.pipe) {
      auto it = peers.find(w.inode);
      if (it == peers.end()) continue;
      other = it->second;
    }
    auto it = streams.find(other);
    if (it == streams.end()) continue;
    std::vector<uint32_t> found;
    for (const Opener& o : it->second) {
      if (o.pid == w.pid || found.size() == kMaxHolders ||
          std::find(found.begin(), found.end(), o.pid) != found.end())
        continue;
      // A pipe's other end is open the other way: a reader waits for a writer.
      if (w.pipe && (o.mode == w.mode && o.mode != O_RDWR)) continue;
      LockWait lw;
      lw.waiter_pid = w.pid;
      lw.waiter_tid = w.tid;
      lw.holder_pid = o.pid;
      lw.object = w.inode;
      lw.lock = std::string(w.pipe ? "pipe" : "tcp peer") + " (" + w.field->rule + ")";
      out.push_back(std::move(lw));
      found.push_back(o.pid);
    }
  }
  return out;
}

}  // namespace cw
