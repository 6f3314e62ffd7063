#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace cw::cli {

ProgressLine::ProgressLine(std::string title)
    : title_(std::move(title)), enabled_(isatty(STDERR_FILENO) != 0) {}

std::function<void(std::string_view, uint64_t, uint64_t)> ProgressLine::callback() {
  return [this](std::string_view phase, uint64_t done, uint64_t total) {
    // Redraw at most ten times a second: progress must not cost the work it reports.
    auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100) && done != total) return;
    last_ = now;
    shown_ = true;
    if (total > 0)
      fmt::print(stderr, "\r\033[K{}: {} {}/{} ({:.0f}%)", title_, phase, done, total,
                 100.0 * static_cast<double>(done) / static_cast<double>(total));
    else
      fmt::print(stderr, "\r\033[K{}: {}", title_, phase);
    std::fflush(stderr);
  };
}

void ProgressLine::clear() {
  if (!shown_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace cw::cli
