#include "bench/event_queue.h"

#include <algorithm>

namespace cw::bench {

void EventQueue::push(const PendingEvent& event) {
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(event);
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = event;
  }
  heap_.push_back(Key{event.ts, next_seq_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

size_t EventQueue::drain_before(uint64_t horizon, Trace& out, size_t limit) {
  size_t moved = 0;
  while (moved < limit && !heap_.empty() && heap_.front().ts < horizon) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Key key = heap_.back();
    heap_.pop_back();
    const PendingEvent& p = slots_[key.slot];
    const Event& e = out.add_event(p.ts, p.tid, p.kind, p.cpu, p.stack);
    std::copy_n(p.values, p.field_count, out.values.begin() + e.values);
    free_slots_.push_back(key.slot);
    ++moved;
  }
  return moved;
}

}  // namespace cw::bench
