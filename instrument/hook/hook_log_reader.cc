#include "instrument/hook/hook_log_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
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

struct HookLogReader::Log {
  std::string path;
  const uint8_t* base = nullptr;
  size_t size = 0;
  const log::Header* header = nullptr;
  uint32_t events_per_chunk = 0;
  uint32_t notes_taken = 0;
  uint32_t first_open_chunk = 0;    // chunks below are full and delivered
  std::vector<uint32_t> delivered;  // per chunk
  bool truncated = false;

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

  ~Log() {
    if (base) munmap(const_cast<uint8_t*>(base), size);
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
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      reject(std::string("cannot open: ") + strerror(errno));
      continue;
    }
    struct stat info {};
    fstat(fd, &info);
    const size_t size = static_cast<size_t>(info.st_size);
    void* memory =
        size >= log::kHeaderBytes ? mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (memory == MAP_FAILED) {
      reject("shorter than its header (" + std::to_string(size) + " bytes) or unmappable");
      continue;
    }
    auto log = std::make_unique<Log>();
    log->path = path;
    log->base = static_cast<const uint8_t*>(memory);
    log->size = size;
    const auto* header = reinterpret_cast<const log::Header*>(memory);
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
    if (header->event_size != sizeof(log::Event) || header->file_size > size ||
        notes_end > header->chunks_offset || chunks_end > header->file_size ||
        header->chunk_size < log::kChunkHeaderBytes + sizeof(log::Event) ||
        header->notes_offset < log::kHeaderBytes) {
      reject("inconsistent layout in the header (sizes and offsets at bytes 16-48)");
      continue;
    }
    log->header = header;
    log->events_per_chunk =
        static_cast<uint32_t>((header->chunk_size - log::kChunkHeaderBytes) / sizeof(log::Event));
    log->delivered.assign(header->chunk_count, 0);
    logs_.push_back(std::move(log));
  }
}

size_t HookLogReader::poll(const std::function<void(const HookEvent&)>& sink) {
  open_new_logs();
  size_t count = 0;
  for (auto& log : logs_) {
    if (!log->intact(&notes_)) continue;
    const log::Header* header = log->header;
    log::ClockPair first, latest;
    calibration(header, &first, &latest);
    const long double ns_per_tick =
        latest.tsc > first.tsc
            ? static_cast<long double>(latest.ns - first.ns) / (latest.tsc - first.tsc)
            : 0;
    const uint32_t claimed = std::min(load_acquire(&header->chunks_claimed), header->chunk_count);
    bool all_full_so_far = true;
    for (uint32_t c = log->first_open_chunk; c < claimed; ++c) {
      const uint8_t* chunk = log->base + header->chunks_offset + uint64_t{c} * header->chunk_size;
      const auto* chunk_header = reinterpret_cast<const log::ChunkHeader*>(chunk);
      const uint32_t tid = load_acquire(&chunk_header->tid);
      // tid 0: claimed but not yet labelled; no later chunk of that thread can be visible.
      const uint64_t used =
          tid ? std::min<uint64_t>(load_acquire(&chunk_header->used), log->events_per_chunk) : 0;
      const auto* events = reinterpret_cast<const log::Event*>(chunk + log::kChunkHeaderBytes);
      for (uint64_t e = log->delivered[c]; e < used; ++e) {
        const log::Event& event = events[e];
        const long double since =
            static_cast<long double>(static_cast<int64_t>(event.tsc - first.tsc));
        HookEvent out;
        out.ts = static_cast<uint64_t>(static_cast<long double>(first.ns) + since * ns_per_tick);
        out.pid = header->pid;
        out.tid = tid;
        out.fn_index = event.fn_index;
        out.exit = event.kind == log::kExit;
        out.address = event.address;
        sink(out);
        ++count;
      }
      log->delivered[c] = static_cast<uint32_t>(used);
      if (all_full_so_far && used == log->events_per_chunk)
        log->first_open_chunk = c + 1;
      else
        all_full_so_far = false;
    }
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
