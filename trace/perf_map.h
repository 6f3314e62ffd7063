// The perf map a JIT writes for profilers, /tmp/perf-PID.map: one line per compiled
// function, `START SIZE NAME` (START and SIZE in hex, with or without 0x; NAME the rest of
// the line). Node (--perf-basic-prof), Python 3.12+ (-X perf), the JVM (perf-map-agent),
// LuaJIT and others write it; the recorder copies it into the trace (recorder/
// perf_map_capture.h) so that frames in JIT code are named (trace/jit_symbols.h).
//
// The file is written by the recorded program, often another user's, and read by a
// recorder that usually runs as root: every line is checked, a bad one is skipped and
// counted, and nothing in it can make the parser allocate without bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cw {

struct PerfMapEntry {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;
};

// Bounds on what one perf map may give: a longer line is bad (and skipped to its end).
inline constexpr size_t kPerfMapMaxLine = 64 * 1024;

// One line (without its newline) into `out`; false with the reason in `why` when it is
// not `START SIZE NAME`: START or SIZE not hex or too big, a size of 0, a range past the
// end of the address space, no name, a control character in the name (a terminal would
// act on it when the frame is shown). A trailing '\r' is dropped.
bool parse_perf_map_line(std::string_view line, PerfMapEntry& out, std::string* why = nullptr);

// Parses a perf map as it grows: bytes are fed as they are read, whole lines are parsed,
// and a last line without its newline waits for the rest (the runtime may be writing it).
class PerfMapParser {
 public:
  // At most `max_entries` entries are given; the lines after them are not parsed.
  explicit PerfMapParser(size_t max_entries = 1'000'000) : max_entries_(max_entries) {}

  // Parses the whole lines `bytes` completes, appending their entries to `out`.
  void feed(std::string_view bytes, std::vector<PerfMapEntry>& out);

  uint64_t lines() const { return lines_; }  // whole lines parsed (blank ones too)
  uint64_t entries() const { return entries_; }
  uint64_t bad_lines() const { return bad_lines_; }
  uint64_t first_bad_line() const { return first_bad_line_; }  // 1-based; 0 when none
  const std::string& first_bad_reason() const { return first_bad_reason_; }
  // More entries than max_entries: the rest of the file is not read.
  bool full() const { return entries_ >= max_entries_; }

 private:
  void line(std::string_view text, std::vector<PerfMapEntry>& out);
  void bad(std::string reason);

  size_t max_entries_;
  std::string partial_;    // the start of a line whose newline has not come yet
  bool overlong_ = false;  // the current line passed kPerfMapMaxLine: skipped to its end
  uint64_t lines_ = 0;
  uint64_t entries_ = 0;
  uint64_t bad_lines_ = 0;
  uint64_t first_bad_line_ = 0;
  std::string first_bad_reason_;
};

}  // namespace cw
