// Decompressing a binary trace's compressed chunks (docs/trace-format.md, "Compression")
// on worker threads ahead of the reader, which takes the results in file order.
#pragma once

#include <zstd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cw::binary_format {

// A compressed chunk's payload, decompressed by an Inflater.
struct InflateJob {
  const uint8_t* src = nullptr;  // the stored payload (header, prefix, frame, padding)
  uint64_t stored = 0;
  uint64_t declared = 0;  // the payload's size once decompressed
  uint32_t prefix = 0;
  uint32_t codec = 0;
  std::unique_ptr<uint8_t[]> data;  // `declared` bytes when `error` is empty
  uint64_t capacity = 0;            // of `data`, which may be a reused buffer
  std::string error;
  bool claimed = false, done = false;
};

// How many decompression buffers the Inflaters of this process have allocated (a buffer
// reused for a later chunk is not counted again): a read should allocate about as many as
// it holds decompressed at once, not one per chunk.
uint64_t inflate_buffers_allocated();

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
  std::shared_ptr<InflateJob> submit(const uint8_t* src, uint64_t stored);

  // Takes back a read job's buffer for a later job, so that a read allocates about as many
  // buffers as it holds decompressed at once (17 for a 19 M-event trace), not one per chunk
  // (568). The reader recycles every job it has read, whatever became of its chunk.
  void recycle(InflateJob& job);

  // Waits for the job, its `data` or `error` then set. Meanwhile this thread decompresses
  // too: the job itself when no worker has taken it, else a later one.
  void wait(InflateJob& job);

 private:
  void work();
  // A spare buffer of at least `bytes`, or none.
  bool reuse(InflateJob& job);
  static void run(InflateJob& job, ZSTD_DCtx* dctx, Inflater& pool);

  std::mutex mutex_;
  std::condition_variable work_, done_;
  std::deque<std::shared_ptr<InflateJob>> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
  ZSTD_DCtx* own_ = nullptr;                                            // the reader thread's
  std::vector<std::pair<std::unique_ptr<uint8_t[]>, uint64_t>> spare_;  // buffer, capacity
};

}  // namespace cw::binary_format
