#include "instrument/hook/hook_log_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <utility>

#include "instrument/hook/atomic_word.h"
#include "instrument/hook/log_format.h"

namespace cw::hook {

namespace {

// `first` and `latest`, `latest` read under its sequence lock. A writer killed while
// holding the lock leaves it odd forever: after many tries the pair is taken as it is
// (a process killed cannot be half-way through it any more).
void calibration(const log::Header* header, log::ClockPair* first, log::ClockPair* latest) {
  *first = header->first;
  for (int attempt = 0;; ++attempt) {
    const uint32_t before = load_acquire(&header->latest_sequence);
    latest->tsc = __atomic_load_n(&header->latest.tsc, __ATOMIC_RELAXED);
    latest->ns = __atomic_load_n(&header->latest.ns, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const bool stable =
        !(before & 1) && __atomic_load_n(&header->latest_sequence, __ATOMIC_RELAXED) == before;
    if (stable || attempt == 100000) return;
  }
}

}  // namespace

// What the reader knows of one chunk: the fill it last saw (its claim number) and how much
// of it was delivered.
struct ChunkState {
  uint64_t claim = 0;  // 0: no fill seen yet
  uint32_t tid = 0;
  uint32_t delivered = 0;
  bool handed_back = false;  // full, delivered, and pushed on the free list
};

struct HookLogReader::Log {
  std::string path;
  uint8_t* base = nullptr;
  size_t size = 0;
  log::Header* header = nullptr;
  bool writable = false;  // mapped read-write: full chunks can be handed back
  uint32_t events_per_chunk = 0;
  uint32_t notes_taken = 0;
  std::vector<ChunkState> chunks;
  bool truncated = false;
  // The time last delivered for each thread. Each poll converts TSC ticks with the
  // calibration it reads, and `latest` moves between polls (early on, 1 ms after `first`,
  // with a slope off by up to a part in a thousand): the same tick would convert to a
  // different time, and a thread's first event of a poll could land before its last of
  // the poll before. A thread's events are delivered in order, so its times must not go
  // back: each is at least the one before (the clamp is within the calibration's error).
  std::unordered_map<uint32_t, uint64_t> last_ts;

  log::ChunkHeader* chunk_header(uint32_t index) const {
    return reinterpret_cast<log::ChunkHeader*>(base + header->chunks_offset +
                                               uint64_t{index} * header->chunk_size);
  }

  // Whether the file still covers the mapping: reading a page past its end would raise
  // SIGBUS, so a log something truncated is given up (noted once). A removed file is
  // still whole behind the mapping.
  bool intact(std::vector<HookNote>* notes) {
    if (truncated) return false;
    struct stat info {};
    if (stat(path.c_str(), &info) != 0 || static_cast<size_t>(info.st_size) >= size) return true;
    truncated = true;
    notes->push_back({header->pid, 0xffffffff,
                      "bad hook log " + path + ": truncated to " + std::to_string(info.st_size) +
                          " bytes (from " + std::to_string(size) +
                          ") while being read; no more is read from it"});
    return false;
  }

  // Starts following `index`'s fill `claim` (its label read after the claim, acquire).
  // A fill some other reader already handed back is skipped: its events may be gone.
  void follow(uint32_t index, uint64_t claim) {
    const log::ChunkHeader* chunk = chunk_header(index);
    chunks[index] = {claim, chunk->tid, 0, load_acquire(&chunk->returned) == claim};
  }

  // Pushes a full, delivered chunk on the free list for the writers to fill again. The
  // release orders every read of its events before a writer's pop (acquire) and rewrite.
  // `returned` goes from an older claim to this one once, so the fill is pushed once even
  // if another reader delivered it too.
  void hand_back(uint32_t index) {
    ChunkState& state = chunks[index];
    state.handed_back = true;
    if (!writable) return;
    log::ChunkHeader* chunk = chunk_header(index);
    uint64_t returned = load_acquire(&chunk->returned);
    if (returned == state.claim ||
        !__atomic_compare_exchange_n(&chunk->returned, &returned, state.claim, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return;
    uint64_t old = __atomic_load_n(&header->free_head, __ATOMIC_RELAXED);
    do __atomic_store_n(&chunk->next_free, static_cast<uint32_t>(old), __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&header->free_head, &old,
                                        (((old >> 32) + 1) << 32) | (index + 1), false,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  }

  ~Log() {
    if (base) munmap(base, size);
  }
};

HookLogReader::HookLogReader(std::string dir) : dir_(std::move(dir)) {}
HookLogReader::~HookLogReader() = default;

void HookLogReader::open_new_logs() {
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("hooks.", 0) == 0 && std::find(seen_.begin(), seen_.end(), name) == seen_.end())
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    seen_.push_back(name);
    const std::string path = dir_ + "/" + name;
    auto reject = [&](const std::string& why) {
      notes_.push_back({0, 0xffffffff, "bad hook log " + path + ": " + why});
    };
    // Read-write to hand chunks back; read-only (nothing recycled: the log fills up) when
    // this reader may not write the file.
    bool writable = true;
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS)) {
      writable = false;
      fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) {
      reject(std::string("cannot open: ") + strerror(errno));
      continue;
    }
    struct stat info {};
    fstat(fd, &info);
    const size_t size = static_cast<size_t>(info.st_size);
    void* memory =
        size >= log::kHeaderBytes
            ? mmap(nullptr, size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0)
            : MAP_FAILED;
    close(fd);
    if (memory == MAP_FAILED) {
      reject("shorter than its header (" + std::to_string(size) + " bytes) or unmappable");
      continue;
    }
    auto log = std::make_unique<Log>();
    log->path = path;
    log->base = static_cast<uint8_t*>(memory);
    log->size = size;
    log->writable = writable;
    auto* header = reinterpret_cast<log::Header*>(memory);
    if (memcmp(header->magic, log::kMagic, sizeof log::kMagic) != 0) {
      reject("no CWHOOKS magic at byte 0");
      continue;
    }
    if (header->version != log::kVersion) {
      reject("version " + std::to_string(header->version) + " at byte 8, this reader reads " +
             std::to_string(log::kVersion));
      continue;
    }
    const uint64_t notes_end =
        uint64_t{header->notes_offset} + uint64_t{header->notes_capacity} * log::kNoteBytes;
    const uint64_t chunks_end =
        uint64_t{header->chunks_offset} + uint64_t{header->chunk_count} * header->chunk_size;
    const uint64_t hooks_end =
        uint64_t{header->hooks_offset} + uint64_t{header->hooks_capacity} * sizeof(uint64_t);
    if (header->event_size != sizeof(log::Event) || header->file_size > size ||
        notes_end > header->chunks_offset || chunks_end > header->file_size ||
        header->hooks_offset < notes_end || hooks_end > header->chunks_offset ||
        header->hooks_offset % 8 != 0 ||
        header->chunk_size < log::kChunkHeaderBytes + sizeof(log::Event) ||
        header->chunk_size % 64 != 0 || header->chunks_offset % 64 != 0 ||
        header->notes_offset < log::kHeaderBytes) {
      reject("inconsistent layout in the header (sizes and offsets at bytes 16-56)");
      continue;
    }
    if (header->clock != log::kClockTsc && header->clock != log::kClockMonotonicNs) {
      reject("unknown clock " + std::to_string(header->clock) + " at byte 108");
      continue;
    }
    if (header->clock == log::kClockMonotonicNs && !clock_noted_) {
      clock_noted_ = true;
      notes_.push_back({0, 0xffffffff,
                        "clock: the TSC is not the kernel's clock here; hooked calls are "
                        "timestamped with CLOCK_MONOTONIC through the vDSO (slower per call)"});
    }
    log->header = header;
    log->events_per_chunk =
        static_cast<uint32_t>((header->chunk_size - log::kChunkHeaderBytes) / sizeof(log::Event));
    log->chunks.assign(header->chunk_count, {});
    logs_.push_back(std::move(log));
  }
}

size_t HookLogReader::poll(const std::function<void(const HookEvent&)>& sink) {
  open_new_logs();
  size_t count = 0;
  for (auto& log_ptr : logs_) {
    Log& log = *log_ptr;
    if (!log.intact(&notes_)) continue;
    const log::Header* header = log.header;
    log::ClockPair first, latest;
    calibration(header, &first, &latest);
    const long double ns_per_tick =
        latest.tsc > first.tsc
            ? static_cast<long double>(latest.ns - first.ns) / (latest.tsc - first.tsc)
            : 0;
    const uint32_t capacity = log.events_per_chunk;
    const auto* hooks = reinterpret_cast<const uint64_t*>(log.base + header->hooks_offset);

    // Delivers what is published in `index`'s current fill, after the rest of the fill
    // the same thread had before it: that one may have been seen with fewer events (or,
    // reused, not at all) earlier in this poll, and it came first.
    std::vector<log::Event> copied;
    auto deliver = [&](auto& self, uint32_t index, int depth) -> void {
      ChunkState& state = log.chunks[index];
      if (state.handed_back || state.delivered >= capacity) return;
      const log::ChunkHeader* chunk = log.chunk_header(index);
      const uint32_t prev = chunk->prev_chunk;
      if (prev != 0 && prev <= log.chunks.size() && depth < 64) {
        const uint64_t prev_claim = chunk->prev_claim;
        if (log.chunks[prev - 1].claim != prev_claim &&
            load_acquire(&log.chunk_header(prev - 1)->claim) == prev_claim)
          log.follow(prev - 1, prev_claim);
        // Otherwise that fill was delivered and handed back already (the reader hands back
        // only what it has delivered, so it cannot have been refilled before).
        if (log.chunks[prev - 1].claim == prev_claim) self(self, prev - 1, depth + 1);
      }
      const uint32_t used = std::min(load_acquire(&chunk->used), capacity);
      if (used <= state.delivered) return;
      const auto* events = reinterpret_cast<const log::Event*>(
          reinterpret_cast<const uint8_t*>(chunk) + log::kChunkHeaderBytes);
      copied.assign(events + state.delivered, events + used);
      // Still the same fill? Only if another reader handed it back could a writer have
      // reused it; what was copied is then not this fill's, and dropped.
      __atomic_thread_fence(__ATOMIC_ACQUIRE);
      if (__atomic_load_n(&chunk->claim, __ATOMIC_RELAXED) != state.claim) {
        state.handed_back = true;
        return;
      }
      for (const log::Event& event : copied) {
        const long double since =
            static_cast<long double>(static_cast<int64_t>(event.tsc - first.tsc));
        HookEvent out;
        out.ts =
            header->clock == log::kClockMonotonicNs
                ? event.tsc
                : static_cast<uint64_t>(static_cast<long double>(first.ns) + since * ns_per_tick);
        uint64_t& last = log.last_ts[state.tid];
        out.ts = std::max(out.ts, last);
        last = out.ts;
        out.pid = header->pid;
        out.tid = state.tid;
        out.fn_index = event.fn_index;
        out.exit = (event.hook & log::kExitBit) != 0;
        const uint32_t hook = event.hook & ~log::kExitBit;
        out.address = hook != 0 && hook <= header->hooks_capacity
                          ? __atomic_load_n(&hooks[hook - 1], __ATOMIC_RELAXED)
                          : 0;
        sink(out);
        ++count;
      }
      state.delivered = used;
      // Full: its thread has moved on and will not write it again.
      if (state.delivered == capacity) log.hand_back(index);
    };

    // Every chunk with a fill not yet delivered, in claim order (a thread's fills come in
    // claim order).
    std::vector<uint32_t> open;
    const uint32_t claimed = std::min(load_acquire(&header->chunks_claimed), header->chunk_count);
    for (uint32_t c = 0; c < claimed; ++c) {
      const uint64_t claim = load_acquire(&log.chunk_header(c)->claim);
      if (claim == 0) continue;  // fresh, its label not written yet
      if (claim != log.chunks[c].claim) log.follow(c, claim);
      const ChunkState& state = log.chunks[c];
      if (!state.handed_back && state.delivered < capacity) open.push_back(c);
    }
    std::sort(open.begin(), open.end(),
              [&](uint32_t a, uint32_t b) { return log.chunks[a].claim < log.chunks[b].claim; });
    for (uint32_t c : open) deliver(deliver, c, 0);
  }
  return count;
}

std::vector<HookNote> HookLogReader::take_notes() {
  open_new_logs();
  for (auto& log : logs_) {
    if (!log->intact(&notes_)) continue;
    const log::Header* header = log->header;
    const uint32_t used = std::min(load_acquire(&header->notes_used), header->notes_capacity);
    for (; log->notes_taken < used; ++log->notes_taken) {
      const auto* note = reinterpret_cast<const log::Note*>(
          log->base + header->notes_offset + uint64_t{log->notes_taken} * log::kNoteBytes);
      const size_t length = std::min<size_t>(note->length, sizeof note->text);
      notes_.push_back({header->pid, note->fn_index, std::string(note->text, length)});
    }
  }
  return std::exchange(notes_, {});
}

uint64_t HookLogReader::lost() const {
  uint64_t total = 0;
  for (const auto& log : logs_)
    total += __atomic_load_n(&log->header->lost_events, __ATOMIC_RELAXED);
  return total;
}

}  // namespace cw::hook
