// Reading the binary trace format: the header, then each chunk found whole (its checksum
// verified, or the reader resynchronises past it) and handed to the chunk decoder in file
// order, while compressed chunks further on are decompressed on other threads.
#include <fmt/format.h>
#include <sys/mman.h>
#include <xxhash.h>

#include <cstdlib>
#include <cstring>
#include <deque>

#include "trace/binary_format.h"
#include "trace/binary_format_chunk_decoder.h"
#include "trace/binary_format_inflater.h"
#include "trace/binary_format_internal.h"
#include "trace/decompression_limit.h"

namespace cw::binary_format {

namespace {

std::string_view chunk_type_name(uint32_t type) {
  switch (static_cast<ChunkType>(type)) {
    case ChunkType::Schema: return "schema";
    case ChunkType::Strings: return "strings";
    case ChunkType::Stacks: return "stacks";
    case ChunkType::Processes: return "processes";
    case ChunkType::Threads: return "threads";
    case ChunkType::Events: return "events";
    case ChunkType::Lost: return "lost";
    case ChunkType::End: return "end";
    case ChunkType::Maps: return "maps";
    case ChunkType::Losses: return "losses";
    case ChunkType::JitSymbols: return "jit symbols";
  }
  return {};
}

std::string describe_chunk(uint32_t type) {
  if (type & kCompressedFlag) {
    std::string_view name = chunk_type_name(type & ~kCompressedFlag);
    return name.empty()
               ? fmt::format("compressed chunk of unknown type {}", type & ~kCompressedFlag)
               : fmt::format("compressed {} chunk", name);
  }
  std::string_view name = chunk_type_name(type);
  return name.empty() ? fmt::format("chunk of unknown type {}", type)
                      : fmt::format("{} chunk", name);
}

// Faulting in a gigabyte of fresh 4 KiB pages is most of a big read's time; transparent
// huge pages cut the number of faults 512-fold where the kernel allows them.
void prefer_huge_pages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = 2u << 20;
  if (bytes < 4 * kHuge) return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

class Reader {
 public:
  // `done_before(offset)` is told when no byte before `offset` will be needed again, so a
  // mapped file can drop those pages instead of holding the whole file resident.
  Reader(std::string_view bytes, Trace& out, const std::string& name,
         std::function<void(uint64_t)> done_before = {})
      : data_(reinterpret_cast<const uint8_t*>(bytes.data())),
        size_(bytes.size()),
        out_(out),
        name_(name),
        done_before_(std::move(done_before)) {}

  ReadReport read() {
    read_header();
    ChunkDecoder decoder(out_, notes_, size_);
    reserve_from_headers();

    // Chunks are verified a few ahead of the one being read, so compressed ones are
    // decompressed on other threads meanwhile; they are still read in file order.
    struct Ahead {
      uint64_t pos = 0, end = 0;
      std::string problem;
      std::shared_ptr<InflateJob> job;  // a compressed chunk's
    };
    constexpr size_t kMaxAhead = 16;
    constexpr uint64_t kMaxAheadBytes = 64u << 20;  // decompressed, in flight
    std::deque<Ahead> ahead;
    uint64_t scan = kHeaderSize, ahead_bytes = 0;
    // Every chunk's decompressed size counts against one total for the file, checked
    // before anything is allocated for it (docs/trace-format.md, "Compression").
    const uint64_t limit = decompression_limit(size_);
    uint64_t decompressed = 0, chunks_seen = 0;
    for (;;) {
      while (scan < size_ && ahead.size() < kMaxAhead && ahead_bytes < kMaxAheadBytes) {
        Ahead a;
        a.pos = scan;
        a.problem = check_chunk(scan);
        if (a.problem.empty()) {
          ++chunks_seen;
          const uint32_t type = load<uint32_t>(data_ + scan + 4);
          uint64_t size = load<uint64_t>(data_ + scan + 8);
          a.end = scan + kChunkHeaderSize + size;
          if (type & kCompressedFlag) {
            const uint64_t declared = size >= kCompressedHeaderSize
                                          ? load<uint64_t>(data_ + scan + kChunkHeaderSize + 8)
                                          : 0;
            // A size past the per-chunk cap is refused by submit(), for that chunk alone.
            if (declared <= kMaxCompressedPayload && declared > limit - decompressed) {
              a.problem = over_limit(type, chunks_seen, decompressed + declared, limit);
              a.end = scan = size_;
              stopped_at_limit_ = true;
              ahead.push_back(std::move(a));
              break;
            }
            a.job = inflater_.submit(data_ + scan + kChunkHeaderSize, size);
            ahead_bytes += a.job->declared;
            decompressed += a.job->declared;
          }
        } else {
          a.end = resynchronise(scan + 1);
        }
        scan = a.end;
        ahead.push_back(std::move(a));
      }
      if (ahead.empty()) break;
      Ahead a = std::move(ahead.front());
      ahead.pop_front();
      if (a.job) ahead_bytes -= a.job->declared;
      if (!a.problem.empty()) {
        report_.skipped.push_back(SkippedRange{a.pos, a.end - a.pos, std::move(a.problem)});
      } else {
        read_chunk(decoder, a.pos, load<uint32_t>(data_ + a.pos + 4),
                   data_ + a.pos + kChunkHeaderSize, a.end - a.pos - kChunkHeaderSize, a.job.get());
      }
      if (done_before_) done_before_(a.end);
    }
    if (!seen_end_ && !stopped_at_limit_)
      notes_.add("no end chunk: the recording did not finish, or the file was cut short");
    decoder.finish(name_);
    return std::move(report_);
  }

 private:
  [[noreturn]] void refuse(const std::string& message) {
    throw TraceFormatError(fmt::format("{}: {}", name_, message));
  }

  // Why the compressed chunk `ordinal` (1 the first chunk of the file), whose type is
  // `type`, is not read: it would take the file's decompressed total to `total`.
  std::string over_limit(uint32_t type, uint64_t ordinal, uint64_t total, uint64_t limit) const {
    const char* env = std::getenv("CAUSEWAY_MAX_DECOMPRESSED");
    std::string why =
        env && *env ? std::string("as CAUSEWAY_MAX_DECOMPRESSED sets")
                    : fmt::format(
                          "the larger of 64 MiB and {} times the file's {} bytes, at most 16 GiB; "
                          "CAUSEWAY_MAX_DECOMPRESSED=SIZE sets another",
                          kMaxExpansion, size_);
    return fmt::format(
        "chunk {} of the file ({}) would take the trace's decompressed total to {} bytes, "
        "past the limit of {} bytes ({}): the chunks before it are kept, it and the rest of "
        "the file are not read",
        ordinal, describe_chunk(type), total, limit, why);
  }

  void read_header() {
    // A recorder killed before its first write leaves an empty file; say so, not "junk".
    if (size_ == 0) refuse("empty file (0 bytes): not a causeway trace");
    if (size_ < 8 || std::memcmp(data_, kFileMagic, 8) != 0)
      refuse("not a causeway trace (no CWTRACE header)");
    if (size_ < kHeaderSize)
      refuse(fmt::format("not a causeway trace: header truncated at {} bytes", size_));
    report_.major = load<uint32_t>(data_ + 8);
    report_.minor = load<uint32_t>(data_ + 12);
    uint32_t clock = load<uint32_t>(data_ + 16);
    // 1.x, 2.x and 3.x differ only in that 2.x may hold compressed chunks and 3.x packed
    // events chunks, which this reader reads wherever they are.
    if (report_.major > kMajor)
      refuse(fmt::format(
          "trace format version {}.{} is newer than this causeway reads (up to {}.x); upgrade "
          "causeway",
          report_.major, report_.minor, kMajor));
    if (report_.major < kPlainMajor)
      refuse(fmt::format(
          "trace format version {}.{} is not supported (this causeway reads {}.x to {}.x)",
          report_.major, report_.minor, kPlainMajor, kMajor));
    const uint32_t newest_minor = report_.major == kMajor           ? kMinor
                                  : report_.major == kZstdOnlyMajor ? 0
                                                                    : kPlainMinor;
    if (report_.minor > newest_minor)
      notes_.add(
          fmt::format("written by a newer causeway (format {}.{}); parts it added may be skipped",
                      report_.major, report_.minor));
    if (clock != kClockMonotonic)
      notes_.add(fmt::format(
          "unknown clock {} in the header; timestamps are read as CLOCK_MONOTONIC", clock));
  }

  // Empty when the chunk at `pos` is whole and its checksum verifies; else the reason.
  std::string check_chunk(uint64_t pos) const {
    if (size_ - pos < kChunkHeaderSize) return "truncated chunk header";
    if (load<uint32_t>(data_ + pos) != kChunkMagic) return "no chunk magic";
    uint32_t type = load<uint32_t>(data_ + pos + 4);
    uint64_t size = load<uint64_t>(data_ + pos + 8);
    if (size > size_ - pos - kChunkHeaderSize)
      return fmt::format("truncated {} (needs {} bytes, {} left)", describe_chunk(type), size,
                         size_ - pos - kChunkHeaderSize);
    if (XXH3_64bits(data_ + pos + kChunkHeaderSize, size) != load<uint64_t>(data_ + pos + 16))
      return fmt::format("checksum mismatch in {}", describe_chunk(type));
    return {};
  }

  // The offset of the next chunk that verifies, or the end of the file.
  uint64_t resynchronise(uint64_t from) const {
    const uint8_t magic[4] = {'C', 'W', 'C', 'K'};
    for (uint64_t pos = from; pos + kChunkHeaderSize <= size_;) {
      auto* hit = static_cast<const uint8_t*>(memmem(data_ + pos, size_ - pos, magic, 4));
      if (!hit) break;
      pos = static_cast<uint64_t>(hit - data_);
      if (pos + kChunkHeaderSize <= size_ && check_chunk(pos).empty()) return pos;
      ++pos;
    }
    return size_;
  }

  // Sizes the event and value arrays once from the chunk headers (a hint only: a damaged
  // file may claim anything, so the sums are capped by the file size).
  void reserve_from_headers() {
    uint64_t events = 0, values = 0;
    for (uint64_t pos = kHeaderSize; size_ - pos >= kChunkHeaderSize;) {
      if (load<uint32_t>(data_ + pos) != kChunkMagic) break;
      uint64_t size = load<uint64_t>(data_ + pos + 8);
      if (size > size_ - pos - kChunkHeaderSize) break;
      const uint32_t type = load<uint32_t>(data_ + pos + 4);
      const uint8_t* payload = data_ + pos + kChunkHeaderSize;
      if (type == static_cast<uint32_t>(ChunkType::Events) && size >= 16) {
        uint64_t n = load<uint64_t>(payload);
        uint64_t v = load<uint64_t>(payload + 8);
        if (n > size || v > size) break;
        events += n;
        values += v;
      } else if (type == (static_cast<uint32_t>(ChunkType::Events) | kCompressedFlag) &&
                 size >= kCompressedHeaderSize + 16 && load<uint32_t>(payload + 4) == 16) {
        // The counts are the raw prefix; they must add up to the declared size.
        uint64_t declared = load<uint64_t>(payload + 8);
        uint64_t n = load<uint64_t>(payload + kCompressedHeaderSize);
        uint64_t v = load<uint64_t>(payload + kCompressedHeaderSize + 8);
        if (declared > kMaxCompressedPayload || n > declared || v > declared ||
            16 + n * kDiskEventSize + v * 8 != declared)
          break;
        events += n;
        values += v;
      }
      pos += kChunkHeaderSize + size;
    }
    // Compressed events take more room in memory than on disk (about 5-fold for a
    // recording); a file claiming far more is damaged or crafted, and gets no reservation.
    if (events * kDiskEventSize + values * 8 <= size_ * kMaxExpansion && events < (1ull << 32)) {
      out_.events.reserve(events);
      out_.values.reserve(values);
      prefer_huge_pages(out_.events.data(), events * sizeof(Event));
      prefer_huge_pages(out_.values.data(), values * sizeof(uint64_t));
    }
  }

  // `job`: the decompression of a compressed chunk (`payload` and `size` are as stored).
  void read_chunk(ChunkDecoder& decoder, uint64_t pos, uint32_t type, const uint8_t* payload,
                  uint64_t size, InflateJob* job) {
    ++report_.chunks_read;
    const uint32_t stored_type = type;
    const uint64_t stored_size = size;
    try {
      if (job) {
        inflater_.wait(*job);
        if (!job->error.empty()) throw Malformed{job->error};
        type &= ~kCompressedFlag;
        payload = job->data.get();
        size = job->declared;
        decoder.count_decompressed(size);
      }
      if (!decode_chunk(decoder, pos, type, payload, size, job != nullptr)) {
        --report_.chunks_read;
        notes_.add(
            fmt::format("skipped a {}chunk of unknown type {} at byte {} ({} bytes; from a newer "
                        "causeway?)",
                        job ? "compressed " : "", type, pos, kChunkHeaderSize + stored_size));
      }
    } catch (const Malformed& m) {
      --report_.chunks_read;
      report_.skipped.push_back(
          SkippedRange{pos, kChunkHeaderSize + stored_size,
                       fmt::format("malformed {}: {}", describe_chunk(stored_type), m.what)});
    }
    // Read, skipped or malformed, nothing points into the decompressed bytes any more (the
    // decoder copies what it keeps): the buffer serves a later chunk, so that a read
    // allocates as many buffers as it holds chunks decompressed at once, not one a chunk.
    if (job) inflater_.recycle(*job);
  }

  // Hands the chunk's payload (decompressed) to the decoder; false for a type this reader
  // does not know.
  bool decode_chunk(ChunkDecoder& decoder, uint64_t pos, uint32_t type, const uint8_t* payload,
                    uint64_t size, bool compressed) {
    Cursor c(payload, size);
    switch (static_cast<ChunkType>(type)) {
      case ChunkType::Schema: decoder.read_schema(c); return true;
      case ChunkType::Strings: decoder.read_strings(c); return true;
      case ChunkType::Stacks: decoder.read_stacks(c); return true;
      case ChunkType::Processes: decoder.read_processes(c); return true;
      case ChunkType::Threads: decoder.read_threads(c, pos, compressed); return true;
      case ChunkType::Events:
        report_.events_read += decoder.read_events(payload, size);
        return true;
      case ChunkType::Lost: decoder.read_lost(c); return true;
      case ChunkType::End: seen_end_ = true; return true;
      case ChunkType::Maps: decoder.read_maps(c); return true;
      case ChunkType::Losses: decoder.read_losses(c); return true;
      case ChunkType::JitSymbols: decoder.read_jit_symbols(c); return true;
    }
    return false;
  }

  const uint8_t* data_;
  uint64_t size_;
  Inflater inflater_;  // declared after data_: joined before anything it reads goes
  Trace& out_;
  const std::string& name_;
  ReadReport report_;
  ReadNotes notes_{report_.notes};
  bool seen_end_ = false;
  bool stopped_at_limit_ = false;  // the rest of the file would decompress past the limit
  std::function<void(uint64_t)> done_before_;
};

}  // namespace

ReadReport read_binary_trace(std::string_view bytes, Trace& out, const std::string& name,
                             std::function<void(uint64_t)> done_before) {
  return Reader(bytes, out, name, std::move(done_before)).read();
}

}  // namespace cw::binary_format

namespace cw {

ReadReport read_trace_bytes(std::string_view bytes, Trace& out, const std::string& name) {
  return binary_format::read_binary_trace(bytes, out, name);
}

}  // namespace cw
