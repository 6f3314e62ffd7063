#include "tracer/recorder_dir.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

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

std::optional<int> running_recorder(const RecorderPaths& paths) {
  std::ifstream in(paths.pid_file);
  int pid = 0;
  if (!(in >> pid) || pid <= 0) return std::nullopt;
  if (kill(pid, 0) != 0 && errno == ESRCH) return std::nullopt;
  return pid;
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
