// Writing the binary trace format: TraceWriter streams a trace to disk in checksummed
// chunks, each compressed on its own when that gains (docs/trace-format.md).
#include <fmt/format.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>

#include "base/output_file.h"
#include "trace/binary_format.h"
#include "trace/binary_format_internal.h"
#include "trace/packed_events.h"

namespace cw {

namespace {

using binary_format::ChunkType;
using binary_format::kChunkHeaderSize;
using binary_format::kChunkMagic;
using binary_format::kClockMonotonic;
using binary_format::kCodecZstd;
using binary_format::kCodecZstdPackedEvents;
using binary_format::kCompressedFlag;
using binary_format::kCompressedHeaderSize;
using binary_format::kDiskEventSize;
using binary_format::kFileMagic;
using binary_format::kHeaderSize;
using binary_format::kMaxCompressedPayload;
using binary_format::pack_events;

constexpr size_t kMaxStringsPerChunk = 1 << 16;
constexpr size_t kMaxStacksPerChunk = 1 << 14;

class Buffer {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u16(uint16_t v) { raw(&v, sizeof v); }
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  void reserve(size_t n) { bytes_.reserve(n); }
  // Pads to a multiple of 8 so every chunk (and its fixed-width records) stays aligned.
  void pad8() {
    while (bytes_.size() % 8) bytes_.push_back(0);
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  void clear() { bytes_.clear(); }

 private:
  std::vector<uint8_t> bytes_;
};

void serialize_schema(const Schema& schema, Buffer& b) {
  b.u32(static_cast<uint32_t>(schema.size()));
  for (const auto& k : schema.kinds()) {
    b.str(k.name);
    b.u8(static_cast<uint8_t>(k.span_role));
    b.str(k.span);
    b.str(k.doc);
    b.u32(static_cast<uint32_t>(k.fields.size()));
    for (const auto& f : k.fields) {
      b.str(f.name);
      b.u8(static_cast<uint8_t>(f.type));
      b.str(f.doc);
    }
  }
}

}  // namespace

struct TraceWriter::State {
  std::string path;
  int fd = -1;
  TraceWriterOptions options;
  size_t kinds_written = 0;
  size_t strings_written = 1;  // id 0, the empty string, is implicit
  size_t stacks_written = 1;   // id 0, no stack, is implicit
  size_t processes_written = 0, threads_written = 0, lost_written = 0, maps_written = 0,
         losses_written = 0, jit_written = 0;
  Buffer payload;
  ZSTD_CCtx* zstd = nullptr;           // set when compressing
  std::vector<uint8_t> packed;         // a compressed payload being written
  std::vector<uint8_t> events_packed;  // an events payload packed, before compression
  uint64_t whole = 0;                  // bytes on disk up to the end of the last whole chunk
  uint64_t at = 0;                     // bytes on disk, a chunk being written included
  int failed = 0;                      // the errno of a failed write; then nothing more is written

  [[noreturn]] void fail() const {
    throw TraceWriteError(
        fmt::format("{}: cannot write after {} bytes: {}", path, whole, std::strerror(failed)),
        path, whole, failed);
  }

  void write_all(const void* data, size_t n) { write_all(data, n, nullptr, 0); }

  // Both parts in one system call where the kernel takes them whole: a writer killed
  // between a chunk's header and its payload would leave a header with nothing after it
  // (readers skip such a torn tail and say so, but a killed recorder should rarely tear).
  void write_all(const void* first, size_t first_n, const void* second, size_t second_n) {
    if (failed) fail();
    iovec parts[2] = {{const_cast<void*>(first), first_n}, {const_cast<void*>(second), second_n}};
    iovec* part = parts;
    int count = second_n > 0 ? 2 : 1;
    size_t total = first_n + second_n;
    while (total > 0) {
      ssize_t w = ::writev(fd, part, count);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        failed = w < 0 ? errno : ENOSPC;  // a write of 0 bytes: no room
        // Cut the half-written chunk off: the file stays a trace of whole chunks (freeing
        // what it took), and without an end chunk readers say it is incomplete.
        if (::ftruncate(fd, static_cast<off_t>(whole)) == 0) at = whole;
        fail();
      }
      at += static_cast<uint64_t>(w);
      total -= static_cast<size_t>(w);
      auto left = static_cast<size_t>(w);
      while (count > 0 && left >= part->iov_len) {
        left -= part->iov_len;
        ++part;
        --count;
      }
      if (count > 0) {
        part->iov_base = static_cast<char*>(part->iov_base) + left;
        part->iov_len -= left;
      }
    }
  }

  // Compresses the payload into `packed` (the compressed-chunk header, the raw prefix, one
  // zstd frame, zero padding); false when it is to be stored as it is: compression off, a
  // payload too small to gain or too big for a reader to accept, or no gain.
  bool compress(ChunkType type) {
    const auto& bytes = payload.bytes();
    constexpr size_t kMinCompressed = 256;
    if (!zstd || bytes.size() < kMinCompressed || bytes.size() > kMaxCompressedPayload)
      return false;
    // An events chunk keeps its counts readable, so a reader sizes its arrays from the
    // chunk headers before decompressing anything; the rest is packed, then compressed.
    const uint32_t prefix = type == ChunkType::Events ? 16 : 0;
    const uint8_t* rest = bytes.data() + prefix;
    size_t rest_size = bytes.size() - prefix;
    uint32_t codec = kCodecZstd;
    if (type == ChunkType::Events) {
      uint64_t count = 0, nvalues = 0;
      std::memcpy(&count, bytes.data(), 8);
      std::memcpy(&nvalues, bytes.data() + 8, 8);
      events_packed.clear();
      pack_events(rest, count, rest + count * kDiskEventSize, nvalues, events_packed);
      rest = events_packed.data();
      rest_size = events_packed.size();
      codec = kCodecZstdPackedEvents;
    }
    const size_t bound = ZSTD_compressBound(rest_size);
    packed.resize(kCompressedHeaderSize + prefix + bound + 8);
    uint64_t size = bytes.size();
    std::memcpy(packed.data(), &codec, 4);
    std::memcpy(packed.data() + 4, &prefix, 4);
    std::memcpy(packed.data() + 8, &size, 8);
    std::memcpy(packed.data() + kCompressedHeaderSize, bytes.data(), prefix);
    size_t z = ZSTD_compress2(zstd, packed.data() + kCompressedHeaderSize + prefix, bound, rest,
                              rest_size);
    if (ZSTD_isError(z)) return false;
    size_t used = kCompressedHeaderSize + prefix + z;
    size_t padded = (used + 7) & ~size_t{7};
    std::memset(packed.data() + used, 0, padded - used);
    packed.resize(padded);
    return padded < bytes.size();
  }

  void emit(ChunkType type) {
    payload.pad8();
    uint32_t t = static_cast<uint32_t>(type);
    const uint8_t* data = payload.bytes().data();
    uint64_t size = payload.bytes().size();
    if (compress(type)) {
      t |= kCompressedFlag;
      data = packed.data();
      size = packed.size();
    }
    // The checksum covers the bytes as stored, so damage is found before decompressing.
    uint8_t header[kChunkHeaderSize];
    uint32_t magic = kChunkMagic;
    uint64_t hash = XXH3_64bits(data, size);
    std::memcpy(header, &magic, 4);
    std::memcpy(header + 4, &t, 4);
    std::memcpy(header + 8, &size, 8);
    std::memcpy(header + 16, &hash, 8);
    write_all(header, sizeof header, data, size);
    payload.clear();
    whole = at;
  }
};

TraceWriter::TraceWriter(const std::string& path, const Schema& schema)
    : TraceWriter(path, schema, TraceWriterOptions{}) {}

TraceWriter::TraceWriter(const std::string& path, const Schema& schema, TraceWriterOptions options)
    : state_(new State) {
  state_->path = path;
  state_->options = options;
  if (state_->options.events_per_chunk == 0) state_->options.events_per_chunk = 1;
  const bool compressed = state_->options.compression == TraceCompression::Zstd;
  if (compressed) {
    state_->zstd = ZSTD_createCCtx();
    if (!state_->zstd || ZSTD_isError(ZSTD_CCtx_setParameter(state_->zstd, ZSTD_c_compressionLevel,
                                                             state_->options.level))) {
      ZSTD_freeCCtx(state_->zstd);
      delete state_;
      throw std::runtime_error(fmt::format("{}: cannot set up zstd compression", path));
    }
  }
  // 0600, also for a file that was there: traces hold other users' data. A symlink at the
  // path is refused, not followed (base/output_file.h).
  std::string why;
  state_->fd = open_output_file(path, 0600, &why);
  if (state_->fd < 0) {
    ZSTD_freeCCtx(state_->zstd);
    delete state_;
    throw std::runtime_error(why);
  }
  try {
    uint8_t header[kHeaderSize] = {};
    std::memcpy(header, kFileMagic, 8);
    uint32_t fields[4] = {compressed ? binary_format::kMajor : binary_format::kPlainMajor,
                          compressed ? binary_format::kMinor : binary_format::kPlainMinor,
                          kClockMonotonic, 0};
    std::memcpy(header + 8, fields, sizeof fields);
    state_->write_all(header, sizeof header);
    state_->whole = state_->at;
    serialize_schema(schema, state_->payload);
    state_->emit(ChunkType::Schema);
    state_->kinds_written = schema.size();
  } catch (...) {
    ::close(state_->fd);
    ZSTD_freeCCtx(state_->zstd);
    delete state_;
    throw;
  }
}

TraceWriter::~TraceWriter() {
  if (!state_) return;
  try {
    close();
  } catch (const std::exception&) {
    // A destructor cannot report; callers who care call close() themselves.
  }
  if (state_->fd >= 0) ::close(state_->fd);
  ZSTD_freeCCtx(state_->zstd);
  delete state_;
}

void TraceWriter::append(const Trace& trace, size_t events_from) {
  State& s = *state_;
  if (s.fd < 0) throw std::runtime_error(fmt::format("{}: trace already closed", s.path));
  Buffer& b = s.payload;
  if (trace.schema.size() > s.kinds_written) {
    serialize_schema(trace.schema, b);
    s.emit(ChunkType::Schema);
    s.kinds_written = trace.schema.size();
  }
  while (s.strings_written < trace.strings.size()) {
    size_t n = std::min(kMaxStringsPerChunk, trace.strings.size() - s.strings_written);
    b.u32(static_cast<uint32_t>(s.strings_written));
    b.u32(static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; ++i)
      b.str(trace.strings.get(static_cast<StrId>(s.strings_written + i)));
    s.emit(ChunkType::Strings);
    s.strings_written += n;
  }
  while (s.stacks_written < trace.stacks.size()) {
    size_t n = std::min(kMaxStacksPerChunk, trace.stacks.size() - s.stacks_written);
    b.u32(static_cast<uint32_t>(s.stacks_written));
    b.u32(static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; ++i) {
      const Stack& st = trace.stacks[s.stacks_written + i];
      b.u32(static_cast<uint32_t>(st.ips.size()));
      b.u8(st.symbols.empty() ? 0 : 1);
      b.raw(st.ips.data(), st.ips.size() * 8);
      if (!st.symbols.empty()) {
        for (size_t f = 0; f < st.ips.size(); ++f) b.u32(f < st.symbols.size() ? st.symbols[f] : 0);
      }
    }
    s.emit(ChunkType::Stacks);
    s.stacks_written += n;
  }
  if (s.processes_written < trace.processes.size()) {
    b.u32(static_cast<uint32_t>(trace.processes.size() - s.processes_written));
    for (size_t i = s.processes_written; i < trace.processes.size(); ++i) {
      const ProcessInfo& p = trace.processes[i];
      b.u32(p.pid), b.u32(p.ppid), b.u32(p.comm), b.u32(p.exe);
    }
    s.emit(ChunkType::Processes);
    s.processes_written = trace.processes.size();
  }
  if (s.threads_written < trace.threads.size()) {
    b.u32(static_cast<uint32_t>(trace.threads.size() - s.threads_written));
    for (size_t i = s.threads_written; i < trace.threads.size(); ++i) {
      const ThreadInfo& t = trace.threads[i];
      b.u32(t.tid), b.u32(t.pid), b.u32(t.comm), b.u32(t.kernel ? 1 : 0);
    }
    s.emit(ChunkType::Threads);
    s.threads_written = trace.threads.size();
  }
  // Maps: u32 count, u32 0, then per map u64 ts, start, end, pgoff, u32 pid, path,
  // build id, 0 (48 bytes).
  if (s.maps_written < trace.maps.size()) {
    b.u32(static_cast<uint32_t>(trace.maps.size() - s.maps_written));
    b.u32(0);
    for (size_t i = s.maps_written; i < trace.maps.size(); ++i) {
      const MapRecord& m = trace.maps[i];
      b.u64(m.ts), b.u64(m.start), b.u64(m.end), b.u64(m.pgoff);
      b.u32(m.pid), b.u32(m.path), b.u32(m.build_id), b.u32(0);
    }
    s.emit(ChunkType::Maps);
    s.maps_written = trace.maps.size();
  }
  if (s.lost_written < trace.lost.size()) {
    b.u32(static_cast<uint32_t>(trace.lost.size() - s.lost_written));
    b.u32(0);
    for (size_t i = s.lost_written; i < trace.lost.size(); ++i) {
      const LostRecord& l = trace.lost[i];
      b.u64(l.ts), b.u64(l.count), b.u32(l.cpu), b.u32(0);
    }
    s.emit(ChunkType::Lost);
    s.lost_written = trace.lost.size();
  }
  // Losses: u32 count, u32 0, then per record u64 ts, count, u32 kind, 0 (24 bytes).
  if (s.losses_written < trace.losses.size()) {
    b.u32(static_cast<uint32_t>(trace.losses.size() - s.losses_written));
    b.u32(0);
    for (size_t i = s.losses_written; i < trace.losses.size(); ++i) {
      const LossRecord& l = trace.losses[i];
      b.u64(l.ts), b.u64(l.count), b.u32(static_cast<uint32_t>(l.kind)), b.u32(0);
    }
    s.emit(ChunkType::Losses);
    s.losses_written = trace.losses.size();
  }
  // JIT symbols: u32 count, u32 0, then per symbol u64 ts, start, size, u32 pid, name (32
  // bytes); at most 2^21 per chunk, so a chunk stays far below the reader's limit.
  while (s.jit_written < trace.jit_symbols.size()) {
    const size_t n = std::min<size_t>(size_t{1} << 21, trace.jit_symbols.size() - s.jit_written);
    b.u32(static_cast<uint32_t>(n)), b.u32(0);
    for (size_t i = s.jit_written; i < s.jit_written + n; ++i) {
      const JitSymbol& j = trace.jit_symbols[i];
      b.u64(j.ts), b.u64(j.start), b.u64(j.size), b.u32(j.pid), b.u32(j.name);
    }
    s.emit(ChunkType::JitSymbols);
    s.jit_written += n;
  }
  // Events: u64 count, u64 value count, count 24-byte events whose `values` is relative
  // to the chunk, then the values. The reader copies both arrays in bulk.
  std::vector<uint64_t> values;
  for (size_t first = events_from; first < trace.events.size();) {
    size_t n = std::min(s.options.events_per_chunk, trace.events.size() - first);
    values.clear();
    b.reserve(16 + n * kDiskEventSize);
    b.u64(n);
    b.u64(0);  // patched below, once the values are gathered
    // Events whose values lie back to back, in event order (a trace built by appending,
    // as the recorder's is), are copied in two pieces: the recorder writes every event it
    // records, and copying them one by one was a tenth of its time.
    const uint64_t base = trace.events[first].values;
    uint64_t next = base;
    bool back_to_back = true;
    for (size_t i = first; i < first + n && back_to_back; ++i) {
      back_to_back = trace.events[i].values == next;
      next += trace.schema.kind(trace.events[i].kind).fields.size();
    }
    uint64_t nvalues = 0;
    if (back_to_back) {
      const size_t at = b.bytes().size();
      b.raw(trace.events.data() + first, n * sizeof(Event));
      uint8_t* out = const_cast<uint8_t*>(b.bytes().data()) + at;
      for (size_t i = 0; i < n; ++i) {
        const auto relative = static_cast<uint32_t>(trace.events[first + i].values - base);
        std::memcpy(out + i * sizeof(Event) + offsetof(Event, values), &relative, 4);
      }
      nvalues = next - base;
      b.raw(trace.values.data() + base, nvalues * 8);
    } else {
      for (size_t i = first; i < first + n; ++i) {
        Event e = trace.events[i];
        size_t nfields = trace.schema.kind(e.kind).fields.size();
        const uint64_t* v = trace.values.data() + e.values;
        e.values = static_cast<uint32_t>(values.size());
        values.insert(values.end(), v, v + nfields);
        b.raw(&e, sizeof e);
      }
      b.raw(values.data(), values.size() * 8);
      nvalues = values.size();
    }
    std::memcpy(const_cast<uint8_t*>(b.bytes().data()) + 8, &nvalues, 8);
    s.emit(ChunkType::Events);
    first += n;
  }
}

uint64_t TraceWriter::bytes_written() const {
  return state_->whole;
}

void TraceWriter::close() {
  State& s = *state_;
  if (s.fd < 0) return;
  if (s.failed) {
    // No end chunk after a failed write: the trace must not look finished.
    ::close(s.fd);
    s.fd = -1;
    return;
  }
  s.emit(ChunkType::End);
  int fd = s.fd;
  s.fd = -1;
  if (::close(fd) != 0)
    throw std::runtime_error(fmt::format("{}: cannot write: {}", s.path, std::strerror(errno)));
}

void write_trace(const Trace& trace, const std::string& path, TraceWriterOptions options) {
  TraceWriter writer(path, trace.schema, options);
  writer.append(trace);
  writer.close();
}

void write_trace(const Trace& trace, const std::string& path) {
  write_trace(trace, path, TraceWriterOptions{});
}

bool parse_trace_compression(std::string_view text, TraceWriterOptions& options, std::string* why) {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (text == "none") {
    options.compression = TraceCompression::None;
    return true;
  }
  if (text == "zstd") {
    options.compression = TraceCompression::Zstd;
    options.level = 3;
    return true;
  }
  if (!text.starts_with("zstd="))
    return fail(fmt::format("'{}': expected none, zstd or zstd=LEVEL", text));
  std::string_view digits = text.substr(5);
  int level = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), level);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || level < 1 ||
      level > 22)
    return fail(fmt::format("'{}': the zstd level is a whole number from 1 to 22", text));
  options.compression = TraceCompression::Zstd;
  options.level = level;
  return true;
}

}  // namespace cw
