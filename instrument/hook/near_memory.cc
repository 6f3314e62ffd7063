#include "instrument/hook/near_memory.h"

#include <errno.h>
#include <sys/mman.h>

#include <cstdio>

namespace cw::hook {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kSlotsPerPage = kPage / kSlotBytes;
// Lowest address mmap accepts by default (vm.mmap_min_addr), and the top of user space.
constexpr uint64_t kLowest = 0x10000;
constexpr uint64_t kHighest = 0x7ffffffff000;
constexpr unsigned kMaxPages = 1024;

struct Page {
  uint64_t base;
  uint32_t used;
};
Page pages[kMaxPages];
unsigned page_count = 0;

uint64_t distance(uint64_t a, uint64_t b) {
  return a > b ? a - b : b - a;
}

// The free page nearest `near` in reach, or 0. A gap's lowest page is not used right above
// the heap (brk grows into it), nor its highest page right below the stack.
uint64_t nearest_free_page(uint64_t near, const ProcMaps& maps) {
  uint64_t best = 0;
  auto consider = [&](uint64_t candidate) {
    if (candidate < kLowest || candidate + kPage > kHighest) return;
    if (!within_rel32(candidate, near)) return;
    if (!best || distance(candidate, near) < distance(best, near)) best = candidate;
  };
  uint64_t previous_end = kLowest;
  bool previous_heap = false;
  for (size_t i = 0; i <= maps.size(); ++i) {
    const uint64_t gap_end = i < maps.size() ? maps[i].start : kHighest;
    const bool next_stack = i < maps.size() && maps[i].stack;
    if (gap_end > previous_end && gap_end - previous_end >= kPage) {
      if (!previous_heap) consider(previous_end);
      if (!next_stack) consider(gap_end - kPage);
    }
    if (i < maps.size()) {
      if (maps[i].end > previous_end) previous_end = maps[i].end;
      previous_heap = maps[i].heap;
    }
  }
  return best;
}

}  // namespace

bool within_rel32(uint64_t a, uint64_t b) {
  // Margin: both ends of a page and the instruction lengths around them.
  return distance(a, b) < (uint64_t{1} << 31) - 2 * kPage;
}

void release_slot(uint64_t slot) {
  for (unsigned i = 0; i < page_count; ++i)
    if (pages[i].used && slot == pages[i].base + kSlotBytes * (pages[i].used - 1)) {
      --pages[i].used;
      return;
    }
}

uint64_t allocate_slot(uint64_t near, const ProcMaps& maps, char* reason, size_t reason_size) {
  for (unsigned i = 0; i < page_count; ++i)
    if (pages[i].used < kSlotsPerPage && within_rel32(pages[i].base, near))
      return pages[i].base + kSlotBytes * pages[i].used++;
  if (page_count == kMaxPages) {
    snprintf(reason, reason_size, "no trampoline memory left (%u pages in use)", kMaxPages);
    return 0;
  }
  ProcMaps fresh;
  const ProcMaps* current = &maps;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const uint64_t candidate = nearest_free_page(near, *current);
    if (!candidate) break;
    void* got = mmap(reinterpret_cast<void*>(candidate), kPage, PROT_READ | PROT_EXEC,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == reinterpret_cast<void*>(candidate)) {
      pages[page_count] = {candidate, 1};
      ++page_count;
      return candidate;
    }
    if (got != MAP_FAILED) munmap(got, kPage);  // a kernel that took it as a mere hint
    if (got != MAP_FAILED || errno != EEXIST) break;
    // Another thread mapped it since the maps were read: read them again.
    if (!fresh.load()) break;
    current = &fresh;
  }
  snprintf(reason, reason_size, "no free memory within ±2 GB of 0x%lx for a trampoline", near);
  return 0;
}

}  // namespace cw::hook
