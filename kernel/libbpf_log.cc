#include "kernel/libbpf_log.h"

#include <cstdio>
#include <deque>
#include <mutex>
#include <sstream>

namespace cw::kernel {
namespace {
std::mutex log_mutex;
std::deque<std::string> log_lines;
}  // namespace

int keep_libbpf_message(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  // Formatted whole: a fixed buffer kept a verifier log's first lines and lost its reason.
  va_list again;
  va_copy(again, args);
  const int n = vsnprintf(nullptr, 0, format, again);
  va_end(again);
  if (n <= 0) return 0;
  std::string text(static_cast<size_t>(n), '\0');
  vsnprintf(text.data(), text.size() + 1, format, args);
  std::lock_guard lock(log_mutex);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    log_lines.push_back(std::move(line));
    if (log_lines.size() > kLibbpfLogLines) log_lines.pop_front();
  }
  return 0;
}

std::string take_libbpf_log() {
  std::lock_guard lock(log_mutex);
  std::string joined;
  for (const auto& line : log_lines) joined += "\n  " + line;
  log_lines.clear();
  return joined;
}

}  // namespace cw::kernel
