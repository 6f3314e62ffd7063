#include "engine/session/cache_session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <thread>

#include "engine/cache/cache.h"

namespace cw::session {
namespace {

// Whether the trace has a cache folder already, beside it or in the user's cache folder.
bool cache_folder_exists(const std::string& trace_path) {
  struct stat st {};
  if (lstat(cache::beside_path(trace_path).c_str(), &st) == 0) return true;
  const auto pool = cache::user_cache_folder(false);
  return pool && pool->sub(cache::trace_folder_name(trace_path), false).has_value();
}

}  // namespace

CacheSession CacheSession::open(const std::string& trace_path, const std::string& format, Use use,
                                Reporter* reporter) {
  CacheSession s;
  s.trace_path = trace_path;
  s.format = format;
  s.reporter = reporter;
  s.wait_for_saves = use.wait_for_saves;
  s.verbose = use.verbose || use.wait_for_saves;
  if (use.off || !cache::enabled_by_environment()) return s;
  auto key = cache::trace_key(trace_path);
  if (!key) return s;
  std::string why;
  const bool existed = cache_folder_exists(trace_path);
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
  if (const char* min = std::getenv("CAUSEWAY_CACHE_EVENTS_MIN");
      min && *min && !cache::parse_size(min))
    s.note(fmt::format(
        "CAUSEWAY_CACHE_EVENTS_MIN={} is not a size (bytes, or a number with K, M, G or T); "
        "events are kept from the default, {} MiB",
        min, cache::kDefaultEventsMin >> 20));
  s.trace_key = *key;
  s.dir = *dir;
  s.on = true;
  s.made_folder = !existed;
  return s;
}

void CacheSession::discard_made_folder() {
  if (!on) return;
  on = false;
  if (!made_folder || !dir.list().empty()) return;
  if (const cache::Folder* pool = dir.pool())
    pool->remove_empty_folder(cache::trace_folder_name(trace_path));
  else
    rmdir(dir.path().c_str());  // TRACE.cwcache beside the trace: removed only when empty
}

namespace {

// "causeway: cache: " before each line of `text`.
void say_lines(Reporter& reporter, std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    reporter.message("causeway: cache: " + std::string(text.substr(0, end)));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

void CacheSession::note(const std::string& text) const {
  if (verbose && reporter) say_lines(*reporter, text);
}

bool CacheSession::keeps_events(const Trace& trace, std::string_view entry,
                                std::string_view what) const {
  if (cache::keeps_trace_arrays(trace.events.size(), trace.values.size())) return true;
  const uint64_t bytes =
      trace.events.size() * sizeof(Event) + trace.values.size() * sizeof(uint64_t);
  note(
      fmt::format("{} not saved: {:.1f} MiB of events decoded, under the {:.1f} MiB from "
                  "which they are kept (CAUSEWAY_CACHE_EVENTS_MIN)",
                  what, static_cast<double>(bytes) / (1 << 20),
                  static_cast<double>(cache::events_min()) / (1 << 20)));
  // This run did not use the entry there (of another content or build, or damaged), and
  // will not replace it: it would stay until the cache is cleaned.
  if (dir.remove_file(entry)) note(fmt::format("{} removed", dir.shown(entry)));
  return false;
}

void CacheSession::in_background(const std::function<std::string()>& save) const {
  // What this process has written but not flushed yet would be written by the copy too
  // (writing to std::cerr flushes std::cout): a report printed before a save came out twice.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    note(save());
    return;
  }
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    note(save());
    return;
  }
  if (child == 0) {
    // In a session of its own, so the Ctrl-C that ends the command does not cut the save
    // short. It holds the pipe's write end until it exits: the command's wait() reads to
    // the end. (A thread of the command reaps it; a command that exits first leaves it to
    // init. A copy of a copy, reaped by nobody, cost the command the second fork's time:
    // 12 ms at 1.5 GB.)
    close(fds[0]);
    setsid();
    std::string text = save();
    if (wait_for_saves && reporter) say_lines(*reporter, text);
    _exit(0);
  }
  close(fds[1]);
  // Waits for the copy's end on a thread of its own, which holds no lock a later fork
  // could copy held: a session that runs on (--watch) keeps no ended copy as a zombie.
  std::thread([child] {
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
  }).detach();
  if (wait_for_saves)
    saving_->push_back(fds[0]);
  else
    close(fds[0]);
}

void CacheSession::queue(std::function<std::string()> save) const {
  queued_->push_back(std::move(save));
}

void CacheSession::wait_for_live_saves(const std::vector<std::string_view>& prefixes,
                                       std::string_view what) const {
  if (!cache::being_saved_by_live_run(dir, prefixes)) return;
  note(fmt::format("waiting for another run's {} save to end (at most 20 s)", what));
  for (int i = 0; i < 1000 && cache::being_saved_by_live_run(dir, prefixes); ++i) usleep(20'000);
}

void CacheSession::save_queued(const std::function<std::string()>& save) const {
  if (queued_->empty() && !save) return;
  std::vector<std::function<std::string()>> saves = std::move(*queued_);
  queued_->clear();
  in_background([&] {
    std::string notes;
    for (const auto& f : saves) {
      if (!notes.empty()) notes += '\n';
      notes += f();
    }
    if (save) {
      if (!notes.empty()) notes += '\n';
      notes += save();
    }
    return notes;
  });
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

}  // namespace cw::session
