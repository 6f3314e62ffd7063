// One logical wait made of slices. A poll loop with a 1 s timeout, or a lock wait with a
// periodic timer, blocks in the same call on the same object again and again: each slice
// that timed out ended with no wake-up from another thread; the slice that ended with
// one (a message, a wake-up, a release) is the one whose waker explains the wait. The
// diagnosis follows that slice; the symptom can use the same helpers.
#pragma once

#include <cstdint>

#include "engine/diagnosis/segment_profile.h"
#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::engine {

// Two blocking calls wait for the same thing: the same call on the same descriptor and
// object (the same socket, the same futex word), or the same call on a set of descriptors
// of the same size (a poll loop: `fd` -1, `count` descriptors). A call on no object and no
// descriptors (a sleep) waits for time, not for another thread, and is like nothing.
bool same_wait(const Trace& trace, uint32_t call_a, uint32_t call_b);

// A call that waits for time alone: on no object and no descriptor, with a finite timeout
// (a sleep, a poll of no descriptor). No other thread is behind such a wait unless one
// ended it early (a signal).
bool sleeps_for_time(const Trace& trace, uint32_t call);

// The event that begins `tid`'s next system call after the exit `call_exit` (the call's
// end, as far as what it returned is concerned: a read's bytes are recorded as it
// returns), UINT32_MAX when none was recorded.
uint32_t next_call(const Trace& trace, const ThreadEvents& events, Tid tid, uint32_t call_exit);

// The edge that ended the longest wait of `segment` (profiled as `p`): the cheapest
// incoming edge from another thread (not a neighbour edge across a cut) whose effect came
// after the block began, of equally cheap ones the first to arrive; kNoIndex when none did
// (the wait timed out, or was never woken), or when the thread's own timer firing in the
// call ended it and the others' edges landed only in later calls. For a sleep
// (sleeps_for_time), only what landed before it returned: bytes a sleeper read after its
// sleep had been waiting for it, not waking it.
uint32_t wake_edge(const Trace& trace, const ThreadEvents& events, const Graph& graph,
                   uint32_t segment, const SegmentProfile& p);

struct LogicalWait {
  uint32_t first = kNoIndex, last = kNoIndex;  // its slices (segments of one thread)
  uint32_t woken = kNoIndex;      // the slice that ended with a wake-up, kNoIndex if none
  uint32_t wake_edge = kNoIndex;  // that wake-up
  uint64_t start_ns = 0, end_ns = 0;
};

// The logical wait `segment` is a slice of: the run of the thread's consecutive segments
// that block in the same wait (segments between them that do not block at all do not
// break it), in which every slice before the last ended with no wake-up from another
// thread. A segment that does not block in a call on an object is a wait of its own.
// When no slice's wake-up was recorded, a later segment that did not block and took a
// message sent while the wait ran, before it reached another thread itself, is `woken`
// (the wake-up went unrecorded, the data was read after a poll that found it ready, or the
// wait timed out as the data came).
LogicalWait logical_wait(const Trace& trace, const ThreadEvents& events, const Graph& graph,
                         uint32_t segment);

// A stretch of `segment`'s thread profiled as `p` that looks like a loop of short waits
// (classify() says RepeatedYield) but is one wait retried after timeouts: its longest block
// is a call on an object or a set of descriptors, and the logical wait of `segment` (the
// segment where that block began) ended with another thread's edge and lasted at least
// half the stretch. Then that logical wait; else one whose wake_edge is kNoIndex. A loop
// that reads a data flag between its waits polls the flag: not one wait.
LogicalWait retried_wait(const Trace& trace, const ThreadEvents& events, const Graph& graph,
                         uint32_t segment, const SegmentProfile& p);

}  // namespace cw::engine
