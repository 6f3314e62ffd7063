// Copies the perf maps of recorded processes (/tmp/perf-PID.map, trace/perf_map.h) into the
// trace as JIT symbols while recording: a runtime appends to its map as it compiles, may
// delete it when it exits, and the trace may be read on another machine.
//
// The recorder usually runs as root, and /tmp is everyone's: a file is read only when it is
// a regular file reached without following a symbolic link (O_NOFOLLOW; O_NONBLOCK, so a
// FIFO put there cannot block the recorder), owned by one of the process's uids (its
// /proc/PID/status), and only its first 64 MiB and first million entries (four million in
// all). Each poll reads
// what the files gained since the last; a file whose process has exited is read on only if
// it is the very file already checked while the process lived.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "trace/perf_map.h"
#include "trace/trace.h"

namespace cw {

struct CapturedJitSymbol {
  Pid pid = 0;
  uint64_t ts = 0;  // CLOCK_MONOTONIC ns: when the line was read
  uint64_t start = 0, size = 0;
  std::string name;
};

struct PerfMapCaptureOptions {
  std::string dir = "/tmp";         // where runtimes write perf-PID.map
  std::string proc_root = "/proc";  // where the processes' uids are read
  uint64_t max_bytes = 64u << 20;   // read of one file, at most
  size_t max_entries = 1'000'000;   // entries of one file, at most
  // Entries of all files, about (checked per piece read): a system-wide recording of many
  // JITs keeps the recorder's memory bounded.
  uint64_t max_total_entries = 4'000'000;
};

class PerfMapCapture {
 public:
  // `recorded` says whether process `pid`'s perf map is wanted (it is recorded).
  PerfMapCapture(PerfMapCaptureOptions options, std::function<bool(Pid)> recorded);

  // Reads what the perf maps in the folder of recorded processes gained since the last
  // poll, stamped `now`.
  void poll(uint64_t now, std::vector<CapturedJitSymbol>& out);
  // The same for process `pid` alone (one about to be reaped, while its uid can be read).
  void read(Pid pid, uint64_t now, std::vector<CapturedJitSymbol>& out);

  // What was refused or cut short since the last call, one note each, saying where
  // ("/tmp/perf-9.map: owned by uid 1000, not by a uid of process 9 (0); not read").
  std::vector<std::string> take_notes();
  // Per file with lines that were not understood: "/tmp/perf-9.map:17: 3 lines not
  // understood, skipped (the first: the size is not a hex number)".
  std::vector<std::string> bad_line_notes() const;

  uint64_t symbols() const { return symbols_; }  // entries read, in all files
  size_t files_read() const;                     // perf maps that gave at least one entry

  std::string path_of(Pid pid) const;

 private:
  struct File {
    bool opened = false;  // checked and read at least once: dev, ino and owner hold
    bool done = false;    // refused, or read up to a bound: never read again
    dev_t dev = 0;
    ino_t ino = 0;
    uid_t owner = 0;
    uint64_t offset = 0;  // bytes read so far
    PerfMapParser parser;
    uint64_t entries = 0;
  };
  void read_file(Pid pid, File& file, uint64_t now, std::vector<CapturedJitSymbol>& out);
  void refuse(File& file, std::string note);

  PerfMapCaptureOptions options_;
  std::function<bool(Pid)> recorded_;
  std::map<Pid, File> files_;
  std::vector<std::string> notes_;
  uint64_t symbols_ = 0;
  bool all_full_ = false;  // max_total_entries reached: nothing more is read
};

// The uids of process `pid` (real, effective, saved, filesystem) from PROC_ROOT/PID/status;
// empty when it cannot be read (the process is gone).
std::vector<uid_t> process_uids(const std::string& proc_root, Pid pid);

// Interns the names and appends one JitSymbol per entry, in the order given.
void add_jit_symbols(Trace& trace, const std::vector<CapturedJitSymbol>& symbols);

}  // namespace cw
