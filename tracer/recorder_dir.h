// The folder an always-on recording lives in (`record start|stop|status`, `mark`): the
// ring of trace files, the recorder's pid, its status and the socket markers are sent to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cw {

// --dir, else $CAUSEWAY_DIR, else /var/lib/causeway.
std::string recorder_dir(const std::string& option);

struct RecorderPaths {
  std::string dir, ring, pid_file, status_file, socket, log;
  explicit RecorderPaths(const std::string& dir);
};

// The pid of the recorder running in `paths.dir`, if one is alive.
std::optional<int> running_recorder(const RecorderPaths& paths);

// Receives markers sent by `causeway mark` (a datagram socket in the recorder's folder).
class MarkerSocket {
 public:
  // Binds the socket; `bound()` is false when another recorder owns it.
  explicit MarkerSocket(const std::string& path);
  ~MarkerSocket();
  bool bound() const { return fd_ >= 0; }
  // Calls `on_mark(ts, pid, tid, text)` for every marker waiting, without blocking.
  template <typename F>
  void drain(F&& on_mark) {
    std::string text;
    uint64_t ts = 0;
    uint32_t pid = 0, tid = 0;
    while (receive(ts, pid, tid, text)) on_mark(ts, pid, tid, text);
  }

 private:
  bool receive(uint64_t& ts, uint32_t& pid, uint32_t& tid, std::string& text);
  int fd_ = -1;
  std::string path_;
};

// Sends a marker stamped now with this thread's ids; false (errno set) when no recorder
// listens at `path`.
bool send_marker(const std::string& path, std::string_view text);

}  // namespace cw
