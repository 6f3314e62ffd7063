// Executable memory maps of processes and the build ids of the mapped files, recorded so
// that stacks can be symbolised later (trace/symbolize.h), even for processes that
// exited before anyone could read their /proc/PID/maps.
//
// Two sources, used together by a recorder:
//   - a snapshot of /proc/PID/maps for processes already running;
//   - perf's mmap records (PERF_RECORD_MMAP2, system-wide), for every mapping made while
//     recording, with the build id the kernel read from the mapped file.
//
// Order for a recorder, so no mapping falls between the two: construct MapsCapture (mmaps
// are recorded from then on), then snapshot() the running processes, then attach the
// eBPF probes (events stamped after both); poll() every ~100 ms (64 pages per CPU hold
// ~2000 mmaps) and once more after detaching; add_maps() each batch to the trace before
// the writer's next append.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "trace/elf_file.h"  // read_build_id
#include "trace/trace.h"

namespace cw {

struct CapturedMap {
  uint32_t pid = 0;
  uint64_t ts = 0;  // CLOCK_MONOTONIC ns: when it was mapped (or seen by a snapshot)
  uint64_t start = 0, end = 0, pgoff = 0;
  std::string path;
  std::string build_id;  // lowercase hex; empty when the file has none or cannot be read
};

// Build ids read from files, once per file (device and inode identify it, whatever path
// it is reached by).
class BuildIdCache {
 public:
  // Reads the first of `open_paths` that yields a build id (/proc/PID/map_files/...
  // opens the mapped file even when it was deleted or replaced since, but needs root).
  // An inode of 0 is not cached.
  std::string get(const std::vector<std::string>& open_paths, uint64_t device, uint64_t inode);

 private:
  std::map<std::pair<uint64_t, uint64_t>, std::string> by_file_;
};

uint64_t monotonic_now_ns();

// Executable file mappings (r-xp) of the processes `pids` (every process when empty) as
// they are now. Processes that exit while being read are left out. No privileges are
// needed for one's own processes; other users' need root.
std::vector<CapturedMap> snapshot_maps(const std::vector<Pid>& pids, BuildIdCache& build_ids);

struct MapsCaptureOptions {
  // Processes whose maps are kept, with the children they fork while recording; empty
  // keeps every process.
  std::vector<Pid> pids;
  size_t ring_pages = 64;  // data pages per CPU ring buffer; a power of two
};

// Records executable mmaps system-wide from now on: one perf dummy event per online CPU
// with mmap records. Throws std::runtime_error saying what is missing when the kernel
// refuses (e.g. "perf_event_open: Permission denied; recording memory maps needs root or
// CAP_PERFMON").
class MapsCapture {
 public:
  explicit MapsCapture(MapsCaptureOptions options = {});
  ~MapsCapture();
  MapsCapture(const MapsCapture&) = delete;
  MapsCapture& operator=(const MapsCapture&) = delete;

  // Maps of running processes now: `pids`, or the options' pids, or all when both are
  // empty.
  std::vector<CapturedMap> snapshot(const std::vector<Pid>& pids = {});

  // Appends the executable mappings recorded since the last poll, in time order, and
  // returns how many perf records the kernel dropped meanwhile (rings full: poll more
  // often or use bigger rings).
  uint64_t poll(std::vector<CapturedMap>& out);

  uint64_t lost_total() const { return lost_total_; }
  size_t cpu_count() const { return rings_.size(); }
  // False when the kernel ignored attr.build_id (before 5.12): build ids are then read
  // from the files at poll time.
  bool kernel_build_ids() const { return kernel_build_ids_; }

 private:
  struct Ring;
  void read_ring(Ring& ring);
  void handle_record(const uint8_t* record, size_t size, std::vector<CapturedMap>& out,
                     uint64_t& lost);
  bool wanted(Pid pid) const { return all_pids_ || pids_.count(pid) != 0; }

  std::vector<std::unique_ptr<Ring>> rings_;
  std::set<Pid> pids_;
  bool all_pids_ = true;
  bool kernel_build_ids_ = true;
  uint64_t lost_total_ = 0;
  BuildIdCache build_ids_;
  std::vector<uint8_t> pending_;                         // records read by this poll
  std::vector<std::pair<uint64_t, size_t>> pending_at_;  // (time, offset in pending_)
};

// Interns the strings and appends one MapRecord per map (in the order given; the writer
// streams what was appended since its last append, readers restore (pid, ts) order).
void add_maps(Trace& trace, const std::vector<CapturedMap>& maps);

}  // namespace cw
