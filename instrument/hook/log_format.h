// The hook event log, DIR/hooks.PID: one file per process image, written through a shared
// mapping while the program runs and read by the recorder at the same time
// (docs/hooks.md). Every field is little-endian and naturally aligned; the counters are
// accessed with atomic loads and stores on both sides.
//
//   [0, 4096)                header: magic, version, pid, clock calibration, counters
//   [notes_offset, +notes)   notes: one fixed-size record per hook request's outcome
//   [hooks_offset, +hooks)   the address of each hook id (events carry the id)
//   [chunks_offset, end)     chunk_count chunks of chunk_size bytes, one thread each
//
// A thread fills one chunk at a time: it takes one the reader has handed back (a pop from
// the free list at `free_head`) or else a fresh one (fetch-add on chunks_claimed), labels
// it (tid, its previous chunk, a claim number; the claim number last, release), then
// appends events and publishes each with a release store of `used`. A chunk is filled
// once per claim. The reader pushes a chunk back on the free list once it has delivered
// every event of a full chunk, and never before: an unread event is never overwritten;
// when no chunk is free the writer counts its events in lost_events.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cw::hook::log {

inline constexpr char kMagic[8] = {'C', 'W', 'H', 'O', 'O', 'K', 'S', '\0'};
inline constexpr uint32_t kVersion = 4;
inline constexpr uint32_t kHeaderBytes = 4096;
inline constexpr uint32_t kNoteBytes = 256;
inline constexpr uint32_t kNoteCapacity = 256;
// Hook ids are 1 .. kHookCapacity (patcher.cc's limit); the table holds the address of
// id N at index N - 1.
inline constexpr uint32_t kHookCapacity = 1024;
inline constexpr uint32_t kChunkHeaderBytes = 64;
// Where the chunks start in a log this library writes.
inline constexpr uint32_t kChunksOffset =
    kHeaderBytes + kNoteBytes * kNoteCapacity + 8 * kHookCapacity;

// An event's `hook` word: the hook id in the low 31 bits, this bit set for an exit.
inline constexpr uint32_t kExitBit = 0x80000000u;

inline constexpr uint32_t kClockTsc = 0;
inline constexpr uint32_t kClockMonotonicNs = 1;

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
  uint32_t hooks_offset;  // hooks_capacity addresses (uint64, atomic), by hook id - 1
  uint32_t hooks_capacity;
  uint32_t chunks_claimed;  // atomic; fresh chunks handed out, may run past chunk_count
  uint32_t notes_used;      // atomic; notes published
  uint64_t lost_events;     // atomic; events dropped because no chunk was free
  uint64_t claims;          // atomic; chunk claims so far (fresh and reused)
  // atomic; the free list, a stack of chunks handed back by the reader: the top chunk's
  // index + 1 (0 = empty) in the low 32 bits, a tag bumped by every push and pop (ABA) in
  // the high 32. Pushed by the reader, popped by the writers, both with compare-exchange.
  uint64_t free_head;
  // TSC -> CLOCK_MONOTONIC: linear through `first` and `latest`. `latest` is refreshed
  // while the program runs under a sequence lock (odd `latest_sequence` = being written).
  ClockPair first;
  uint32_t latest_sequence;
  // What events' `tsc` holds: kClockTsc (TSC ticks, converted through the pairs) or
  // kClockMonotonicNs (CLOCK_MONOTONIC nanoseconds already, the pairs are the identity).
  uint32_t clock;
  ClockPair latest;
};
static_assert(sizeof(Header) <= kHeaderBytes);
static_assert(offsetof(Header, clock) == 108);  // the reader's notes name the byte

struct Note {
  uint32_t fn_index;
  uint32_t length;  // bytes of text, no terminator needed
  char text[kNoteBytes - 8];
};
static_assert(sizeof(Note) == kNoteBytes);

// Chunk numbers in links are index + 1, so that 0 means none.
struct ChunkHeader {
  // atomic; the claim this fill belongs to (1, 2, ... in claim order, per log); 0 until
  // first claimed. Stored last (release) when claimed: the fields below are then valid.
  uint64_t claim;
  // atomic; the claim of the fill last handed back (a reader sets it with
  // compare-exchange before pushing the chunk, so a fill is pushed once).
  uint64_t returned;
  uint64_t prev_claim;  // the claim of the thread's fill before this one (prev_chunk)
  uint32_t tid;         // the claiming thread
  uint32_t used;        // atomic; events published in this fill
  uint32_t prev_chunk;  // the thread's chunk before this one in this log, or 0
  uint32_t next_free;   // atomic; on the free list: the next free chunk, or 0
  uint64_t reserved[3];
};
static_assert(sizeof(ChunkHeader) == kChunkHeaderBytes);

// The function's address is not in the event: the hook id says where to find it (the
// table at hooks_offset, written before the hook is patched in).
struct Event {
  uint64_t tsc;
  uint32_t fn_index;
  uint32_t hook;  // the hook id, | kExitBit for an exit
};
static_assert(sizeof(Event) == 16);

}  // namespace cw::hook::log
