// The binary trace format (docs/trace-format.md): a header, then checksummed chunks so
// that a truncated or corrupted file loses only its damaged chunks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/trace.h"

namespace cw {

// A file that cannot be read at all: not a trace, or from a newer major version.
struct TraceFormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SkippedRange {
  uint64_t offset = 0;  // byte offset in the file
  uint64_t size = 0;    // bytes skipped
  std::string reason;   // "checksum mismatch in events chunk", "truncated chunk", ...
};

struct ReadReport {
  uint32_t major = 0, minor = 0;
  uint64_t chunks_read = 0;
  uint64_t events_read = 0;
  std::vector<SkippedRange> skipped;
  std::vector<std::string> notes;  // e.g. unknown chunk types from a newer minor version
  bool clean() const { return skipped.empty(); }
};

// Streams a trace to disk in chunks (the recorder and the generator never hold it all).
// Strings, stacks, processes and threads are written before the events that use them.
class TraceWriter {
 public:
  // Creates `path` with mode 0600 (truncating). Throws std::runtime_error on I/O errors.
  explicit TraceWriter(const std::string& path, const Schema& schema = Schema::builtin());
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Writes everything in `trace` not yet written (new strings, stacks, threads,
  // processes, events from `events_from`, lost records), as one or more chunks.
  void append(const Trace& trace, size_t events_from = 0);
  void close();  // writes the end chunk; called by the destructor if needed

 private:
  struct State;
  State* state_;
};

void write_trace(const Trace& trace, const std::string& path);

// Reads a whole binary trace. Throws TraceFormatError when nothing can be read.
ReadReport read_trace(const std::string& path, Trace& out);
ReadReport read_trace_bytes(std::string_view bytes, Trace& out, const std::string& name);

// Reads either form, by content (text traces start with "causeway-trace").
ReadReport load_trace(const std::string& path, Trace& out);

}  // namespace cw
