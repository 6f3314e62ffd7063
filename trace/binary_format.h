// The binary trace format (docs/trace-format.md): a header, then checksummed chunks so
// that a truncated or corrupted file loses only its damaged chunks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "trace/trace.h"

namespace cw {

// A file that cannot be read at all: not a trace, or from a newer major version.
struct TraceFormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A write that failed part-way (a full disk, an I/O error): what was written stays a
// readable trace up to its last whole chunk, without the end chunk, so readers say it is
// incomplete. `bytes_written` is that length.
struct TraceWriteError : std::runtime_error {
  TraceWriteError(const std::string& message, std::string path, uint64_t bytes_written, int error)
      : std::runtime_error(message),
        path(std::move(path)),
        bytes_written(bytes_written),
        error(error) {}
  std::string path;
  uint64_t bytes_written = 0;
  int error = 0;  // errno
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
  bool perf_script = false;        // read from `perf script` output (trace/perf_script.h)
  bool clean() const { return skipped.empty(); }
};

// The on-disk layout, for tools and tests that walk chunks themselves.
namespace binary_format {
inline constexpr char kFileMagic[8] = {'C', 'W', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr uint32_t kChunkMagic = 0x4b435743;  // "CWCK" read as little-endian u32
inline constexpr uint64_t kHeaderSize = 32;
inline constexpr uint64_t kChunkHeaderSize = 24;  // magic, type, payload size, XXH3-64
// Versions. A file without compressed chunks is written as format 1.2 (readable by every
// 1.x reader); a file with them as 2.0, so a 1.x reader refuses it by its major version
// ("newer than this causeway reads") instead of skipping every compressed chunk as an
// unknown type and showing an empty trace (docs/trace-format.md, "Compression").
inline constexpr uint32_t kPlainMajor = 1, kPlainMinor = 2;
// A file with events packed before compression (codec 2) as 3.0, so a 2.x reader refuses
// it rather than skip every events chunk as one of an unknown codec.
inline constexpr uint32_t kMajor = 3, kMinor = 0;  // the newest this reader reads
inline constexpr uint32_t kZstdOnlyMajor = 2;      // compressed chunks, codec 1 only
// Set in a chunk's type field: its payload is compressed (a compressed-chunk header, the
// raw prefix, one zstd frame, zero padding to 8 bytes); the low bits are the chunk type.
inline constexpr uint32_t kCompressedFlag = 0x80000000u;
inline constexpr uint64_t kCompressedHeaderSize = 16;  // u32 codec, u32 prefix, u64 size
inline constexpr uint32_t kCodecZstd = 1;
// An events chunk's payload after its 16-byte counts, packed (trace/packed_events.h), then
// one zstd frame; the chunk declares the size of the plain payload it unpacks to.
inline constexpr uint32_t kCodecZstdPackedEvents = 2;
// The largest uncompressed payload a compressed chunk may declare: the reader allocates
// this much at most per chunk (the writer stores bigger payloads uncompressed).
inline constexpr uint64_t kMaxCompressedPayload = 64u << 20;
enum class ChunkType : uint32_t {
  Schema = 1,
  Strings = 2,
  Stacks = 3,
  Processes = 4,
  Threads = 5,
  Events = 6,
  Lost = 7,
  End = 8,
  Maps = 9,     // since format 1.1
  Losses = 10,  // since format 1.2: LossRecord (an older reader skips it, with a note)
  // JitSymbol, from perf maps: optional, in files of any version (docs/trace-format.md); a
  // reader without it skips it with a note and leaves JIT frames unnamed.
  JitSymbols = 11,
};
}  // namespace binary_format

enum class TraceCompression : uint8_t { None, Zstd };

struct TraceWriterOptions {
  size_t events_per_chunk = 65536;  // a damaged chunk loses at most this many events
  // Chunk payloads compressed with zstd at `level` (1 fastest .. 22 smallest): a trace
  // shrinks about 4.5-fold at level 3. None writes format 1.2, which older readers read.
  TraceCompression compression = TraceCompression::Zstd;
  int level = 3;
};

// "none", "zstd" (level 3) or "zstd=LEVEL" (1..22) into `options`; else false, with the
// reason in `why`.
bool parse_trace_compression(std::string_view text, TraceWriterOptions& options,
                             std::string* why = nullptr);

// Streams a trace to disk in chunks (the recorder and the generator never hold it all).
// Strings, stacks, processes and threads are written before the events that use them.
class TraceWriter {
 public:
  // Creates `path` with mode 0600 (truncating). Throws std::runtime_error when it cannot
  // be created, TraceWriteError when a write fails; after that the writer is spent:
  // append() throws the same again and close() only closes the file.
  explicit TraceWriter(const std::string& path, const Schema& schema = Schema::builtin());
  TraceWriter(const std::string& path, const Schema& schema, TraceWriterOptions options);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Writes everything in `trace` not yet written (new strings, stacks, threads,
  // processes, events from `events_from`, lost records), as one or more chunks.
  void append(const Trace& trace, size_t events_from = 0);
  void close();                    // writes the end chunk; called by the destructor if needed
  uint64_t bytes_written() const;  // whole chunks (and the header) on disk so far

 private:
  struct State;
  State* state_;
};

void write_trace(const Trace& trace, const std::string& path);
void write_trace(const Trace& trace, const std::string& path, TraceWriterOptions options);

// Reads a whole binary trace. Throws TraceFormatError when nothing can be read, or when
// the file contradicts itself (a thread put in another process with no fork making it so,
// trace/thread_moves.h): the message names the record's byte offset. What its compressed
// chunks decompress to is bounded in total (trace/decompression_limit.h).
ReadReport read_trace(const std::string& path, Trace& out);
ReadReport read_trace_bytes(std::string_view bytes, Trace& out, const std::string& name);

// The forms load_trace reads. Auto tells them apart by content: the binary form starts
// with its magic, the text form with "causeway-trace", and `perf script` output with an
// event line (trace/perf_script.h).
enum class TraceInputFormat : uint8_t { Auto, Binary, Text, PerfScript };
// "auto", "binary", "text", "perf-script"; nullopt for anything else.
std::optional<TraceInputFormat> parse_trace_input_format(std::string_view name);

// Reads any form, by content unless `format` says which.
ReadReport load_trace(const std::string& path, Trace& out,
                      TraceInputFormat format = TraceInputFormat::Auto);

}  // namespace cw
