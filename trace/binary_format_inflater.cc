#include "trace/binary_format_inflater.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "trace/binary_format_internal.h"
#include "trace/packed_events.h"

namespace cw::binary_format {

namespace {
std::atomic<uint64_t> buffers_allocated{0};

// Packed events keep the plain payload's counts as their raw prefix, and declare the plain
// payload's size.
bool packed_counts_fit(const InflateJob& job) {
  if (job.prefix != 16) return false;
  const uint64_t count = load<uint64_t>(job.src + kCompressedHeaderSize);
  const uint64_t nvalues = load<uint64_t>(job.src + kCompressedHeaderSize + 8);
  return count <= job.declared / kDiskEventSize && nvalues <= job.declared / 8 &&
         16 + count * kDiskEventSize + nvalues * 8 == job.declared;
}
}  // namespace

uint64_t inflate_buffers_allocated() {
  return buffers_allocated.load(std::memory_order_relaxed);
}

std::shared_ptr<InflateJob> Inflater::submit(const uint8_t* src, uint64_t stored) {
  auto job = std::make_shared<InflateJob>();
  job->src = src;
  job->stored = stored;
  if (stored < kCompressedHeaderSize) {
    job->error = "compressed payload shorter than its header";
  } else {
    job->codec = load<uint32_t>(src);
    job->prefix = load<uint32_t>(src + 4);
    job->declared = load<uint64_t>(src + 8);
    if (job->codec != kCodecZstd && job->codec != kCodecZstdPackedEvents)
      job->error = fmt::format("unknown compression codec {}", job->codec);
    else if (job->declared > kMaxCompressedPayload)
      job->error =
          fmt::format("declares {} bytes once decompressed, more than a chunk may hold ({} bytes)",
                      job->declared, kMaxCompressedPayload);
    else if (job->prefix > job->declared || job->prefix > stored - kCompressedHeaderSize)
      job->error = fmt::format("raw prefix of {} bytes exceeds the chunk", job->prefix);
    else if (job->codec == kCodecZstdPackedEvents && !packed_counts_fit(*job))
      job->error = "packed events whose counts do not match the size declared";
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

void Inflater::recycle(InflateJob& job) {
  if (!job.data) return;
  std::lock_guard lock(mutex_);
  spare_.emplace_back(std::move(job.data), job.capacity);
}

void Inflater::wait(InflateJob& job) {
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

void Inflater::work() {
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

bool Inflater::reuse(InflateJob& job) {
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

void Inflater::run(InflateJob& job, ZSTD_DCtx* dctx, Inflater& pool) {
  if (!dctx) {
    job.error = "cannot set up zstd decompression";
    return;
  }
  const uint8_t* frame = job.src + kCompressedHeaderSize + job.prefix;
  const size_t available = job.stored - kCompressedHeaderSize - job.prefix;
  const uint64_t expected = job.declared - job.prefix;
  // Packed events take at most half again their plain size: the frame may hold no more.
  const bool packed = job.codec == kCodecZstdPackedEvents;
  const uint64_t frame_limit = packed ? packed_events_limit(expected) : expected;
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
  if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR) {
    job.error = "the zstd frame does not state its size";
    return;
  }
  if (packed ? content > frame_limit : content != expected) {
    job.error = packed ? fmt::format(
                             "the zstd frame holds {} bytes, more than {} events packed "
                             "may take ({} bytes)",
                             content, load<uint64_t>(job.src + kCompressedHeaderSize), frame_limit)
                       : fmt::format("the zstd frame holds {} bytes, the chunk declares {}",
                                     content, expected);
    return;
  }
  try {
    if (!pool.reuse(job)) {
      job.capacity = std::max<uint64_t>(job.declared, 1);
      job.data.reset(new uint8_t[job.capacity]);
      buffers_allocated.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (const std::bad_alloc&) {
    job.error = fmt::format("out of memory decompressing {} bytes", job.declared);
    return;
  }
  copy_bytes(job.data.get(), job.src + kCompressedHeaderSize, job.prefix);
  if (packed) {
    // Each decompressing thread keeps its own buffer for the packed bytes.
    thread_local std::vector<uint8_t> scratch;
    try {
      scratch.resize(content);
    } catch (const std::bad_alloc&) {
      job.error = fmt::format("out of memory decompressing {} bytes", content);
      job.data.reset();
      return;
    }
    size_t got = ZSTD_decompressDCtx(dctx, scratch.data(), content, frame, frame_size);
    if (ZSTD_isError(got) || got != content) {
      job.error = ZSTD_isError(got)
                      ? fmt::format("zstd: {}", ZSTD_getErrorName(got))
                      : fmt::format("the zstd frame held {} bytes, not {}", got, content);
      job.data.reset();
      return;
    }
    const uint64_t count = load<uint64_t>(job.data.get());
    const uint64_t nvalues = load<uint64_t>(job.data.get() + 8);
    std::string why;
    uint8_t* events = job.data.get() + 16;
    if (!unpack_events(scratch.data(), content, count, nvalues, events,
                       events + count * kDiskEventSize, &why)) {
      job.error = "packed events: " + why;
      job.data.reset();
    }
    return;
  }
  size_t got = ZSTD_decompressDCtx(dctx, job.data.get() + job.prefix, expected, frame, frame_size);
  if (ZSTD_isError(got) || got != expected) {
    job.error = ZSTD_isError(got)
                    ? fmt::format("zstd: {}", ZSTD_getErrorName(got))
                    : fmt::format("the zstd frame held {} bytes, not {}", got, expected);
    job.data.reset();
  }
}

}  // namespace cw::binary_format
