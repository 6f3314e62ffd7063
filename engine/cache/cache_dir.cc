#include "engine/cache/cache_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

namespace cw::cache {

namespace fs = std::filesystem;

struct Folder::Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() { close(fd); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr int64_t kMinuteNs = int64_t{60} * 1000 * 1000 * 1000;

bool is_hex(std::string_view s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// One path component: what openat() and mkdirat() take relative to a folder.
bool is_component(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

// Whether a folder opened (by a path the user gave, links followed) may hold the cache or
// the folders leading to it: its owner is this user or root, and its group and others
// cannot write it (else they could rename what is in it and put a link or a folder of
// theirs in its place).
std::string untrusted_ancestor(const struct stat& st) {
  if (!S_ISDIR(st.st_mode)) return "not a folder";
  if (st.st_uid != geteuid() && st.st_uid != 0)
    return fmt::format("belongs to user {}, not to this one ({})", st.st_uid, geteuid());
  if (st.st_mode & 022) return "its group or others can write it";
  return {};
}

std::string errno_text(int err) {
  return std::strerror(err);
}

}  // namespace

int Folder::fd() const {
  return fd_ ? fd_->fd : -1;
}

std::string Folder::shown(std::string_view name) const {
  return fmt::format("{}/{}", path_, name);
}

std::optional<Folder> Folder::open_in(int at, const std::string& name, const std::string& shown,
                                      bool create, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<Folder> {
    if (why) *why = fmt::format("{}: {}", shown, reason);
    return std::nullopt;
  };
  if (create && mkdirat(at, name.c_str(), 0700) != 0 && errno != EEXIST)
    return fail(errno_text(errno));
  const int fd = openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    // With O_DIRECTORY a link is ENOTDIR: say which it is.
    struct stat link {};
    if (err == ELOOP ||
        (err == ENOTDIR && fstatat(at, name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISLNK(link.st_mode)))
      return fail("a symbolic link (not followed)");
    if (err == ENOTDIR) return fail("not a folder");
    if (err == ENOENT) {
      if (why) *why = "";
      return std::nullopt;
    }
    return fail(errno_text(err));
  }
  auto holder = std::make_shared<const Fd>(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0) return fail(errno_text(errno));
  if (!S_ISDIR(st.st_mode)) return fail("not a folder");
  // Checked on the descriptor that every later operation goes through: what is checked is
  // what is used, whatever happens to the path afterwards.
  if (st.st_uid != geteuid())
    return fail(fmt::format("belongs to user {}, not to this one ({})", st.st_uid, geteuid()));
  if (st.st_mode & 022) return fail("its group or others can write it");
  // The entries hold the trace's events: a folder that others could read (made by hand, or
  // by an older causeway) is closed again.
  if ((st.st_mode & 077) != 0 && fchmod(fd, st.st_mode & 0700) != 0) return fail(errno_text(errno));
  if ((st.st_mode & 0300) != 0300) return fail("not writable");
  struct statvfs vfs {};
  if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) return fail("a read-only file system");
  return Folder(std::move(holder), shown);
}

std::optional<Folder> Folder::open(const std::string& path, std::string* why) {
  return open_in(AT_FDCWD, path, path, false, why);
}

std::optional<Folder> Folder::sub(std::string_view name, bool create, std::string* why) const {
  if (!valid() || !is_component(name)) {
    if (why) *why = fmt::format("{}: not a folder name", shown(name));
    return std::nullopt;
  }
  return open_in(fd(), std::string(name), shown(name), create, why);
}

Folder Folder::in_pool(const Folder& pool) const {
  Folder f = *this;
  f.pool_ = std::make_shared<const Folder>(pool);
  return f;
}

int Folder::open_file(std::string_view name, uint64_t* size, std::string* why) const {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return -1;
  };
  if (!valid() || !is_component(name)) return fail("not a file name");
  // Not a link (someone else's file would be read as an entry), and no waiting on a FIFO.
  const int fd =
      openat(fd_->fd, std::string(name).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return fail("");
    if (errno == ELOOP) return fail("a symbolic link (not followed)");
    return fail(errno_text(errno));
  }
  struct stat st {};
  std::string bad;
  if (fstat(fd, &st) != 0)
    bad = errno_text(errno);
  else if (!S_ISREG(st.st_mode))
    bad = "not a regular file";
  else if (st.st_uid != geteuid())
    bad = fmt::format("belongs to user {}, not to this one ({})", st.st_uid, geteuid());
  if (!bad.empty()) {
    close(fd);
    return fail(bad);
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

bool Folder::write_file(std::string_view name, const std::vector<std::string_view>& parts,
                        std::string* why) const {
  auto fail = [&](std::string reason) {
    if (why) *why = fmt::format("{}: {}", shown(name), reason);
    return false;
  };
  if (!valid() || !is_component(name)) return fail("not a file name");
  // Unique per process and call: concurrent runs on one trace each rename a whole file.
  static std::mt19937_64 rng{std::random_device{}()};
  const std::string tmp = fmt::format("{}.tmp-{}-{:x}", name, getpid(), rng());
  const int fd =
      openat(fd_->fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return fail(errno_text(errno));
  auto write_all = [&](const char* p, size_t n) {
    while (n > 0) {
      ssize_t w = write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  };
  bool ok = true;
  for (std::string_view p : parts) ok = ok && write_all(p.data(), p.size());
  int err = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  // rename replaces whatever has the name (a link there is replaced, never followed).
  if (ok && renameat(fd_->fd, tmp.c_str(), fd_->fd, std::string(name).c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    unlinkat(fd_->fd, tmp.c_str(), 0);  // made here just now (O_EXCL): ours
    return fail(errno_text(err));
  }
  return true;
}

bool Folder::write_out(std::string_view name, uint64_t from) const {
  uint64_t size = 0;
  std::string why;
  const int fd = open_file(name, &size, &why);
  if (fd < 0) return false;
  const bool ok = size >= from && fdatasync(fd) == 0;
  close(fd);
  return ok;
}

void Folder::touch(std::string_view name) const {
  if (valid() && is_component(name))
    utimensat(fd_->fd, std::string(name).c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

bool Folder::remove_file(std::string_view name) const {
  if (!valid() || !(is_entry_name(name) || is_temporary_name(name))) return false;
  const std::string n(name);
  struct stat st {};
  // The folder is this user's and no one else can write it: what fstatat saw is what
  // unlinkat removes.
  if (fstatat(fd_->fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != geteuid())
    return false;
  return unlinkat(fd_->fd, n.c_str(), 0) == 0;
}

bool Folder::remove_empty_folder(std::string_view name) const {
  if (!valid() || !is_trace_folder_name(name)) return false;
  const std::string n(name);
  struct stat st {};
  if (fstatat(fd_->fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != geteuid())
    return false;
  return unlinkat(fd_->fd, n.c_str(), AT_REMOVEDIR) == 0;  // fails unless empty
}

std::vector<FileInfo> Folder::list() const {
  std::vector<FileInfo> out;
  if (!valid()) return out;
  // A descriptor of its own for the listing ("." of the folder: the same folder), so that
  // the listing's position is not shared with `fd_`.
  const int d = openat(fd_->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0) return out;
  DIR* dir = fdopendir(d);
  if (!dir) {
    close(d);
    return out;
  }
  const uid_t me = geteuid();
  while (const dirent* e = readdir(dir)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (fstatat(fd_->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    FileInfo f;
    f.name = std::string(name);
    f.size = static_cast<uint64_t>(st.st_size);
    f.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
    f.regular = S_ISREG(st.st_mode);
    f.folder = S_ISDIR(st.st_mode);
    f.ours = st.st_uid == me;
    out.push_back(std::move(f));
  }
  closedir(dir);
  return out;
}

bool is_entry_name(std::string_view name) {
  if (name == "trace.cwa" || name == "threads.cwa" || name == "names.cwa" ||
      name == "matches.cwm" || name == "checked.cwk")
    return true;
  if (starts_with(name, "graph-") && ends_with(name, ".cwg"))
    return is_hex(name.substr(6, 16), 16) && name.size() == 26;
  if (starts_with(name, "base-") && ends_with(name, ".cwb"))
    return is_hex(name.substr(5, 16), 16) && name.size() == 25;
  if (starts_with(name, "hang-") && ends_with(name, ".cwh"))
    return name.size() == 42 && is_hex(name.substr(5, 16), 16) && name[21] == '-' &&
           is_hex(name.substr(22, 16), 16);
  return false;
}

bool is_temporary_name(std::string_view name) {
  const size_t at = name.find(".tmp-");
  if (at == std::string_view::npos || !is_entry_name(name.substr(0, at))) return false;
  std::string_view rest = name.substr(at + 5);  // PID-HEX
  const size_t dash = rest.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash > 10 || rest.size() - dash - 1 == 0 ||
      rest.size() - dash - 1 > 16)
    return false;
  std::string_view pid = rest.substr(0, dash), hex = rest.substr(dash + 1);
  return std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         std::all_of(hex.begin(), hex.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_trace_folder_name(std::string_view name) {
  return is_hex(name, 16);
}

namespace {

struct Anchor {
  std::string path;                // opened following links: the user's own setting
  std::vector<std::string> below;  // made below it, one component at a time
};

// `path` split into its longest existing prefix and the components to make below it
// (XDG_CACHE_HOME may not exist yet). Bounded: a path of more than 16 missing components
// is not one to make.
std::optional<Anchor> anchor_of(const std::string& path, std::vector<std::string> below) {
  fs::path p = fs::path(path).lexically_normal();
  for (int i = 0; i < 16; ++i) {
    struct stat st {};
    if (stat(p.c_str(), &st) == 0 || errno != ENOENT) {
      std::string s = p.string();
      if (s.size() > 1 && s.back() == '/') s.pop_back();
      return Anchor{s, std::move(below)};
    }
    if (!p.has_parent_path() || p.parent_path() == p) return std::nullopt;
    const std::string leaf = p.filename().string();
    if (!leaf.empty()) below.insert(below.begin(), leaf);
    p = p.parent_path();
  }
  return std::nullopt;
}

std::optional<Folder> open_pool(const Anchor& a, bool create, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<Folder> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  int fd = open(a.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(fmt::format("{}: {}", a.path, errno_text(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    close(fd);
    return fail(fmt::format("{}: {}", a.path, errno_text(errno)));
  }
  if (std::string bad = untrusted_ancestor(st); !bad.empty()) {
    close(fd);
    return fail(fmt::format("{}: {}", a.path, bad));
  }
  std::string shown = a.path == "/" ? "" : a.path;
  // The folders between it and the last are made 0700 too when missing, and must be this
  // user's (or root's) and closed to writers other than the owner; only the last is made
  // private (it is the only one that is causeway's).
  for (size_t i = 0; i + 1 < a.below.size(); ++i) {
    const std::string& c = a.below[i];
    shown += "/" + c;
    if (create && mkdirat(fd, c.c_str(), 0700) != 0 && errno != EEXIST) {
      int err = errno;
      close(fd);
      return fail(fmt::format("{}: {}", shown, errno_text(err)));
    }
    const int next = openat(fd, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int err = errno;
    close(fd);
    if (next < 0) {
      if (err == ENOENT && !create) return fail("");
      return fail(fmt::format(
          "{}: {}", shown,
          err == ELOOP ? std::string("a symbolic link (not followed)") : errno_text(err)));
    }
    fd = next;
    if (fstat(fd, &st) != 0 || !untrusted_ancestor(st).empty()) {
      std::string bad = untrusted_ancestor(st);
      close(fd);
      return fail(fmt::format("{}: {}", shown, bad));
    }
  }
  const std::string last = a.below.empty() ? std::string(".") : a.below.back();
  std::string problem;
  auto folder = Folder::open_in(fd, last, shown + "/" + last, create, &problem);
  close(fd);
  if (!folder) return fail(problem);
  return folder;
}

}  // namespace

std::optional<Folder> user_cache_folder(bool create, std::string* why) {
  std::vector<Anchor> anchors;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    if (auto a = anchor_of(xdg, {"causeway"})) anchors.push_back(*a);
  const char* home = std::getenv("HOME");
  if (home && *home == '/')
    if (auto a = anchor_of(home, {".cache", "causeway"})) anchors.push_back(*a);
  // Root run with another user's environment (sudo -E): her HOME is not root's to write
  // in (the checks refuse it); root's own home is.
  if (const passwd* pw = getpwuid(geteuid());
      pw && pw->pw_dir && *pw->pw_dir == '/' && (!home || std::string_view(home) != pw->pw_dir))
    if (auto a = anchor_of(pw->pw_dir, {".cache", "causeway"})) anchors.push_back(*a);
  std::string first;
  for (const Anchor& a : anchors) {
    std::string problem;
    if (auto f = open_pool(a, create, &problem)) return f;
    if (!create && problem.empty()) {
      if (why) *why = "";
      return std::nullopt;
    }
    if (first.empty()) first = problem;
  }
  if (why) *why = anchors.empty() ? "neither XDG_CACHE_HOME nor HOME is set" : first;
  return std::nullopt;
}

std::string trace_folder_name(const std::string& trace_path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(trace_path, ec);
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  const std::string name = (ec ? absolute : canonical).string();
  return fmt::format("{:016x}", XXH3_64bits(name.data(), name.size()));
}

std::string beside_path(const std::string& trace_path) {
  std::error_code ec;
  return fs::absolute(trace_path, ec).string() + ".cwcache";
}

std::optional<Folder> cache_dir(const std::string& trace_path, std::string* why) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(trace_path, ec);
  if (ec || !absolute.has_filename()) {
    if (why) *why = fmt::format("{}: not a file path", trace_path);
    return std::nullopt;
  }
  const std::string parent = absolute.parent_path().string();
  const std::string leaf = absolute.filename().string() + ".cwcache";
  std::string beside_problem;
  // The trace's folder, as the user named it (links followed: users name traces through
  // links), then checked on its descriptor: another user who can write it could put a
  // link or a folder of hers where TRACE.cwcache is, or swap one in later.
  const int parent_fd = open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd >= 0) {
    struct stat st {};
    if (fstat(parent_fd, &st) == 0) beside_problem = untrusted_ancestor(st);
    if (beside_problem.empty()) {
      auto f = Folder::open_in(parent_fd, leaf, fmt::format("{}/{}", parent, leaf), true,
                               &beside_problem);
      if (f) {
        close(parent_fd);
        return f;
      }
    }
    close(parent_fd);
  }
  std::string problem;
  auto pool = user_cache_folder(true, &problem);
  if (!pool) {
    if (why) *why = problem;
    return std::nullopt;
  }
  auto f = pool->sub(trace_folder_name(trace_path), true, &problem);
  if (!f) {
    if (why) *why = problem;
    return std::nullopt;
  }
  return f->in_pool(*pool);
}

bool being_written(const Folder& dir, std::string_view name) {
  const std::string prefix = std::string(name) + ".tmp-";
  const int64_t now = now_ns();
  for (const FileInfo& f : dir.list())
    if (starts_with(f.name, prefix) && is_temporary_name(f.name) && f.regular && f.ours &&
        now - f.mtime_ns < 10 * kMinuteNs)
      return true;
  return false;
}

bool being_saved_by_live_run(const Folder& dir, const std::vector<std::string_view>& prefixes) {
  const int64_t now = now_ns();
  for (const FileInfo& f : dir.list()) {
    if (!is_temporary_name(f.name) || !f.regular || !f.ours || now - f.mtime_ns >= 10 * kMinuteNs)
      continue;
    if (std::none_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return starts_with(f.name, p); }))
      continue;
    // ENTRY.tmp-PID-HEX: the writer's pid (is_temporary_name checked its form).
    const std::string_view rest = std::string_view(f.name).substr(f.name.find(".tmp-") + 5);
    const std::string pid(rest.substr(0, rest.find('-')));
    char* end = nullptr;
    const long value = std::strtol(pid.c_str(), &end, 10);
    if (end == pid.c_str() || *end != '\0' || value <= 0) continue;
    if (kill(static_cast<pid_t>(value), 0) == 0 || errno == EPERM) return true;
  }
  return false;
}

void remove_old_temporaries(const Folder& dir) {
  const int64_t now = now_ns();
  for (const FileInfo& f : dir.list())
    if (is_temporary_name(f.name) && f.regular && f.ours && now - f.mtime_ns > 24 * 60 * kMinuteNs)
      dir.remove_file(f.name);
}

std::vector<std::string> evict_least_recent(const Folder& dir, std::string_view prefix,
                                            std::string_view suffix, size_t keep) {
  std::vector<FileInfo> entries;
  for (FileInfo& f : dir.list())
    if (is_entry_name(f.name) && starts_with(f.name, prefix) && ends_with(f.name, suffix) &&
        f.regular && f.ours)
      entries.push_back(std::move(f));
  std::vector<std::string> removed;
  if (entries.size() <= keep) return removed;
  std::sort(entries.begin(), entries.end(), [](const FileInfo& a, const FileInfo& b) {
    return a.mtime_ns != b.mtime_ns ? a.mtime_ns < b.mtime_ns : a.name < b.name;
  });
  for (size_t i = 0; i + keep < entries.size(); ++i)
    if (dir.remove_file(entries[i].name)) removed.push_back(entries[i].name);
  return removed;
}

std::optional<uint64_t> parse_size(std::string_view text) {
  uint64_t n = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (n > (UINT64_MAX - 9) / 10) return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  std::string_view unit = text.substr(i);
  int shift = 0;
  if (!unit.empty()) {
    switch (unit[0]) {
      case 'K':
      case 'k': shift = 10; break;
      case 'M':
      case 'm': shift = 20; break;
      case 'G':
      case 'g': shift = 30; break;
      case 'T':
      case 't': shift = 40; break;
      default: return std::nullopt;
    }
    unit.remove_prefix(1);
    if (unit == "iB" || unit == "B") unit = {};
    if (!unit.empty()) return std::nullopt;
  }
  if (shift && n > (UINT64_MAX >> shift)) return std::nullopt;
  return n << shift;
}

uint64_t size_cap() {
  const char* v = std::getenv("CAUSEWAY_CACHE_MAX");
  if (!v || !*v) return kDefaultSizeCap;
  return parse_size(v).value_or(kDefaultSizeCap);
}

namespace {

bool same_folder(const Folder& a, const Folder& b) {
  struct stat x {
  }, y{};
  return fstat(a.fd(), &x) == 0 && fstat(b.fd(), &y) == 0 && x.st_dev == y.st_dev &&
         x.st_ino == y.st_ino;
}

}  // namespace

uint64_t enforce_size_cap(const Folder& pool, uint64_t cap, const Folder* keep_dir,
                          std::string_view keep_name) {
  struct Entry {
    int64_t mtime_ns;
    uint64_t size;
    size_t folder;
    std::string name;
  };
  std::vector<Folder> folders;
  std::vector<std::string> folder_names;
  std::vector<Entry> entries;
  uint64_t total = 0;
  for (const FileInfo& d : pool.list()) {
    if (!d.folder || !d.ours || !is_trace_folder_name(d.name)) continue;
    auto sub = pool.sub(d.name, false);
    if (!sub) continue;
    const bool keeping = keep_dir && same_folder(*sub, *keep_dir);
    for (const FileInfo& f : sub->list()) {
      if (!is_entry_name(f.name) || !f.regular || !f.ours) continue;
      total += f.size;
      if (keeping && f.name == keep_name) continue;
      entries.push_back(Entry{f.mtime_ns, f.size, folders.size(), f.name});
    }
    folders.push_back(std::move(*sub));
    folder_names.push_back(d.name);
  }
  if (total <= cap) return 0;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.mtime_ns != b.mtime_ns ? a.mtime_ns < b.mtime_ns : a.name < b.name;
  });
  uint64_t removed = 0;
  std::vector<bool> touched(folders.size());
  for (const Entry& e : entries) {
    if (total <= cap) break;
    if (folders[e.folder].remove_file(e.name)) {
      total -= e.size;
      removed += e.size;
      touched[e.folder] = true;
    }
  }
  // A trace's folder emptied: gone too (rmdir fails while anything is left in it).
  for (size_t i = 0; i < folders.size(); ++i)
    if (touched[i]) pool.remove_empty_folder(folder_names[i]);
  return removed;
}

FolderUsage folder_usage(const Folder& dir) {
  FolderUsage u;
  u.name = dir.path();
  for (const FileInfo& f : dir.list()) {
    if (!is_entry_name(f.name) || !f.regular || !f.ours) continue;
    u.bytes += f.size;
    ++u.entries;
    u.last_used_ns = std::max(u.last_used_ns, f.mtime_ns);
  }
  return u;
}

std::vector<FolderUsage> pool_usage(const Folder& pool) {
  std::vector<FolderUsage> out;
  for (const FileInfo& d : pool.list()) {
    if (!d.folder || !d.ours || !is_trace_folder_name(d.name)) continue;
    auto sub = pool.sub(d.name, false);
    if (!sub) continue;
    FolderUsage u = folder_usage(*sub);
    u.name = d.name;
    out.push_back(std::move(u));
  }
  std::sort(out.begin(), out.end(), [](const FolderUsage& a, const FolderUsage& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
  });
  return out;
}

FolderUsage clean_folder(const Folder& dir, int64_t before_ns) {
  FolderUsage removed;
  removed.name = dir.path();
  remove_old_temporaries(dir);
  for (const FileInfo& f : dir.list()) {
    if (!is_entry_name(f.name) || !f.regular || !f.ours || f.mtime_ns >= before_ns) continue;
    if (dir.remove_file(f.name)) {
      removed.bytes += f.size;
      ++removed.entries;
      removed.last_used_ns = std::max(removed.last_used_ns, f.mtime_ns);
    }
  }
  return removed;
}

}  // namespace cw::cache
