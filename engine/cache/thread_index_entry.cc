// The thread index entry (cache.h): each thread's events, switches and system calls
// (engine::ThreadEvents), page aligned, mapped back instead of made by a pass over every
// event.
#include <sys/mman.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/entry_file.h"

namespace cw::cache {

namespace {

// The index's arrays in Parts order: tids, the three lists, their three offsets. All have
// 4-byte elements.
constexpr size_t kIndexArrays = 7;
static_assert(sizeof(Tid) == sizeof(uint32_t));

struct IndexMeta {
  uint64_t offset[kIndexArrays], count[kIndexArrays];
};

template <class Parts, class F>
void for_each_index_array(Parts& p, F&& f) {
  f(0, p.tids);
  f(1, p.events);
  f(2, p.switches);
  f(3, p.syscalls);
  f(4, p.events_at);
  f(5, p.switches_at);
  f(6, p.syscalls_at);
}

}  // namespace

bool save_thread_index(const Folder& dir, const Key& key, const engine::ThreadEvents& index,
                       std::string* why) {
  IndexMeta meta{};
  std::vector<std::string_view> parts = {{reinterpret_cast<const char*>(&meta), sizeof meta}};
  std::vector<std::string> pads;
  pads.reserve(kIndexArrays);
  uint64_t at = kHeaderSize + sizeof meta;
  for_each_index_array(index.parts(), [&](size_t i, const auto& column) {
    meta.offset[i] = page_up(at);
    meta.count[i] = column.size();
    pads.emplace_back(meta.offset[i] - at, '\0');
    parts.push_back(pads.back());
    parts.push_back({reinterpret_cast<const char*>(column.data()), column.size() * 4});
    at = meta.offset[i] + column.size() * 4;
  });
  return write_entry_parts(dir, kThreadIndexName, EntryKind::ThreadIndex, key, parts, why);
}

std::optional<engine::ThreadEvents> load_thread_index(const Folder& dir, const Key& key,
                                                      uint64_t events, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<engine::ThreadEvents> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  // Writable (copy-on-write) because Column views hold non-const pointers; nothing writes.
  CheckedOnce once;
  auto m = map_entry(dir, kThreadIndexName, EntryKind::ThreadIndex, key, true, sizeof(IndexMeta),
                     why, false, &once);
  if (!m) return std::nullopt;
  try {
    engine::ThreadEvents index =
        decode_thread_index(m->keep, m->base, m->size, events, once.before);
    if (!once.before) {
      // The check read every list through the mapping: let those pages go again (nothing
      // was written to them), so that only the lists of the threads a diagnosis looks at
      // count in the process's memory, as the mapping was made for.
      madvise(m->base, m->size, MADV_DONTNEED);
      record_checked(dir, kThreadIndexName, once);
    }
    return index;
  } catch (const CorruptEntry& e) {
    return fail(e.what());
  }
}

engine::ThreadEvents decode_thread_index(const std::shared_ptr<const void>& keep, char* base,
                                         uint64_t size, uint64_t events, bool lists_checked) {
  if (size < kHeaderSize + sizeof(IndexMeta)) throw CorruptEntry("truncated header");
  IndexMeta meta{};
  std::memcpy(&meta, base + kHeaderSize, sizeof meta);
  engine::ThreadEvents::Parts parts;
  for_each_index_array(parts, [&](size_t i, auto& column) {
    using T = typename std::decay_t<decltype(column)>::value_type;
    if (meta.offset[i] % kPage || meta.offset[i] > size ||
        meta.count[i] > (size - meta.offset[i]) / sizeof(T))
      throw CorruptEntry("arrays outside the entry");
    column = Column<T>::view(keep, reinterpret_cast<T*>(base + meta.offset[i]), meta.count[i]);
  });
  try {
    return engine::ThreadEvents(std::move(parts), events, lists_checked);
  } catch (const std::invalid_argument& e) {
    throw CorruptEntry(e.what());
  }
}

}  // namespace cw::cache
