#include "cli/cache_session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "engine/cache/cache.h"

namespace cw::cli {

CacheSession CacheSession::open(const std::string& trace_path, const std::string& format,
                                bool no_cache) {
  CacheSession s;
  s.trace_path = trace_path;
  s.format = format;
  const char* env = std::getenv("CAUSEWAY_CACHE");
  s.wait_for_saves = env && std::string_view(env) == "verbose";
  s.verbose = isatty(STDERR_FILENO) != 0 || s.wait_for_saves;
  if (no_cache || !cache::enabled_by_environment()) return s;
  auto key = cache::trace_key(trace_path);
  if (!key) return s;
  std::string why;
  auto dir = cache::cache_dir(trace_path, &why);
  if (!dir) {
    s.note(
        fmt::format("no cache folder of this user's beside the trace or under ~/.cache ({}); "
                    "not caching",
                    why));
    return s;
  }
  if (const char* max = std::getenv("CAUSEWAY_CACHE_MAX"); max && *max && !cache::parse_size(max))
    s.note(
        fmt::format("CAUSEWAY_CACHE_MAX={} is not a size (bytes, or a number with K, M, G or "
                    "T); the cap is the default",
                    max));
  s.trace_key = *key;
  s.dir = *dir;
  s.on = true;
  return s;
}

void CacheSession::note(const std::string& text) const {
  // One write: a background save may note while the command prints.
  if (verbose) std::cerr << "causeway: cache: " + text + "\n";
}

void CacheSession::in_background(const std::function<std::string()>& save) const {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    note(save());
    return;
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    note(save());
    return;
  }
  if (child == 0) {
    // A grandchild, so nobody has to reap it; in a session of its own, so the Ctrl-C
    // that ends the command does not cut the save short. It holds the pipe's write end
    // until it exits: the command's wait() reads to the end.
    close(fds[0]);
    if (fork() != 0) _exit(0);
    setsid();
    std::string text = save();
    if (wait_for_saves && !text.empty()) {
      std::string line = "causeway: cache: " + text + "\n";
      [[maybe_unused]] ssize_t n = write(STDERR_FILENO, line.data(), line.size());
    }
    _exit(0);
  }
  close(fds[1]);
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (wait_for_saves)
    saving_->push_back(fds[0]);
  else
    close(fds[0]);
}

void CacheSession::wait() const {
  for (int fd : *saving_) {
    char buf[64];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0 || (n < 0 && errno == EINTR)) continue;
      break;  // the end: the saving process exited
    }
    close(fd);
  }
  saving_->clear();
}

CLI::Option* add_no_cache_option(CLI::App* cmd, bool& no_cache) {
  return cmd->add_flag("--no-cache", no_cache,
                       "neither use nor write the cache beside the trace of its decoded events "
                       "and built graphs (TRACE.cwcache/, docs/cache.md; also "
                       "CAUSEWAY_CACHE=off)");
}

}  // namespace cw::cli
