// A time-ordered queue of events not yet written: the synthetic session schedules events
// ahead of time on many threads at once, and the writer needs them globally sorted.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/trace.h"

namespace cw::bench {

inline constexpr int kMaxFields = 8;

struct PendingEvent {
  uint64_t ts = 0;
  Tid tid = 0;
  KindId kind = kNoKind;
  uint16_t cpu = 0;
  StackId stack = 0;
  uint8_t field_count = 0;
  uint64_t values[kMaxFields] = {};
};

class EventQueue {
 public:
  void push(const PendingEvent& event);
  // Moves events with ts < horizon into `out`, oldest first (equal times in push order),
  // at most `limit` of them. Returns how many moved.
  size_t drain_before(uint64_t horizon, Trace& out, size_t limit);
  size_t size() const { return heap_.size(); }

 private:
  struct Key {
    uint64_t ts;
    uint64_t seq;  // push order: keeps a thread's same-time events in order
    uint32_t slot;
  };
  struct Later {
    bool operator()(const Key& a, const Key& b) const {
      return a.ts != b.ts ? a.ts > b.ts : a.seq > b.seq;
    }
  };
  std::vector<Key> heap_;
  std::vector<PendingEvent> slots_;  // events live here; the heap moves only keys
  std::vector<uint32_t> free_slots_;
  uint64_t next_seq_ = 0;
};

}  // namespace cw::bench
