#include "trace/binary_format.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "base/output_file.h"
#include "base/source.h"
#include "trace/decompression_limit.h"
#include "trace/perf_script.h"
#include "trace/text_format.h"
#include "trace/thread_moves.h"

namespace cw {

static_assert(std::endian::native == std::endian::little,
              "the binary trace format is little-endian and read by bulk copies");

namespace {

// memcpy with a null pointer is undefined even for 0 bytes, and an empty vector's data()
// is null: a stack of no frames or a chunk of no events copies nothing.
void copy_bytes(void* to, const void* from, size_t n) {
  if (n != 0) std::memcpy(to, from, n);
}

}  // namespace

namespace {

using binary_format::ChunkType;
using binary_format::kChunkHeaderSize;
using binary_format::kChunkMagic;
using binary_format::kCodecZstd;
using binary_format::kCompressedFlag;
using binary_format::kCompressedHeaderSize;
using binary_format::kFileMagic;
using binary_format::kHeaderSize;
using binary_format::kMaxCompressedPayload;
using binary_format::kMaxExpansion;

constexpr uint32_t kClockMonotonic = 1;
constexpr size_t kMaxStringsPerChunk = 1 << 16;
constexpr size_t kMaxStacksPerChunk = 1 << 14;
constexpr size_t kDiskEventSize = 24;
static_assert(sizeof(Event) == kDiskEventSize);

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

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---- writing ----

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
         losses_written = 0;
  Buffer payload;
  ZSTD_CCtx* zstd = nullptr;    // set when compressing
  std::vector<uint8_t> packed;  // a compressed payload being written
  uint64_t whole = 0;           // bytes on disk up to the end of the last whole chunk
  uint64_t at = 0;              // bytes on disk, a chunk being written included
  int failed = 0;               // the errno of a failed write; then nothing more is written

  [[noreturn]] void fail() const {
    throw TraceWriteError(
        fmt::format("{}: cannot write after {} bytes: {}", path, whole, std::strerror(failed)),
        path, whole, failed);
  }

  void write_all(const void* data, size_t n) {
    if (failed) fail();
    auto* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        failed = w < 0 ? errno : ENOSPC;  // a write of 0 bytes: no room
        // Cut the half-written chunk off: the file stays a trace of whole chunks (freeing
        // what it took), and without an end chunk readers say it is incomplete.
        if (::ftruncate(fd, static_cast<off_t>(whole)) == 0) at = whole;
        fail();
      }
      p += w;
      at += static_cast<uint64_t>(w);
      n -= static_cast<size_t>(w);
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
    // chunk headers before decompressing anything.
    const uint32_t prefix = type == ChunkType::Events ? 16 : 0;
    const size_t bound = ZSTD_compressBound(bytes.size() - prefix);
    packed.resize(kCompressedHeaderSize + prefix + bound + 8);
    uint32_t codec = kCodecZstd;
    uint64_t size = bytes.size();
    std::memcpy(packed.data(), &codec, 4);
    std::memcpy(packed.data() + 4, &prefix, 4);
    std::memcpy(packed.data() + 8, &size, 8);
    std::memcpy(packed.data() + kCompressedHeaderSize, bytes.data(), prefix);
    size_t z = ZSTD_compress2(zstd, packed.data() + kCompressedHeaderSize + prefix, bound,
                              bytes.data() + prefix, bytes.size() - prefix);
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
    write_all(header, sizeof header);
    write_all(data, size);
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
  // Events: u64 count, u64 value count, count 24-byte events whose `values` is relative
  // to the chunk, then the values. The reader copies both arrays in bulk.
  std::vector<uint64_t> values;
  for (size_t first = events_from; first < trace.events.size();) {
    size_t n = std::min(s.options.events_per_chunk, trace.events.size() - first);
    values.clear();
    b.reserve(16 + n * kDiskEventSize);
    b.u64(n);
    b.u64(0);  // patched below, once the values are gathered
    for (size_t i = first; i < first + n; ++i) {
      Event e = trace.events[i];
      size_t nfields = trace.schema.kind(e.kind).fields.size();
      const uint64_t* v = trace.values.data() + e.values;
      e.values = static_cast<uint32_t>(values.size());
      values.insert(values.end(), v, v + nfields);
      b.raw(&e, sizeof e);
    }
    b.raw(values.data(), values.size() * 8);
    uint64_t nvalues = values.size();
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

// ---- reading ----

namespace {

// A payload that does not decode although its checksum verified (a writer bug, or a
// crafted file).
struct Malformed {
  std::string what;
};

class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v = load<T>(p_ + pos_);
    pos_ += sizeof(T);
    return v;
  }
  std::string_view str() {
    uint32_t n = get<uint32_t>();
    need(n);
    std::string_view s(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return s;
  }
  const uint8_t* take(size_t n) {
    need(n);
    const uint8_t* p = p_ + pos_;
    pos_ += n;
    return p;
  }
  size_t remaining() const { return n_ - pos_; }

 private:
  void need(size_t n) const {
    if (n > n_ - pos_) throw Malformed{"payload ends early"};
  }
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

constexpr uint32_t kUnmapped = 0xffffffffu;

// Faulting in a gigabyte of fresh 4 KiB pages is most of a big read's time; transparent
// huge pages cut the number of faults 512-fold where the kernel allows them.
void prefer_huge_pages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = 2u << 20;
  if (bytes < 4 * kHuge) return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// ---- decompression ----

// A compressed chunk's payload, decompressed by an Inflater.
struct InflateJob {
  const uint8_t* src = nullptr;  // the stored payload (header, prefix, frame, padding)
  uint64_t stored = 0;
  uint64_t declared = 0;  // the payload's size once decompressed
  uint32_t prefix = 0;
  std::unique_ptr<uint8_t[]> data;  // `declared` bytes when `error` is empty
  uint64_t capacity = 0;            // of `data`, which may be a reused buffer
  std::string error;
  bool claimed = false, done = false;
};

// Decompresses chunks on worker threads ahead of the reader, which takes the results in
// file order (a chunk nobody has started yet it decompresses itself). Reading a 19 M-event
// trace decompresses ~900 MB; on one thread that would add most of a second.
class Inflater {
 public:
  Inflater() = default;
  ~Inflater() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    work_.notify_all();
    for (auto& t : threads_) t.join();
    ZSTD_freeDCtx(own_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Checks the compressed-chunk header of `stored` bytes at `src` and queues the frame; a
  // header that does not hold (an absurd declared size above all) fails the job at once,
  // before anything is allocated.
  std::shared_ptr<InflateJob> submit(const uint8_t* src, uint64_t stored) {
    auto job = std::make_shared<InflateJob>();
    job->src = src;
    job->stored = stored;
    if (stored < kCompressedHeaderSize) {
      job->error = "compressed payload shorter than its header";
    } else {
      uint32_t codec = load<uint32_t>(src);
      job->prefix = load<uint32_t>(src + 4);
      job->declared = load<uint64_t>(src + 8);
      if (codec != kCodecZstd)
        job->error = fmt::format("unknown compression codec {}", codec);
      else if (job->declared > kMaxCompressedPayload)
        job->error = fmt::format(
            "declares {} bytes once decompressed, more than a chunk may hold ({} bytes)",
            job->declared, kMaxCompressedPayload);
      else if (job->prefix > job->declared || job->prefix > stored - kCompressedHeaderSize)
        job->error = fmt::format("raw prefix of {} bytes exceeds the chunk", job->prefix);
    }
    if (!job->error.empty()) {
      job->claimed = job->done = true;
      job->declared = 0;
      return job;
    }
    std::lock_guard lock(mutex_);
    if (threads_.empty()) {
      // The reader's own thread decompresses too, and parses: one worker per other core.
      unsigned cores = std::thread::hardware_concurrency();
      unsigned workers = std::clamp(cores > 1 ? cores - 1 : 1u, 1u, 3u);
      for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
    }
    queue_.push_back(job);
    work_.notify_one();
    return job;
  }

  // Takes back a read job's buffer for a later job: a fresh buffer per chunk would fault in
  // every page of the ~900 MB a 19 M-event trace decompresses to.
  void recycle(InflateJob& job) {
    if (!job.data) return;
    std::lock_guard lock(mutex_);
    spare_.emplace_back(std::move(job.data), job.capacity);
  }

  // Waits for the job, its `data` or `error` then set. Meanwhile this thread decompresses
  // too: the job itself when no worker has taken it, else a later one.
  void wait(InflateJob& job) {
    std::unique_lock lock(mutex_);
    while (!job.done) {
      std::shared_ptr<InflateJob> next;
      if (!job.claimed) {
        job.claimed = true;
      } else {
        while (!queue_.empty() && queue_.front()->claimed) queue_.pop_front();
        if (queue_.empty()) {
          done_.wait(lock, [&] { return job.done; });
          break;
        }
        next = std::move(queue_.front());
        queue_.pop_front();
        next->claimed = true;
      }
      InflateJob& mine = next ? *next : job;
      lock.unlock();
      if (!own_) own_ = ZSTD_createDCtx();
      run(mine, own_, *this);
      lock.lock();
      mine.done = true;
      done_.notify_all();
    }
  }

 private:
  void work() {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) break;
      std::shared_ptr<InflateJob> job = std::move(queue_.front());
      queue_.pop_front();
      if (job->claimed) continue;
      job->claimed = true;
      lock.unlock();
      run(*job, dctx, *this);
      lock.lock();
      job->done = true;
      done_.notify_all();
    }
    lock.unlock();
    ZSTD_freeDCtx(dctx);
  }

  // A spare buffer of at least `bytes`, or none.
  bool reuse(InflateJob& job) {
    std::lock_guard lock(mutex_);
    for (auto it = spare_.begin(); it != spare_.end(); ++it) {
      if (it->second < job.declared) continue;
      job.data = std::move(it->first);
      job.capacity = it->second;
      spare_.erase(it);
      return true;
    }
    return false;
  }

  static void run(InflateJob& job, ZSTD_DCtx* dctx, Inflater& pool) {
    if (!dctx) {
      job.error = "cannot set up zstd decompression";
      return;
    }
    const uint8_t* frame = job.src + kCompressedHeaderSize + job.prefix;
    const size_t available = job.stored - kCompressedHeaderSize - job.prefix;
    const uint64_t expected = job.declared - job.prefix;
    // Exactly one frame, padded with fewer than 8 zero bytes, whose own header declares
    // the size the chunk does: the buffer is sized by that, and zstd never writes past it.
    size_t frame_size = ZSTD_findFrameCompressedSize(frame, available);
    if (ZSTD_isError(frame_size)) {
      job.error = fmt::format("zstd: {}", ZSTD_getErrorName(frame_size));
      return;
    }
    if (available - frame_size >= 8 ||
        std::any_of(frame + frame_size, frame + available, [](uint8_t b) { return b != 0; })) {
      job.error = "bytes after the zstd frame";
      return;
    }
    unsigned long long content = ZSTD_getFrameContentSize(frame, frame_size);
    if (content != expected) {
      job.error = content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR
                      ? std::string("the zstd frame does not state its size")
                      : fmt::format("the zstd frame holds {} bytes, the chunk declares {}", content,
                                    expected);
      return;
    }
    try {
      if (!pool.reuse(job)) {
        job.capacity = std::max<uint64_t>(job.declared, 1);
        job.data.reset(new uint8_t[job.capacity]);
      }
    } catch (const std::bad_alloc&) {
      job.error = fmt::format("out of memory decompressing {} bytes", job.declared);
      return;
    }
    copy_bytes(job.data.get(), job.src + kCompressedHeaderSize, job.prefix);
    size_t got =
        ZSTD_decompressDCtx(dctx, job.data.get() + job.prefix, expected, frame, frame_size);
    if (ZSTD_isError(got) || got != expected) {
      job.error = ZSTD_isError(got)
                      ? fmt::format("zstd: {}", ZSTD_getErrorName(got))
                      : fmt::format("the zstd frame held {} bytes, not {}", got, expected);
      job.data.reset();
    }
  }

  std::mutex mutex_;
  std::condition_variable work_, done_;
  std::deque<std::shared_ptr<InflateJob>> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
  ZSTD_DCtx* own_ = nullptr;                                            // the reader thread's
  std::vector<std::pair<std::unique_ptr<uint8_t[]>, uint64_t>> spare_;  // buffer, capacity
};

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
    Schema schema = std::move(out_.schema);
    out_ = Trace{};
    out_.schema = std::move(schema);
    for (KindId k = 0; k < out_.schema.size(); ++k) reader_kinds_[out_.schema.kind(k).name] = k;
    str_map_.push_back(0);
    stack_map_.push_back(0);
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
        read_chunk(a.pos, load<uint32_t>(data_ + a.pos + 4), data_ + a.pos + kChunkHeaderSize,
                   a.end - a.pos - kChunkHeaderSize, a.job.get());
      }
      if (done_before_) done_before_(a.end);
    }
    finish();
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
    // 1.x and 2.x differ only in that 2.x may hold compressed chunks, which this reader
    // reads wherever they are.
    using binary_format::kMajor, binary_format::kMinor, binary_format::kPlainMajor,
        binary_format::kPlainMinor;
    if (report_.major > kMajor)
      refuse(fmt::format(
          "trace format version {}.{} is newer than this causeway reads (up to {}.x); upgrade "
          "causeway",
          report_.major, report_.minor, kMajor));
    if (report_.major < kPlainMajor)
      refuse(fmt::format(
          "trace format version {}.{} is not supported (this causeway reads {}.x to {}.x)",
          report_.major, report_.minor, kPlainMajor, kMajor));
    if (report_.minor > (report_.major == kMajor ? kMinor : kPlainMinor))
      note(fmt::format("written by a newer causeway (format {}.{}); parts it added may be skipped",
                       report_.major, report_.minor));
    if (clock != kClockMonotonic)
      note(fmt::format("unknown clock {} in the header; timestamps are read as CLOCK_MONOTONIC",
                       clock));
  }

  void note(std::string text) {
    if (noted_.insert(text).second) report_.notes.push_back(std::move(text));
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
  void read_chunk(uint64_t pos, uint32_t type, const uint8_t* payload, uint64_t size,
                  InflateJob* job) {
    ++report_.chunks_read;
    const uint32_t stored_type = type;
    const uint64_t stored_size = size;
    chunk_pos_ = pos;
    chunk_compressed_ = job != nullptr;
    try {
      if (job) {
        inflater_.wait(*job);
        if (!job->error.empty()) throw Malformed{job->error};
        type &= ~kCompressedFlag;
        payload = job->data.get();
        size = job->declared;
        id_bound_ += size;
      }
      Cursor c(payload, size);
      switch (static_cast<ChunkType>(type)) {
        case ChunkType::Schema: return read_schema(c);
        case ChunkType::Strings: return read_strings(c);
        case ChunkType::Stacks: return read_stacks(c);
        case ChunkType::Processes: return read_processes(c);
        case ChunkType::Threads: return read_threads(c);
        case ChunkType::Events: return read_events(payload, size);
        case ChunkType::Lost: return read_lost(c);
        case ChunkType::End: seen_end_ = true; return;
        case ChunkType::Maps: return read_maps(c);
        case ChunkType::Losses: return read_losses(c);
      }
      --report_.chunks_read;
      note(
          fmt::format("skipped a {}chunk of unknown type {} at byte {} ({} bytes; from a newer "
                      "causeway?)",
                      job ? "compressed " : "", type, pos, kChunkHeaderSize + stored_size));
    } catch (const Malformed& m) {
      --report_.chunks_read;
      report_.skipped.push_back(
          SkippedRange{pos, kChunkHeaderSize + stored_size,
                       fmt::format("malformed {}: {}", describe_chunk(stored_type), m.what)});
    }
    if (job) inflater_.recycle(*job);  // read: its buffer serves a later chunk
  }

  // ---- schema: file kinds are mapped to the reader's by name ----

  struct FileKind {
    KindId reader = kNoKind;
    std::vector<FieldType> types;      // the file's field types
    std::vector<int> reader_field;     // per file field: index in the reader's kind, or -1
    std::vector<uint32_t> str_fields;  // file field indices holding string ids
    bool identity = false;             // same id, same fields: events copy as they are
  };

  void read_schema(Cursor& c) {
    uint32_t n = c.get<uint32_t>();
    if (n > kNoKind) throw Malformed{fmt::format("{} kinds", n)};
    std::vector<KindDef> kinds;
    for (uint32_t i = 0; i < n; ++i) {
      KindDef k;
      k.name = c.str();
      uint8_t role = c.get<uint8_t>();
      if (role > static_cast<uint8_t>(SpanRole::Close)) throw Malformed{"bad span role"};
      k.span_role = static_cast<SpanRole>(role);
      k.span = c.str();
      k.doc = c.str();
      uint32_t nfields = c.get<uint32_t>();
      if (nfields > c.remaining() / 9) throw Malformed{"field count exceeds the chunk"};
      for (uint32_t f = 0; f < nfields; ++f) {
        FieldDef field;
        field.name = c.str();
        uint8_t type = c.get<uint8_t>();
        if (type > static_cast<uint8_t>(FieldType::Tid)) throw Malformed{"bad field type"};
        field.type = static_cast<FieldType>(type);
        field.doc = c.str();
        k.fields.push_back(std::move(field));
      }
      kinds.push_back(std::move(k));
    }
    apply_schema(kinds);
    have_schema_ = true;
  }

  void apply_schema(const std::vector<KindDef>& kinds) {
    file_kinds_.assign(kinds.size(), FileKind{});
    all_identity_ = true;
    for (size_t i = 0; i < kinds.size(); ++i) {
      const KindDef& k = kinds[i];
      FileKind& fk = file_kinds_[i];
      auto it = reader_kinds_.find(k.name);
      if (it == reader_kinds_.end()) {
        note(
            fmt::format("kind '{}' is not in this causeway's schema; its events are kept with "
                        "the file's fields",
                        k.name));
        it = reader_kinds_.emplace(k.name, out_.schema.add(k)).first;
      }
      fk.reader = it->second;
      const KindDef& mine = out_.schema.kind(fk.reader);
      fk.identity = fk.reader == i && mine.fields.size() == k.fields.size();
      for (uint32_t f = 0; f < k.fields.size(); ++f) {
        const FieldDef& field = k.fields[f];
        fk.types.push_back(field.type);
        if (field.type == FieldType::Str) fk.str_fields.push_back(f);
        int r = out_.schema.field_index(fk.reader, field.name);
        if (r >= 0 && mine.fields[r].type != field.type) {
          note(
              fmt::format("field '{}' of '{}' is {} in the file but {} here; its values are "
                          "dropped",
                          field.name, k.name, field_type_name(field.type),
                          field_type_name(mine.fields[r].type)));
          r = -1;
        } else if (r < 0) {
          note(
              fmt::format("field '{}' of '{}' is not known to this causeway; its values are "
                          "dropped",
                          field.name, k.name));
        }
        fk.reader_field.push_back(r);
        fk.identity &= r == static_cast<int>(f);
      }
      all_identity_ &= fk.identity;
    }
  }

  // Before any schema chunk (it was lost), the file is assumed to use the reader's schema.
  void ensure_schema() {
    if (have_schema_) return;
    note("the schema chunk was lost; events are read with this causeway's schema");
    apply_schema(std::vector<KindDef>(out_.schema.kinds().begin(), out_.schema.kinds().end()));
    have_schema_ = true;
  }

  // ---- strings and stacks: file ids map to reader ids through tables ----

  void read_strings(Cursor& c) {
    uint32_t first = c.get<uint32_t>();
    uint32_t n = c.get<uint32_t>();
    // Ids past what a file this size can hold are damage; refusing them bounds the map.
    if (n > c.remaining() / 4 || uint64_t{first} + n > id_bound_ / 4)
      throw Malformed{"string count exceeds the chunk"};
    std::vector<std::string_view> strings(n);
    for (auto& s : strings) s = c.str();
    if (first > str_map_.size()) strings_identity_ = false;
    if (str_map_.size() < uint64_t{first} + n) str_map_.resize(uint64_t{first} + n, kUnmapped);
    for (uint32_t i = 0; i < n; ++i) {
      StrId id = out_.strings.intern(strings[i]);
      str_map_[first + i] = id;
      strings_identity_ &= id == first + i;
    }
  }

  StrId map_string(uint64_t file_id) {
    if (file_id < str_map_.size() && str_map_[file_id] != kUnmapped) return str_map_[file_id];
    StrId id = out_.strings.intern(fmt::format("?str#{}", file_id));
    if (file_id < str_map_.size())
      str_map_[file_id] = id;
    else
      lost_strings_.emplace(file_id, id);
    ++substituted_strings_;
    strings_identity_ = false;
    return id;
  }

  StrId map_string_cached(uint64_t file_id) {
    if (file_id >= str_map_.size())
      if (auto it = lost_strings_.find(file_id); it != lost_strings_.end()) return it->second;
    return map_string(file_id);
  }

  void read_stacks(Cursor& c) {
    uint32_t first = c.get<uint32_t>();
    uint32_t n = c.get<uint32_t>();
    if (n > c.remaining() / 5 || uint64_t{first} + n > id_bound_ / 5)
      throw Malformed{"stack count exceeds the chunk"};
    std::vector<Stack> stacks(n);
    std::vector<std::vector<uint32_t>> file_symbols(n);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t frames = c.get<uint32_t>();
      uint8_t symbolised = c.get<uint8_t>();
      if (frames > c.remaining() / 8) throw Malformed{"frame count exceeds the chunk"};
      stacks[i].ips.resize(frames);
      copy_bytes(stacks[i].ips.data(), c.take(frames * 8ull), frames * 8ull);
      if (symbolised) {
        file_symbols[i].resize(frames);
        copy_bytes(file_symbols[i].data(), c.take(frames * 4ull), frames * 4ull);
      }
    }
    if (first != out_.stacks.size()) stacks_identity_ = false;
    if (stack_map_.size() < uint64_t{first} + n) stack_map_.resize(uint64_t{first} + n, kUnmapped);
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t sym : file_symbols[i]) stacks[i].symbols.push_back(map_string_cached(sym));
      StackId id = out_.add_stack(std::move(stacks[i]));
      stack_map_[first + i] = id;
      stacks_identity_ &= id == first + i;
    }
  }

  StackId map_stack(uint32_t file_id) {
    if (file_id < stack_map_.size() && stack_map_[file_id] != kUnmapped) return stack_map_[file_id];
    ++events_without_stack_;
    return 0;
  }

  void read_processes(Cursor& c) {
    uint32_t n = c.get<uint32_t>();
    if (n > c.remaining() / 16) throw Malformed{"process count exceeds the chunk"};
    for (uint32_t i = 0; i < n; ++i) {
      ProcessInfo p;
      p.pid = c.get<uint32_t>();
      p.ppid = c.get<uint32_t>();
      p.comm = map_string_cached(c.get<uint32_t>());
      p.exe = map_string_cached(c.get<uint32_t>());
      out_.processes.push_back(p);
    }
  }

  void read_threads(Cursor& c) {
    uint32_t n = c.get<uint32_t>();
    if (n > c.remaining() / 16) throw Malformed{"thread count exceeds the chunk"};
    for (uint32_t i = 0; i < n; ++i) {
      ThreadInfo t;
      t.tid = c.get<uint32_t>();
      t.pid = c.get<uint32_t>();
      t.comm = map_string_cached(c.get<uint32_t>());
      t.kernel = (c.get<uint32_t>() & 1) != 0;
      out_.threads.push_back(t);
      thread_records_.push_back({chunk_pos_, i, chunk_compressed_});
    }
  }

  void read_lost(Cursor& c) {
    uint32_t n = c.get<uint32_t>();
    c.get<uint32_t>();
    if (n > c.remaining() / 24) throw Malformed{"lost-record count exceeds the chunk"};
    for (uint32_t i = 0; i < n; ++i) {
      LostRecord l;
      l.ts = c.get<uint64_t>();
      l.count = c.get<uint64_t>();
      l.cpu = static_cast<uint16_t>(c.get<uint32_t>());
      c.get<uint32_t>();
      out_.lost.push_back(l);
    }
  }

  void read_losses(Cursor& c) {
    uint32_t n = c.get<uint32_t>();
    c.get<uint32_t>();
    if (n > c.remaining() / 24) throw Malformed{"loss-record count exceeds the chunk"};
    for (uint32_t i = 0; i < n; ++i) {
      LossRecord l;
      l.ts = c.get<uint64_t>();
      l.count = c.get<uint64_t>();
      l.kind = static_cast<LossKind>(c.get<uint32_t>());  // an unknown kind is kept
      c.get<uint32_t>();
      out_.losses.push_back(l);
    }
  }

  void read_maps(Cursor& c) {
    uint32_t n = c.get<uint32_t>();
    c.get<uint32_t>();
    if (n > c.remaining() / 48) throw Malformed{"map count exceeds the chunk"};
    for (uint32_t i = 0; i < n; ++i) {
      MapRecord m;
      m.ts = c.get<uint64_t>();
      m.start = c.get<uint64_t>();
      m.end = c.get<uint64_t>();
      m.pgoff = c.get<uint64_t>();
      m.pid = c.get<uint32_t>();
      m.path = map_string_cached(c.get<uint32_t>());
      uint32_t build_id = c.get<uint32_t>();
      m.build_id = build_id == 0 ? 0 : map_string_cached(build_id);
      c.get<uint32_t>();
      out_.maps.push_back(m);
    }
  }

  // ---- events ----

  void read_events(const uint8_t* payload, uint64_t size) {
    ensure_schema();
    if (size < 16) throw Malformed{"payload ends early"};
    uint64_t count = load<uint64_t>(payload), nvalues = load<uint64_t>(payload + 8);
    if (count > size / kDiskEventSize || nvalues > size / 8 ||
        16 + count * kDiskEventSize + nvalues * 8 > size)
      throw Malformed{"event count exceeds the chunk"};
    if (out_.values.size() + nvalues > 0xffffffffull || out_.events.size() + count > 0xffffffffull)
      throw Malformed{"too many events for one trace"};
    const uint8_t* events = payload + 16;
    const uint8_t* values = events + count * kDiskEventSize;
    if (!(all_identity_ && strings_identity_ && stacks_identity_ &&
          copy_events(events, count, values, nvalues)))
      remap_events(events, count, values, nvalues);
    report_.events_read += count;
  }

  // The fast path: the file's ids are the reader's, so both arrays are copied in bulk and
  // then checked in place (false, with nothing added, when an event needs remapping).
  bool copy_events(const uint8_t* events, uint64_t count, const uint8_t* values, uint64_t nvalues) {
    const size_t first_event = out_.events.size(), first_value = out_.values.size();
    // Inserting from typed ranges copies without first zeroing the new elements; the
    // writer keeps payloads 8-byte aligned, so only odd in-memory buffers take memcpy.
    if (reinterpret_cast<uintptr_t>(events) % alignof(Event) == 0) {
      auto* first = reinterpret_cast<const Event*>(events);
      auto* first_v = reinterpret_cast<const uint64_t*>(values);
      out_.events.insert(out_.events.end(), first, first + count);
      out_.values.insert(out_.values.end(), first_v, first_v + nvalues);
    } else {
      out_.events.resize(first_event + count);
      copy_bytes(out_.events.data() + first_event, events, count * kDiskEventSize);
      out_.values.resize(first_value + nvalues);
      copy_bytes(out_.values.data() + first_value, values, nvalues * 8);
    }
    const uint64_t* v = out_.values.data() + first_value;
    const uint64_t nkinds = file_kinds_.size(), nstrings = str_map_.size(),
                   nstacks = stack_map_.size();
    uint64_t expected = 0;
    bool ok = true;
    for (Event *e = out_.events.data() + first_event,
               *end = out_.events.data() + out_.events.size();
         e != end && ok; ++e) {
      ok = e->kind < nkinds && e->values == expected && e->stack < nstacks &&
           expected + file_kinds_[e->kind].types.size() <= nvalues;
      if (!ok) break;
      const FileKind& fk = file_kinds_[e->kind];
      for (uint32_t f : fk.str_fields) ok &= v[expected + f] < nstrings;
      expected += fk.types.size();
      e->values += static_cast<uint32_t>(first_value);
    }
    if (ok && expected == nvalues) return true;
    out_.events.resize(first_event);
    out_.values.resize(first_value);
    return false;
  }

  // The general path: kinds, fields, strings and stacks go through the maps one by one.
  void remap_events(const uint8_t* events, uint64_t count, const uint8_t* values,
                    uint64_t nvalues) {
    // Check first so a bad chunk adds nothing.
    uint64_t expected = 0;
    for (uint64_t i = 0; i < count; ++i) {
      Event e = load<Event>(events + i * kDiskEventSize);
      if (e.kind >= file_kinds_.size())
        throw Malformed{
            fmt::format("event {} has kind {} (the schema has {})", i, e.kind, file_kinds_.size())};
      if (e.values != expected) throw Malformed{fmt::format("event {} has bad value offset", i)};
      expected += file_kinds_[e.kind].types.size();
      if (expected > nvalues) throw Malformed{fmt::format("event {} has values past the chunk", i)};
    }
    if (expected != nvalues) throw Malformed{"value count does not match the events"};
    for (uint64_t i = 0; i < count; ++i) {
      Event e = load<Event>(events + i * kDiskEventSize);
      const FileKind& fk = file_kinds_[e.kind];
      const Event& added = out_.add_event(e.ts, e.tid, fk.reader, e.cpu, map_stack(e.stack));
      for (size_t f = 0; f < fk.types.size(); ++f) {
        int r = fk.reader_field[f];
        if (r < 0) continue;
        uint64_t v = load<uint64_t>(values + (e.values + f) * 8);
        out_.value_ref(added, r) = fk.types[f] == FieldType::Str ? map_string_cached(v) : v;
      }
    }
  }

  void finish() {
    if (!seen_end_ && !stopped_at_limit_)
      note("no end chunk: the recording did not finish, or the file was cut short");
    if (substituted_strings_)
      note(fmt::format("{} strings were lost with their chunks; they read as ?str#ID",
                       substituted_strings_));
    if (events_without_stack_)
      note(fmt::format("{} events refer to stacks that were lost; they have no stack",
                       events_without_stack_));
    // Which process a thread's events belong to decides where a root cause is reported:
    // a thread put in two processes is refused, like the text form refuses it.
    if (auto move = find_unexplained_thread_move(out_)) {
      const ThreadInfo& t = out_.threads[move->entry];
      const ThreadRecord& r = thread_records_[move->entry];
      const std::string where =
          r.compressed
              ? fmt::format("compressed threads chunk at byte {}, record {}", r.chunk, r.index)
              : fmt::format("threads chunk at byte {}, record {} (byte {})", r.chunk, r.index,
                            r.chunk + kChunkHeaderSize + 4 + uint64_t{r.index} * 16);
      refuse(fmt::format(
          "{}: thread {} is declared in process {} after process {}, and no fork event creates "
          "it there (a trace puts a thread in one process)",
          where, t.tid, t.pid, move->from));
    }
    out_.rebuild_indexes();
    out_.sort_maps();
    auto by_time = [](const Event& a, const Event& b) { return a.ts < b.ts; };
    if (!std::is_sorted(out_.events.begin(), out_.events.end(), by_time)) out_.sort_events();
  }

  const uint8_t* data_;
  uint64_t size_;
  // The file's bytes plus those decompressed so far: what bounds the ids a file can hold.
  uint64_t id_bound_ = size_;
  Inflater inflater_;  // declared after data_: joined before anything it reads goes
  Trace& out_;
  const std::string& name_;
  ReadReport report_;
  std::set<std::string> noted_;
  std::unordered_map<std::string, KindId> reader_kinds_;
  std::vector<FileKind> file_kinds_;
  bool have_schema_ = false, all_identity_ = false, seen_end_ = false;
  bool stopped_at_limit_ = false;  // the rest of the file would decompress past the limit
  // Where each entry of out_.threads was read, to name a contradicting one.
  struct ThreadRecord {
    uint64_t chunk = 0;  // byte offset of its chunk
    uint32_t index = 0;  // in the chunk, from 0
    bool compressed = false;
  };
  std::vector<ThreadRecord> thread_records_;
  uint64_t chunk_pos_ = 0;  // of the chunk being read
  bool chunk_compressed_ = false;
  std::vector<StrId> str_map_;
  std::unordered_map<uint64_t, StrId> lost_strings_;
  std::vector<StackId> stack_map_;
  std::function<void(uint64_t)> done_before_;
  bool strings_identity_ = true, stacks_identity_ = true;
  uint64_t substituted_strings_ = 0, events_without_stack_ = 0;
};

// A read-only mapping of a whole file, unmapped on scope exit.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw TraceFormatError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      throw TraceFormatError(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        throw TraceFormatError(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
      }
      data_ = static_cast<const char*>(p);
      ::madvise(p, size_, MADV_SEQUENTIAL);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {data_ ? data_ : "", size_}; }

  // Drops the pages before `offset` from memory (they are re-read from the file if
  // touched again): a 19 M-event trace would otherwise hold the whole ~900 MB file
  // resident beside the trace built from it. Done in steps of 64 MiB.
  void release_before(uint64_t offset) {
    constexpr uint64_t kStep = 64u << 20;
    uint64_t upto = offset & ~(kStep - 1);
    if (!data_ || upto <= released_) return;
    ::madvise(const_cast<char*>(data_) + released_, upto - released_, MADV_DONTNEED);
    released_ = upto;
  }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  uint64_t released_ = 0;
};

}  // namespace

ReadReport read_trace_bytes(std::string_view bytes, Trace& out, const std::string& name) {
  return Reader(bytes, out, name).read();
}

ReadReport read_trace(const std::string& path, Trace& out) {
  MappedFile file(path);
  return Reader(file.bytes(), out, path, [&file](uint64_t pos) { file.release_before(pos); })
      .read();
}

uint64_t decompression_limit(uint64_t file_size) {
  if (const char* env = std::getenv("CAUSEWAY_MAX_DECOMPRESSED"); env && *env) {
    std::string_view text(env);
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    std::string_view unit = text.substr(static_cast<size_t>(end - text.data()));
    unsigned shift = unit.empty()  ? 0
                     : unit == "K" ? 10
                     : unit == "M" ? 20
                     : unit == "G" ? 30
                     : unit == "T" ? 40
                                   : 64;
    if (ec != std::errc{} || end == text.data() || shift == 64 || n > (UINT64_MAX >> shift))
      throw TraceFormatError(fmt::format(
          "CAUSEWAY_MAX_DECOMPRESSED='{}': expected a size in bytes, or with a K, M, G or T "
          "suffix (like 32G)",
          text));
    return n << shift;
  }
  const uint64_t relative =
      file_size > UINT64_MAX / kMaxExpansion ? UINT64_MAX : file_size * kMaxExpansion;
  return std::min(binary_format::kDefaultMaxDecompressed,
                  std::max<uint64_t>(kMaxCompressedPayload, relative));
}

std::optional<TraceInputFormat> parse_trace_input_format(std::string_view name) {
  if (name == "auto") return TraceInputFormat::Auto;
  if (name == "binary") return TraceInputFormat::Binary;
  if (name == "text") return TraceInputFormat::Text;
  if (name == "perf-script") return TraceInputFormat::PerfScript;
  return std::nullopt;
}

ReadReport load_trace(const std::string& path, Trace& out, TraceInputFormat format) {
  MappedFile file(path);
  std::string_view bytes = file.bytes();
  if (format == TraceInputFormat::Auto) {
    const bool binary = bytes.starts_with(std::string_view(binary_format::kFileMagic, 8));
    if (binary)
      format = TraceInputFormat::Binary;
    else if (bytes.starts_with(kTextTraceHeader))
      format = TraceInputFormat::Text;
    // A header line is short; 64 KiB leaves room for perf script --header's comments.
    else if (looks_like_perf_script(bytes.substr(0, 65536)))
      format = TraceInputFormat::PerfScript;
    else
      format = TraceInputFormat::Binary;  // its reader says why it is not a trace
  }
  ReadReport report;
  switch (format) {
    case TraceInputFormat::Auto:
    case TraceInputFormat::Binary:
      return Reader(bytes, out, path, [&file](uint64_t pos) { file.release_before(pos); }).read();
    case TraceInputFormat::Text:
      out = parse_text_trace(make_source(path, std::string(bytes)));
      break;
    case TraceInputFormat::PerfScript:
      out = parse_perf_script(make_source(path, std::string(bytes)), &report.notes);
      report.perf_script = true;
      break;
  }
  report.major = Trace::kFormatMajor;  // the text form's version
  report.events_read = out.events.size();
  return report;
}

}  // namespace cw
