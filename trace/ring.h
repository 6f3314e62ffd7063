// An always-on recording kept in a ring of trace files bounded in bytes: the newest
// events stay, the oldest files are deleted to make room (docs/trace-format.md, "Ring of
// files"). Every file repeats all metadata, so each one can be read on its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trace/binary_format.h"
#include "trace/trace.h"

namespace cw {

struct RingOptions {
  std::string dir;                  // created 0700 if missing
  uint64_t max_bytes = 2ull << 30;  // the whole ring on disk
  uint32_t files = 16;              // slots; each file is closed after max_bytes / files
  TraceWriterOptions writer;        // each file's (zstd-compressed by default)
};

struct RingStats {
  uint32_t files = 0;                     // files currently holding data
  uint64_t bytes = 0;                     // on disk now
  uint64_t events_written = 0;            // since the ring was opened
  uint64_t events_overwritten = 0;        // in files the ring reused (dropped to stay in bounds)
  uint64_t oldest_ts = 0, newest_ts = 0;  // of the events still kept
};

// Writes a ring. Bound: when append() returns, the ring's files hold at most max_bytes,
// unless the ring is down to the file being written (one append plus all the metadata
// alone exceed max_bytes). While an append is being written the total may exceed the
// bound by that append's bytes. A directory that already holds a ring (the recorder
// restarted, e.g. after a crash) is continued: its files count against the bound.
class RingWriter {
 public:
  // Throws std::runtime_error with the path on I/O errors, and when another writer holds
  // the directory; std::invalid_argument when max_bytes or files is 0.
  explicit RingWriter(RingOptions options, const Schema& schema = Schema::builtin());
  ~RingWriter();
  RingWriter(const RingWriter&) = delete;
  RingWriter& operator=(const RingWriter&) = delete;

  // Like TraceWriter::append. Before writing, a file that has reached max_bytes / files
  // is closed and the oldest files are deleted down to files - 1; the new file starts with
  // ALL metadata of `trace` (strings, stacks, processes, threads, maps, lost). `trace`'s
  // events and values may be cleared between appends; its metadata must only grow.
  void append(const Trace& trace, size_t events_from = 0);
  void close();  // ends the current file and saves the ring's state; idempotent
  RingStats stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Reads every file of a ring, oldest first, into one trace (metadata merged: threads,
// processes and maps by id — later files win; events concatenated and sorted by ts; lost
// records kept once). Damaged files or chunks are skipped and reported like read_trace
// does, with the file name in the reason; events the ring dropped are reported in notes.
// Throws TraceFormatError when the directory holds no ring.
ReadReport read_ring(const std::string& dir, Trace& out);

// Whether `path` is a folder holding a ring: ring files (ring-<generation>.cwt).
bool is_ring_dir(const std::string& path);

// The ring's file names: ring-<generation, 10 digits>.cwt, oldest first by name.
std::string ring_file_name(uint64_t generation);

}  // namespace cw
