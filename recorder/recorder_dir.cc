#include "recorder/recorder_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace cw {

namespace {

// A marker datagram: ts, pid, tid, then the text.
struct MarkerHeader {
  uint64_t ts;
  uint32_t pid, tid;
};
constexpr size_t kMaxMarker = 4096;
// How long a marker may wait in the socket before the recorder reads it (a step is about
// 100 ms; a recorder starved of CPU takes longer).
constexpr uint64_t kMarkerMaxLagNs = 5'000'000'000;

uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

constexpr const char* kPidName = "recorder.pid";
constexpr const char* kSocketName = "marker.sock";
constexpr const char* kLockName = "recorder.lock";

sockaddr_un address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  return a;
}

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string user_name(uid_t uid) {
  if (const passwd* pw = getpwuid(uid)) return fmt::format("user {} (uid {})", pw->pw_name, uid);
  return fmt::format("uid {}", uid);
}

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// A folder above the recorder's: another user must not be able to rename or replace
// what is in it, or they could swap the recorder's folder for one of theirs after it was
// checked. Root's or this user's, and writable by nobody else unless sticky (where only an
// entry's owner may rename it, and each entry on the way is checked in turn).
void check_ancestor(int fd, const std::string& shown) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw RecorderDirError(fmt::format("{}: cannot stat: {}", shown, errno_text(errno)), false);
  if (st.st_uid != 0 && st.st_uid != ::geteuid())
    throw RecorderDirError(
        fmt::format("{} is owned by {}: they could replace the recorder's folder inside it; "
                    "refusing to use it (give --dir a folder of your own)",
                    shown, user_name(st.st_uid)),
        true);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    throw RecorderDirError(
        fmt::format("{} is writable by other users (mode {:04o}): they could replace the "
                    "recorder's folder inside it; refusing to use it (give --dir a folder of "
                    "your own)",
                    shown, st.st_mode & 07777),
        true);
}

// Opens the folder `real` (absolute, no links in it) one step at a time from the root,
// never following a link, checking each folder on the way.
int open_trusted_path(const std::string& real) {
  Fd fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (fd.fd < 0)
    throw RecorderDirError(fmt::format("/: cannot open: {}", errno_text(errno)), false);
  check_ancestor(fd.fd, "/");
  std::string shown;
  std::istringstream parts(real);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty()) continue;
    shown += "/" + part;
    int next = ::openat(fd.fd, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      // The path had no link in it a moment ago: someone is changing it.
      const bool link = errno == ELOOP || errno == ENOTDIR;
      throw RecorderDirError(
          fmt::format("{}: cannot open: {}", shown,
                      link ? "it became a symbolic link or a file" : errno_text(errno)),
          link);
    }
    Fd opened(next);
    check_ancestor(opened.fd, shown);
    std::swap(fd.fd, opened.fd);
  }
  return fd.release();
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
      pid_file(d + "/" + kPidName),
      status_file(d + "/status.json"),
      socket(d + "/" + kSocketName),
      log(d + "/recorder.log"),
      lock(d + "/" + kLockName) {}

RecorderDir::RecorderDir(int fd, std::string path) : fd_(fd), paths_(path) {}

RecorderDir::RecorderDir(RecorderDir&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), paths_(other.paths_) {}

RecorderDir& RecorderDir::operator=(RecorderDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    paths_ = other.paths_;
  }
  return *this;
}

RecorderDir::~RecorderDir() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<RecorderDir> RecorderDir::open(const std::string& given, bool create) {
  namespace fs = std::filesystem;
  if (given.empty()) throw RecorderDirError("the recorder's folder: an empty path", true);
  std::error_code ec;
  fs::path abs = fs::path(given).is_absolute() ? fs::path(given) : fs::current_path(ec) / given;
  std::string text = abs.lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  abs = text;
  const std::string name = abs.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw RecorderDirError(fmt::format("{}: not a folder's name", given), true);
  const fs::path parent = abs.parent_path();
  // The folders above are made as `mkdir -p` would; whether they can be trusted is
  // checked below, whoever made them.
  if (create) fs::create_directories(parent, ec);
  char* resolved = ::realpath(parent.c_str(), nullptr);
  if (!resolved) {
    if (errno == ENOENT && !create) return std::nullopt;
    throw RecorderDirError(fmt::format("{}: cannot open: {}", parent.string(), errno_text(errno)),
                           false);
  }
  const std::string real_parent = resolved;
  std::free(resolved);
  Fd parent_fd(open_trusted_path(real_parent));

  bool created = false;
  if (create) {
    if (::mkdirat(parent_fd.fd, name.c_str(), 0700) == 0)
      created = true;
    else if (errno != EEXIST)
      throw RecorderDirError(fmt::format("{}: cannot create: {}", given, errno_text(errno)), false);
  }
  Fd fd(::openat(parent_fd.fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.fd < 0) {
    const int err = errno;
    struct stat st {};
    if (::fstatat(parent_fd.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      throw RecorderDirError(
          fmt::format("{}: the recorder's folder is a symbolic link: refusing to follow it "
                      "(give --dir the folder itself)",
                      given),
          true);
    if (err == ENOENT && !create) return std::nullopt;
    if (err == ENOTDIR) throw RecorderDirError(fmt::format("{}: not a folder", given), true);
    throw RecorderDirError(fmt::format("{}: cannot open: {}", given, errno_text(err)), false);
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0)
    throw RecorderDirError(fmt::format("{}: cannot stat: {}", given, errno_text(errno)), false);
  if (st.st_uid != ::geteuid())
    throw RecorderDirError(
        fmt::format("{}: the recorder's folder is owned by {}, not by you: refusing to use it "
                    "(its files could be links to files of yours; give --dir a folder of your "
                    "own)",
                    given, user_name(st.st_uid)),
        true);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw RecorderDirError(
        fmt::format("{}: the recorder's folder is writable by other users (mode {:04o}): "
                    "refusing to use it (they could plant links in it; chmod 700 it, or give "
                    "--dir another folder)",
                    given, st.st_mode & 07777),
        true);
  if ((create || created) && (st.st_mode & 077) && ::fchmod(fd.fd, 0700) != 0)
    throw RecorderDirError(fmt::format("{}: cannot chmod: {}", given, errno_text(errno)), false);
  return RecorderDir(fd.release(), given);
}

int RecorderDir::open_for_write(const char* name, std::string* why) const {
  const std::string shown = paths_.dir + "/" + name;
  // O_NONBLOCK: a FIFO would otherwise block the open before the check below refuses it.
  // No O_TRUNC: nothing is cut before the checks.
  int fd = ::openat(fd_, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = fmt::format("{}: {}", shown,
                       errno == ELOOP ? "a symbolic link: refusing to write through it"
                                      : "cannot create: " + errno_text(errno));
    return -1;
  }
  Fd held(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *why = fmt::format("{}: cannot stat: {}", shown, errno_text(errno));
    return -1;
  }
  if (!S_ISREG(st.st_mode) || st.st_nlink > 1 || st.st_uid != ::geteuid()) {
    *why = fmt::format("{}: {}: refusing to write to it", shown,
                       !S_ISREG(st.st_mode) ? "not a regular file"
                       : st.st_nlink > 1    ? "has other hard links"
                                            : "owned by " + user_name(st.st_uid));
    return -1;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 || ::ftruncate(fd, 0) != 0) {
    *why = fmt::format("{}: cannot prepare for writing: {}", shown, errno_text(errno));
    return -1;
  }
  return held.release();
}

namespace {

bool write_all(int fd, std::string_view text, off_t at) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, at + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool RecorderDir::replace_file(const char* name, std::string_view text, std::string* why) const {
  const std::string tmp = std::string(name) + ".tmp";
  ::unlinkat(fd_, tmp.c_str(), 0);  // one left by a recorder that died while writing it
  int err = 0;
  if (Fd out(
          ::openat(fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      out.fd < 0) {
    err = errno;
  } else if (!write_all(out.fd, text, 0) || ::close(out.release()) != 0) {
    err = errno;
  } else if (::renameat(fd_, tmp.c_str(), fd_, name) != 0) {
    err = errno;
  } else {
    return true;
  }
  ::unlinkat(fd_, tmp.c_str(), 0);
  // A full disk has no room for a second copy: the file is rewritten where it is, in the
  // blocks it already holds (a status file keeps about the same size), so the last word
  // (why the recorder stopped) still gets written.
  Fd in_place(::openat(fd_, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (in_place.fd >= 0 && ::fstat(in_place.fd, &st) == 0 && S_ISREG(st.st_mode) &&
      st.st_nlink == 1 && st.st_uid == ::geteuid() && write_all(in_place.fd, text, 0) &&
      ::ftruncate(in_place.fd, static_cast<off_t>(text.size())) == 0)
    return true;
  if (why) *why = fmt::format("{}/{}: cannot write: {}", paths_.dir, name, errno_text(err));
  return false;
}

std::optional<std::string> RecorderDir::read_file(const char* name, size_t max_bytes) const {
  Fd fd(::openat(fd_, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > max_bytes)
    return std::nullopt;
  std::string text(max_bytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) return std::nullopt;  // it grew meanwhile
  text.resize(got);
  return text;
}

bool RecorderDir::remove(const char* name) const {
  return ::unlinkat(fd_, name, 0) == 0;
}

namespace {

// Removes `name` in folder `parent` and, for a folder, everything in it, never following a
// link. `shown` is its path for messages; `depth` bounds how deep it goes.
bool remove_at(int parent, const std::string& name, const std::string& shown, int depth,
               std::string* why) {
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    *why = fmt::format("{}: cannot stat: {}", shown, errno_text(errno));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT) return true;
    *why = fmt::format("{}: cannot remove: {}", shown, errno_text(errno));
    return false;
  }
  if (depth > 32) {
    *why = fmt::format("{}: folders nested too deep to remove", shown);
    return false;
  }
  int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *why = fmt::format("{}: cannot open: {}", shown, errno_text(errno));
    return false;
  }
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    *why = fmt::format("{}: cannot read: {}", shown, errno_text(errno));
    return false;
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  bool ok = true;
  for (const std::string& n : names)
    ok = ok && remove_at(::dirfd(d), n, shown + "/" + n, depth + 1, why);
  ::closedir(d);
  if (!ok) return false;
  if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return true;
  *why = fmt::format("{}: cannot remove: {}", shown, errno_text(errno));
  return false;
}

}  // namespace

bool RecorderDir::remove_tree(const char* name, std::string* why) const {
  const std::string shown = paths_.dir + "/" + name;
  struct stat st {};
  if (::fstatat(fd_, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    *why = fmt::format("{}: a symbolic link where the ring's folder should be: refusing to use it",
                       shown);
    return false;
  }
  return remove_at(fd_, name, shown, 0, why);
}

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

bool runs_this_program(int pid) {
  const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  struct stat mine {
  }, theirs{};
  if (::stat("/proc/self/exe", &mine) != 0) return false;
  if (::stat(exe.c_str(), &theirs) == 0 && mine.st_dev == theirs.st_dev &&
      mine.st_ino == theirs.st_ino)
    return true;
  // Upgraded while it ran: its file was replaced, and the kernel names the old one
  // "PATH (deleted)".
  auto link = [](const std::string& path) {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  };
  const std::string own = link("/proc/self/exe"), other = link(exe);
  const std::string deleted = " (deleted)";
  return !own.empty() && other.size() > deleted.size() &&
         other.compare(other.size() - deleted.size(), deleted.size(), deleted) == 0 &&
         other.substr(0, other.size() - deleted.size()) == own;
}

namespace {

bool alive(const std::optional<ProcStat>& stat) {
  return stat && stat->state != 'Z' && stat->state != 'X' && !stat->dying;
}

}  // namespace

int take_recorder_lock(const RecorderDir& dir, std::string* why) {
  int fd = ::openat(dir.fd(), kLockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = fmt::format("{}: cannot open: {}", dir.paths().lock, errno_text(errno));
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    *why = fmt::format("{}: not a regular file", dir.paths().lock);
    return -1;
  }
  // A POSIX record lock, not flock: another process can ask who holds it (F_GETLK).
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  int err = 0;
  std::optional<int> holder;
  // A recorder that was just killed holds its lock until it is gone: a few moments.
  for (int tries = 0; tries < 500; ++tries) {
    if (::fcntl(fd, F_SETLK, &fl) == 0) return fd;
    err = errno;
    if (err != EAGAIN && err != EACCES) break;
    holder = recorder_lock_holder(dir);
    if (holder && alive(read_proc_stat(*holder))) break;
    ::usleep(10'000);
  }
  ::close(fd);
  if (err == EAGAIN || err == EACCES) {
    *why = fmt::format("a recorder is already running in {}{}", dir.paths().dir,
                       holder ? fmt::format(" (pid {})", *holder) : "");
  } else {
    *why = fmt::format("{}: cannot lock: {}", dir.paths().lock, errno_text(err));
  }
  return -1;
}

std::optional<int> recorder_lock_holder(const RecorderDir& dir) {
  // Never called by the recorder itself: closing this descriptor would drop its own lock.
  Fd fd(::openat(dir.fd(), kLockName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(fd.fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK || fl.l_pid <= 0)
    return std::nullopt;
  return fl.l_pid;
}

namespace {

struct PidFile {
  int pid = 0;
  std::optional<uint64_t> start_time;  // absent in a file from an older causeway
};

std::optional<PidFile> read_pid_file(const RecorderDir& dir) {
  std::optional<std::string> text = dir.read_file(kPidName, 64);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  PidFile f;
  if (!(in >> f.pid) || f.pid <= 0) return std::nullopt;
  uint64_t start = 0;
  if (in >> start) f.start_time = start;
  return f;
}

}  // namespace

RecorderState recorder_state(const RecorderDir& dir) {
  RecorderState state;
  if (std::optional<int> holder = recorder_lock_holder(dir)) {
    // One being killed still holds its lock for a moment: then what its pid file says is
    // stale, below.
    if (alive(read_proc_stat(*holder))) {
      if (runs_this_program(*holder))
        state.running = *holder;
      else
        state.foreign_pid = *holder;
      return state;
    }
  }
  std::optional<PidFile> file = read_pid_file(dir);
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
  return stale(
      "it does not hold the recorder's lock, so it is not the recorder (the pid file "
      "was not written by a running one)");
}

bool remove_stale_pid_file(const RecorderDir& dir, int pid) {
  // A recorder starting meanwhile writes its own pid: leave that one.
  std::optional<PidFile> file = read_pid_file(dir);
  if (!file || file->pid != pid) return false;
  return dir.remove(kPidName);
}

void write_pid_file(const RecorderDir& dir) {
  const int pid = getpid();
  std::string text = std::to_string(pid);
  if (std::optional<ProcStat> stat = read_proc_stat(pid))
    text += " " + std::to_string(stat->start_time);
  dir.replace_file(kPidName, text + "\n", nullptr);
}

bool signal_recorder(const RecorderDir& dir, int pid, int sig, std::string* why) {
  // The pidfd first: whatever is checked below is then checked of the process it names,
  // and the signal reaches that process or none, even if the pid is reused meanwhile.
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (pidfd.fd < 0 && errno != ENOSYS) {
    *why = fmt::format("the recorder (pid {}) is gone", pid);
    return false;
  }
  if (recorder_lock_holder(dir) != pid) {
    *why = fmt::format("pid {} does not hold the recorder's lock in {}: not signalling it", pid,
                       dir.paths().dir);
    return false;
  }
  if (!runs_this_program(pid)) {
    *why = fmt::format(
        "pid {} holds the recorder's lock in {} but is not causeway: not "
        "signalling it",
        pid, dir.paths().dir);
    return false;
  }
  const long sent = pidfd.fd >= 0 ? ::syscall(SYS_pidfd_send_signal, pidfd.fd, sig, nullptr, 0)
                                  : ::kill(pid, sig);
  if (sent != 0) {
    *why = fmt::format("cannot signal the recorder (pid {}): {}", pid, errno_text(errno));
    return false;
  }
  return true;
}

MarkerSocket::MarkerSocket(const RecorderDir& dir) {
  const std::string& path = dir.paths().socket;
  sockaddr_un a = address(path);
  if (path.size() >= sizeof a.sun_path) return;
  struct stat st {};
  if (::fstatat(dir.fd(), kSocketName, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    // Only a socket of this user's is replaced; anything else there is left alone.
    if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid()) return;
    // A socket file left by a recorder that died is stale: nobody answers on it.
    int probe = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (probe >= 0) {
      bool answered = ::connect(probe, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      ::close(probe);
      if (answered) return;
    }
    ::unlinkat(dir.fd(), kSocketName, 0);
  }
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return;
  // Bound by path, inside a folder no other user can change (RecorderDir::open checked it
  // and every folder above it), so the path is the folder's.
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::fstatat(dir.fd(), kSocketName, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  dir_fd_ = ::fcntl(dir.fd(), F_DUPFD_CLOEXEC, 0);
}

MarkerSocket::~MarkerSocket() {
  if (fd_ < 0) return;
  ::close(fd_);
  struct stat st {};
  if (dir_fd_ >= 0 && ::fstatat(dir_fd_, kSocketName, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      st.st_dev == dev_ && st.st_ino == ino_)
    ::unlinkat(dir_fd_, kSocketName, 0);
  if (dir_fd_ >= 0) ::close(dir_fd_);
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
    // The sender's stamp is its own clock's: a process in another time namespace
    // (`unshare --time`, a container that has one) reads another CLOCK_MONOTONIC, and its
    // stamp put the marker thousands of seconds from the events around it (the trace then
    // spanned that long). The socket is drained every step (about 100 ms): a stamp that is
    // not within the last kMarkerMaxLag of this clock is replaced by the time it arrived.
    const uint64_t now = monotonic_ns();
    ts = h.ts <= now && now - h.ts <= kMarkerMaxLagNs ? h.ts : now;
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
