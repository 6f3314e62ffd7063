// The folder an always-on recording lives in (`record start|stop|status`, `mark`): the
// ring of trace files, the recorder's pid, its status and the socket markers are sent to.
//
// The recorder runs as root, and root writing through a folder another user can change
// would truncate or replace whatever that user points it at. So the folder is opened once,
// every step of its path without following a link, and refused unless this user owns it
// and no other user can write to it or to any folder above it (which would let them swap
// it). Every file in it is then opened relative to that descriptor, never through a link.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cw {

// --dir, else $CAUSEWAY_DIR, else /var/lib/causeway.
std::string recorder_dir(const std::string& option);

struct RecorderPaths {
  std::string dir, ring, pid_file, status_file, socket, log, lock;
  explicit RecorderPaths(const std::string& dir);
};

// Why a recorder's folder cannot be used. `unsafe`: another user could write to it (or
// swap it), or it is a link: the folder given is wrong. Otherwise the system cannot (a
// permission, a full disk).
class RecorderDirError : public std::runtime_error {
 public:
  RecorderDirError(const std::string& what, bool unsafe)
      : std::runtime_error(what), unsafe_(unsafe) {}
  bool unsafe() const { return unsafe_; }

 private:
  bool unsafe_;
};

// The recorder's folder, opened and checked (above). Names given to its methods are plain
// file names in it.
class RecorderDir {
 public:
  // Opens the folder at `path`: nullopt when it does not exist and `create` is false.
  // With `create`, a missing folder is made 0700 (the folders above it as mkdir -p does)
  // and one of this user's is narrowed to 0700: it holds other users' command lines.
  // Throws RecorderDirError when it is a link, not a folder, not this user's, writable by
  // others, or below a folder that others could change.
  static std::optional<RecorderDir> open(const std::string& path, bool create);
  RecorderDir(RecorderDir&& other) noexcept;
  RecorderDir& operator=(RecorderDir&& other) noexcept;
  RecorderDir(const RecorderDir&) = delete;
  RecorderDir& operator=(const RecorderDir&) = delete;
  ~RecorderDir();

  int fd() const { return fd_; }
  const RecorderPaths& paths() const { return paths_; }

  // A descriptor (close-on-exec) on file `name`, created 0600 if missing and emptied:
  // -1 with `why` when it is a link, not a regular file, has other hard links or is not
  // this user's.
  int open_for_write(const char* name, std::string* why) const;
  // Replaces file `name` whole with `text`: written to NAME.tmp (created afresh), then
  // renamed over it, so a reader never sees half of it. When that cannot be written (a
  // full disk), `name` is overwritten in place instead, in the room it already has.
  bool replace_file(const char* name, std::string_view text, std::string* why) const;
  // The content of regular file `name`, at most `max_bytes` of it; nullopt when it is
  // missing, a link, not a regular file, or larger.
  std::optional<std::string> read_file(const char* name, size_t max_bytes) const;
  // Removes file `name` (never what a link points to); false when it did not.
  bool remove(const char* name) const;
  // Removes folder `name` and everything in it, relative to this folder all the way down:
  // a link is removed, never followed. True when it is gone (or was never there).
  bool remove_tree(const char* name, std::string* why) const;

 private:
  RecorderDir(int fd, std::string path);
  int fd_ = -1;
  RecorderPaths paths_;
};

// A process's state letter and start time from /proc/PID/stat, and whether it is dying
// (exiting, or a SIGKILL is pending); nullopt when it is gone.
struct ProcStat {
  char state = 0;
  uint64_t start_time = 0;
  bool dying = false;
};
std::optional<ProcStat> read_proc_stat(int pid);

// Whether process `pid` runs this program (the same executable file as this process, or
// one at the same path that was replaced since it started: an upgrade).
bool runs_this_program(int pid);

// The recorder holds a write lock on `recorder.lock` in its folder for as long as it runs:
// that, not the pid file (a file anyone able to write there could forge), says which
// process the recorder is. Takes it; the descriptor that holds it, or -1 when another
// process holds it (`why` says so) or it cannot be taken.
int take_recorder_lock(const RecorderDir& dir, std::string* why);
// The pid of the process holding the recorder's lock in `dir`, if one does.
std::optional<int> recorder_lock_holder(const RecorderDir& dir);

// Which process is the recorder in a folder. It is `running` only when a process of this
// program holds the lock (above) and is alive, not a zombie and not being killed. A pid
// file left without a lock holder names a `stale_pid`: the recorder was killed or died
// (or the file was forged); a lock held by another program is `foreign_pid`.
struct RecorderState {
  std::optional<int> running;
  int stale_pid = 0;
  std::string stale_why;  // "it is a zombie: it was killed, or died", ...
  int foreign_pid = 0;    // holds the lock, but is not causeway: never signalled
};
RecorderState recorder_state(const RecorderDir& dir);

// Removes the pid file of a stale recorder, if it still names `pid`; false if it did not.
bool remove_stale_pid_file(const RecorderDir& dir, int pid);

// Writes this process's pid file: "PID STARTTIME", the start time in clock ticks after
// boot (/proc/PID/stat), written beside it and renamed so a reader never sees half of it.
// It tells people which process records; the lock is what the commands go by.
void write_pid_file(const RecorderDir& dir);

// Sends `sig` to the recorder `pid` of `dir`, only after checking, on a pidfd taken first
// (so the pid cannot be another process's by the time the signal goes), that it still
// holds the folder's lock and runs this program. False with `why` when it does not.
bool signal_recorder(const RecorderDir& dir, int pid, int sig, std::string* why);

// Receives markers sent by `causeway mark` (a datagram socket in the recorder's folder).
class MarkerSocket {
 public:
  // Binds the socket; `bound()` is false when another recorder owns it, or something other
  // than a socket of this user's is at its path (left alone).
  explicit MarkerSocket(const RecorderDir& dir);
  ~MarkerSocket();
  MarkerSocket(const MarkerSocket&) = delete;
  MarkerSocket& operator=(const MarkerSocket&) = delete;
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
  int dir_fd_ = -1;  // the folder, to remove the socket from
  dev_t dev_ = 0;    // the socket file bound, removed only while it is still that one
  ino_t ino_ = 0;
};

// Sends a marker stamped now with this thread's ids; false (errno set) when no recorder
// listens at `path`.
bool send_marker(const std::string& path, std::string_view text);

}  // namespace cw
