// A one-line progress display on stderr for long work, shown only in a terminal.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace cw::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string title);
  bool enabled() const { return enabled_; }
  // What the line is about from now on (its callbacks keep working).
  void set_title(std::string title) { title_ = std::move(title); }
  // A callback for engine::BuildOptions::progress: (phase, done, total).
  std::function<void(std::string_view, uint64_t, uint64_t)> callback();
  void clear();  // erases the line

 private:
  std::string title_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace cw::cli
