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

// What the pid file says of the recorder in a folder. It is `running` only when that pid
// is alive, not a zombie (killed, and not yet reaped by its parent, which may never
// happen when pid 1 reaps nothing), and started when the file says (the pid was not taken
// by another process since). Otherwise a pid file left behind names a `stale_pid`.
struct RecorderState {
  std::optional<int> running;
  int stale_pid = 0;
  std::string stale_why;  // "it is a zombie: it was killed, or died", ...
};
RecorderState recorder_state(const RecorderPaths& paths);

// The pid of the recorder running in `paths.dir`, if one is (recorder_state).
std::optional<int> running_recorder(const RecorderPaths& paths);

// Removes the pid file of a stale recorder, if it still names `pid`; false if it did not.
bool remove_stale_pid_file(const RecorderPaths& paths, int pid);

// Writes this process's pid file: "PID STARTTIME", the start time in clock ticks after
// boot (/proc/PID/stat), written beside it and renamed so a reader never sees half of it.
void write_pid_file(const RecorderPaths& paths);

// A process's state letter and start time from /proc/PID/stat, and whether it is dying
// (exiting, or a SIGKILL is pending); nullopt when it is gone.
struct ProcStat {
  char state = 0;
  uint64_t start_time = 0;
  bool dying = false;
};
std::optional<ProcStat> read_proc_stat(int pid);

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
