#include "cli/terminal_reporter.h"

#include <fmt/format.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "base/huge_pages.h"

namespace cw::cli {

namespace {

// Seconds since the first reporter was made: only the command line's parse comes before.
double since_start() {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The process's resident memory, in MiB: now, the part of it no file backs (what the
// kernel had to zero for it; the rest is mapped cache files and the program), and the
// most it has been (what /usr/bin/time calls the peak).
struct Resident {
  uint64_t now = 0, anonymous = 0, peak = 0;
};
Resident resident_mib() {
  Resident r;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      uint64_t kib = 0;
      if (std::sscanf(line, "VmHWM: %" SCNu64, &kib) == 1)
        r.peak = kib >> 10;
      else if (std::sscanf(line, "VmRSS: %" SCNu64, &kib) == 1)
        r.now = kib >> 10;
      else if (std::sscanf(line, "RssAnon: %" SCNu64, &kib) == 1)
        r.anonymous = kib >> 10;
    }
    std::fclose(f);
  }
  return r;
}

}  // namespace

bool timings_asked() {
  const char* v = std::getenv("CAUSEWAY_TIMINGS");
  return v && *v && std::string_view(v) != "0";
}

TerminalReporter::TerminalReporter() : timings_(timings_asked()) {
  if (!timings_) return;
  since_start();
  static bool memory_said = false;
  if (restarted_with_huge_pages() && !memory_said) {
    memory_said = true;
    timing(
        "memory: malloc's mappings on huge pages (glibc.malloc.hugetlb=1; "
        "CAUSEWAY_NO_HUGE_PAGES=1 turns it off)");
  }
}

void TerminalReporter::timing(const std::string& what) {
  line_.clear();
  const Resident r = resident_mib();
  std::cerr << fmt::format("causeway: timing: {:8.3f} s {:5} MiB ({:5} anon, peak {:5})  {}\n",
                           since_start(), r.now, r.anonymous, r.peak, what)
            << std::flush;
}

void TerminalReporter::message(const std::string& line) {
  line_.clear();
  if (timings_) {
    timing(line);
    return;
  }
  // One write, flushed: a save in the background (a copy of this process, which ends
  // with _exit) may say something while the command prints.
  std::cerr << (line + "\n") << std::flush;
}

session::ProgressFn TerminalReporter::progress(const std::string& title) {
  line_.set_title(title);
  if (timings_) {
    title_ = title;
    phase_.clear();
    timing(title + ": begins");
    session::ProgressFn show = line_.enabled() ? line_.callback() : session::ProgressFn{};
    return [this, show](std::string_view phase, uint64_t done, uint64_t total) {
      if (phase != phase_) {
        phase_ = phase;
        timing(fmt::format("{}: {}", title_, phase));
      }
      if (show) show(phase, done, total);
    };
  }
  if (!line_.enabled()) return {};
  return line_.callback();
}

void TerminalReporter::progress_done() {
  line_.clear();
  if (timings_ && !title_.empty()) timing(title_ + ": done");
  title_.clear();
}

}  // namespace cw::cli
