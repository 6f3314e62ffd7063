#include "cli/pack_watch.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace cw::cli {

namespace {

// Saving by rename shows as IN_MOVED_TO, in place as IN_CLOSE_WRITE; IN_CREATE and
// IN_DELETE/IN_MOVED_FROM catch packs and folders that appear or go.
constexpr uint32_t kMask =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ONLYDIR;

}  // namespace

PackWatcher::PackWatcher() {
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "inotify");
}

PackWatcher::~PackWatcher() {
  if (fd_ >= 0) close(fd_);
}

bool PackWatcher::add_dir(const std::string& dir, bool whole, const std::string& name) {
  int wd = inotify_add_watch(fd_, dir.c_str(), kMask);
  if (wd < 0) return false;
  // The same folder reached twice (a pack file beside a pack folder) shares one watch.
  Dir& d = dirs_[wd];
  d.path = dir;
  d.whole = d.whole || whole;
  if (!name.empty() && std::find(d.names.begin(), d.names.end(), name) == d.names.end())
    d.names.push_back(name);
  return true;
}

size_t PackWatcher::watch(const std::vector<std::string>& paths) {
  for (const auto& [wd, dir] : dirs_) inotify_rm_watch(fd_, wd);
  dirs_.clear();
  for (const auto& given : paths) {
    fs::path p = fs::absolute(fs::path(given)).lexically_normal();
    if (p.has_filename() == false) p = p.parent_path();  // "dir/" names dir
    add_dir(p.parent_path().string(), false, p.filename().string());
    std::error_code ec;
    if (!fs::is_directory(p, ec)) continue;
    add_dir(p.string(), true, {});
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec)) add_dir(it->path().string(), true, {});
  }
  return dirs_.size();
}

void PackWatcher::drain(std::vector<std::string>& changed) {
  alignas(inotify_event) char buf[16384];
  for (;;) {
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) return;  // EAGAIN: nothing more pending
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      auto it = dirs_.find(ev->wd);
      if (it == dirs_.end() || ev->len == 0) continue;
      const Dir& d = it->second;
      const std::string name = ev->name;
      const bool listed = std::find(d.names.begin(), d.names.end(), name) != d.names.end();
      const bool in_pack =
          d.whole && ((ev->mask & IN_ISDIR) != 0 || fs::path(name).extension() == ".cw");
      if (!listed && !in_pack) continue;  // an editor's swap or backup file, say
      std::string path = (fs::path(d.path) / name).string();
      if (std::find(changed.begin(), changed.end(), path) == changed.end()) changed.push_back(path);
    }
  }
}

std::optional<std::vector<std::string>> PackWatcher::wait(int stop_fd,
                                                          std::chrono::milliseconds settle) {
  std::vector<std::string> changed;
  for (;;) {
    pollfd fds[2] = {{stop_fd, POLLIN, 0}, {fd_, POLLIN, 0}};
    // Until the first change, wait as long as it takes; then until a quiet `settle`.
    const int timeout = changed.empty() ? -1 : static_cast<int>(settle.count());
    int r = poll(fds, 2, timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    if (fds[0].revents != 0) return std::nullopt;
    if (r == 0) return changed;  // quiet for `settle` after a change
    drain(changed);
  }
}

}  // namespace cw::cli
