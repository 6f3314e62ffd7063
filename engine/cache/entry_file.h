// An entry's file as every entry kind reads it (engine/cache only: not part of cache.h):
// opened, its header checked, its payload mapped or read, the checksum verified. The header
// (cache.h) is written by write_entry_parts; kHeaderSize bytes, the payload's checksum
// (BlockHasher) last.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/cache/cache.h"
#include "engine/cache/checked_entries.h"
#include "engine/cache/encoding.h"

namespace cw::cache {

// Entries whose arrays are mapped back keep them page aligned in the file, so that each
// array is a view of the mapping.
inline constexpr uint64_t kPage = 4096;
inline uint64_t page_up(uint64_t n) {
  return (n + kPage - 1) & ~(kPage - 1);
}

// The payload's checksum as the header of an entry records it.
inline uint64_t header_checksum(const unsigned char* header) {
  return load_le<uint64_t>(header + 56);
}

// The checksum of the payload of the entry open at `fd`, read in pieces.
std::optional<uint64_t> checksum_by_reading(int fd, uint64_t size);

// An entry's file mapped whole, its header and checksum verified.
struct MappedEntry {
  std::shared_ptr<const void> keep;  // unmaps
  char* base = nullptr;
  uint64_t size = 0;
  std::string_view payload;
};

// Read-only and populated from the page cache (no copy) by the checksum's reads, on every
// CPU (faster than MAP_POPULATE's one CPU and then the checksum); with `writable`, made
// writable after: a write through it copies that page (MAP_PRIVATE), never the file.
// (Populating a writable private mapping would copy every page up front.)
// Without `populate`, the checksum is taken by reading the file (not through the
// mapping) and the mapping is left to fault in what its user touches: for an entry of
// which a run reads little (the thread index: the lists of the threads a diagnosis looks
// at), whose pages would otherwise all count in the process's memory.
// With `once`: an entry checked in full by an earlier run, unchanged since
// (checked_entries.h), is not hashed again (`once->before`, and its caller skips its own
// check; with `populate`, mapped with MAP_POPULATE instead); else `once` says what its
// caller records once it has checked it in full.
std::optional<MappedEntry> map_entry(const Folder& dir, std::string_view name, EntryKind kind,
                                     const Key& key, bool writable, uint64_t min_payload,
                                     std::string* why, bool populate = true,
                                     CheckedOnce* once = nullptr);

// An entry opened for reading with its header read into `header` and checked (magic,
// version, kind, key, size); -1 with the reason otherwise ("" when there is no entry).
int open_checked_entry(const Folder& dir, std::string_view name, EntryKind kind, const Key& key,
                       uint64_t* size, unsigned char (&header)[kHeaderSize], std::string* why);

}  // namespace cw::cache
