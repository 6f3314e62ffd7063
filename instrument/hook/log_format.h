// The hook event log, DIR/hooks.PID: one file per process image, written through a shared
// mapping while the program runs and read by the recorder at the same time
// (docs/hooks.md). Every field is little-endian and naturally aligned; the counters are
// accessed with atomic loads and stores on both sides.
//
//   [0, 4096)                header: magic, version, pid, clock calibration, counters
//   [notes_offset, +notes)   notes: one fixed-size record per hook request's outcome
//   [chunks_offset, end)     chunk_count chunks of chunk_size bytes, one thread each
//
// A thread claims a whole chunk (fetch-add on chunks_claimed), writes its tid, then
// appends events and publishes each with a release store of `used`.
#pragma once

#include <cstdint>

namespace cw::hook::log {

inline constexpr char kMagic[8] = {'C', 'W', 'H', 'O', 'O', 'K', 'S', '\0'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kHeaderBytes = 4096;
inline constexpr uint32_t kNoteBytes = 256;
inline constexpr uint32_t kNoteCapacity = 256;
inline constexpr uint32_t kChunkHeaderBytes = 16;

// Event kinds.
inline constexpr uint32_t kEnter = 0;
inline constexpr uint32_t kExit = 1;

// A TSC reading and CLOCK_MONOTONIC read at the same moment (bracketed, best of several).
struct ClockPair {
  uint64_t tsc;
  uint64_t ns;
};

struct Header {
  char magic[8];  // written last, so a reader never sees a half-made header
  uint32_t version;
  uint32_t pid;
  uint32_t notes_offset;
  uint32_t notes_capacity;
  uint32_t chunks_offset;
  uint32_t chunk_size;
  uint32_t chunk_count;
  uint32_t event_size;
  uint64_t file_size;
  uint32_t chunks_claimed;  // atomic; may run past chunk_count once the file is full
  uint32_t notes_used;      // atomic; notes published
  uint64_t lost_events;     // atomic; events dropped because no chunk was left
  // TSC -> CLOCK_MONOTONIC: linear through `first` and `latest`. `latest` is refreshed
  // while the program runs under a sequence lock (odd `latest_sequence` = being written).
  ClockPair first;
  uint32_t latest_sequence;
  uint32_t reserved;
  ClockPair latest;
};
static_assert(sizeof(Header) <= kHeaderBytes);

struct Note {
  uint32_t fn_index;
  uint32_t length;  // bytes of text, no terminator needed
  char text[kNoteBytes - 8];
};
static_assert(sizeof(Note) == kNoteBytes);

struct ChunkHeader {
  uint32_t tid;  // atomic; 0 until the claiming thread has written it
  uint32_t reserved;
  uint64_t used;  // atomic; events published in this chunk
};
static_assert(sizeof(ChunkHeader) == kChunkHeaderBytes);

struct Event {
  uint64_t tsc;
  uint32_t fn_index;
  uint32_t kind;  // kEnter or kExit
  uint64_t address;
};
static_assert(sizeof(Event) == 24);

}  // namespace cw::hook::log
