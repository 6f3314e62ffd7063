// Dense slots for thread ids: the engine's per-thread arrays are indexed by a thread's
// slot, never by its tid. A tid is a key: a trace may carry any 32-bit value (4294967295
// in a 300-byte file), so a table indexed by tid would be sized by the largest one.
//
// An open-addressing hash table (linear probing) sized by the number of threads, with the
// tids beside their slots in one array: a lookup per event costs a multiply and, for the
// few thousand threads of a large trace, a probe in cache. Lookups are const and may run
// on several threads at once once the slots are set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace/trace.h"

namespace cw::engine {

class ThreadSlots {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;

  // Room for `expected` threads before the table grows.
  explicit ThreadSlots(size_t expected = 0) { rehash(capacity_for(expected)); }

  // The slot set for `tid`, kNone when it has none.
  uint32_t get(Tid tid) const {
    for (size_t i = home(tid);; i = (i + 1) & mask_) {
      const Entry& e = table_[i];
      if (e.slot == kNone) return kNone;
      if (e.tid == tid) return e.slot;
    }
  }
  // Sets (or replaces) the slot of `tid`; `slot` must not be kNone.
  void set(Tid tid, uint32_t slot) {
    if ((size_ + 1) * 2 > table_.size()) rehash(table_.size() * 2);
    size_t i = home(tid);
    for (; table_[i].slot != kNone; i = (i + 1) & mask_)
      if (table_[i].tid == tid) {
        table_[i].slot = slot;
        return;
      }
    table_[i] = {tid, slot};
    ++size_;
  }
  // The slot of `tid`, the next free one (size() before) when it had none.
  uint32_t add(Tid tid) {
    const uint32_t s = get(tid);
    if (s != kNone) return s;
    const auto next = static_cast<uint32_t>(size_);
    set(tid, next);
    return next;
  }
  size_t size() const { return size_; }
  // Every tid that has a slot, in no particular order.
  std::vector<Tid> tids() const {
    std::vector<Tid> out;
    out.reserve(size_);
    for (const Entry& e : table_)
      if (e.slot != kNone) out.push_back(e.tid);
    return out;
  }

 private:
  struct Entry {
    Tid tid = 0;
    uint32_t slot = kNone;
  };

  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c < n * 2) c *= 2;
    return c;
  }
  // Fibonacci hashing: consecutive tids (as a process's threads have) spread out.
  size_t home(Tid tid) const {
    return static_cast<size_t>((uint64_t{tid} * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  void rehash(size_t capacity) {
    std::vector<Entry> old(capacity);
    old.swap(table_);
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    size_ = 0;
    for (const Entry& e : old)
      if (e.slot != kNone) set(e.tid, e.slot);
  }

  std::vector<Entry> table_;
  size_t size_ = 0;
  size_t mask_ = 0;
  unsigned shift_ = 64;
};

}  // namespace cw::engine
