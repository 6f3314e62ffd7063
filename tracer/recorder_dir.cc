#include "tracer/recorder_dir.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

namespace cw {

namespace {

// A marker datagram: ts, pid, tid, then the text.
struct MarkerHeader {
  uint64_t ts;
  uint32_t pid, tid;
};
constexpr size_t kMaxMarker = 4096;

sockaddr_un address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  return a;
}

}  // namespace

std::string recorder_dir(const std::string& option) {
  if (!option.empty()) return option;
  if (const char* env = std::getenv("CAUSEWAY_DIR"); env && *env) return env;
  return "/var/lib/causeway";
}

RecorderPaths::RecorderPaths(const std::string& d)
    : dir(d),
      ring(d + "/ring"),
      pid_file(d + "/recorder.pid"),
      status_file(d + "/status.json"),
      socket(d + "/marker.sock"),
      log(d + "/recorder.log") {}

std::optional<ProcStat> read_proc_stat(int pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream in(proc + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses. Fields after it,
  // counted from 3: the state, the flags (9), the start time (22).
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  if (fields.size() < 20 || fields[0].size() != 1) return std::nullopt;
  ProcStat stat;
  stat.state = fields[0][0];
  constexpr uint64_t kPfExiting = 0x4;  // include/linux/sched.h: do_exit() has begun
  stat.dying = (std::strtoull(fields[6].c_str(), nullptr, 10) & kPfExiting) != 0;
  stat.start_time = std::strtoull(fields[19].c_str(), nullptr, 10);
  // kill() returns before the target is scheduled to die: until then a SIGKILL waits in
  // its pending sets, and it is as good as gone.
  std::ifstream status(proc + "/status");
  constexpr uint64_t kSigKill = uint64_t{1} << (SIGKILL - 1);
  for (std::string l; std::getline(status, l);)
    if (l.rfind("SigPnd:", 0) == 0 || l.rfind("ShdPnd:", 0) == 0)
      if (std::strtoull(l.c_str() + 7, nullptr, 16) & kSigKill) stat.dying = true;
  return stat;
}

namespace {

struct PidFile {
  int pid = 0;
  std::optional<uint64_t> start_time;  // absent in a file from an older causeway
};

std::optional<PidFile> read_pid_file(const RecorderPaths& paths) {
  std::ifstream in(paths.pid_file);
  PidFile f;
  if (!(in >> f.pid) || f.pid <= 0) return std::nullopt;
  uint64_t start = 0;
  if (in >> start) f.start_time = start;
  return f;
}

}  // namespace

RecorderState recorder_state(const RecorderPaths& paths) {
  RecorderState state;
  std::optional<PidFile> file = read_pid_file(paths);
  if (!file) return state;
  auto stale = [&](std::string why) {
    state.stale_pid = file->pid;
    state.stale_why = std::move(why);
    return state;
  };
  // kill(pid, 0) succeeds on a zombie: the state in /proc says whether it still runs.
  std::optional<ProcStat> stat = read_proc_stat(file->pid);
  if (!stat) return stale("it is gone: it was killed, or died");
  if (stat->state == 'Z' || stat->state == 'X')
    return stale("it is a zombie: it was killed, or died, and was not reaped");
  if (stat->dying) return stale("it is being killed, or is exiting");
  if (file->start_time && *file->start_time != stat->start_time)
    return stale("it is gone, and its pid is another process's now");
  state.running = file->pid;
  return state;
}

std::optional<int> running_recorder(const RecorderPaths& paths) {
  return recorder_state(paths).running;
}

bool remove_stale_pid_file(const RecorderPaths& paths, int pid) {
  // A recorder starting meanwhile writes its own pid: leave that one.
  std::optional<PidFile> file = read_pid_file(paths);
  if (!file || file->pid != pid) return false;
  return unlink(paths.pid_file.c_str()) == 0;
}

void write_pid_file(const RecorderPaths& paths) {
  const int pid = getpid();
  std::optional<ProcStat> stat = read_proc_stat(pid);
  const std::string tmp = paths.pid_file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << pid;
    if (stat) out << " " << stat->start_time;
    out << "\n";
  }
  std::rename(tmp.c_str(), paths.pid_file.c_str());
}

MarkerSocket::MarkerSocket(const std::string& path) : path_(path) {
  sockaddr_un a = address(path);
  if (path.size() >= sizeof a.sun_path) return;
  // A socket file left by a recorder that died is stale: nobody answers on it.
  int probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (probe >= 0) {
    bool alive = connect(probe, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(probe);
    if (alive) return;
  }
  unlink(path.c_str());
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd_);
    fd_ = -1;
  }
}

MarkerSocket::~MarkerSocket() {
  if (fd_ >= 0) {
    close(fd_);
    unlink(path_.c_str());
  }
}

bool MarkerSocket::receive(uint64_t& ts, uint32_t& pid, uint32_t& tid, std::string& text) {
  if (fd_ < 0) return false;
  char buf[sizeof(MarkerHeader) + kMaxMarker];
  for (;;) {
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return false;  // EAGAIN: nothing waiting
    if (static_cast<size_t>(n) < sizeof(MarkerHeader)) continue;
    MarkerHeader h;
    std::memcpy(&h, buf, sizeof h);
    ts = h.ts;
    pid = h.pid;
    tid = h.tid;
    text.assign(buf + sizeof h, static_cast<size_t>(n) - sizeof h);
    return true;
  }
}

bool send_marker(const std::string& path, std::string_view text) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  MarkerHeader h{
      static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec),
      static_cast<uint32_t>(getpid()), static_cast<uint32_t>(gettid())};
  std::string msg(reinterpret_cast<const char*>(&h), sizeof h);
  msg.append(text.substr(0, kMaxMarker));
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a = address(path);
  bool ok = sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a) ==
            static_cast<ssize_t>(msg.size());
  int saved = errno;
  close(fd);
  errno = saved;
  return ok;
}

}  // namespace cw
