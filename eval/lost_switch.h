// A recording with one context switch lost the way a kernel loses it (a busy VM drops a
// few sched_switch tracepoints per recording: docs/recording.md), and what the recorder's
// decoder then writes in its place: the check that a diagnosis does not hang on every
// switch being there (`causeway eval --lose-switches`).
#pragma once

#include <cstdint>
#include <vector>

#include "trace/trace.h"

namespace cw::eval {

// One switch record: the switch_out and switch_in events at one time on one CPU (one or
// both), as indexes into Trace::events.
using SwitchRecord = std::vector<uint32_t>;

// The trace's switch records in trace order; only those involving `threads` when it is
// not empty.
std::vector<SwitchRecord> switch_records(const Trace& trace, const std::vector<Tid>& threads = {});

// `trace` without `lost`'s events, and what the decoder writes when it notices the loss
// (recorder/record_decoder.cc) at the CPU's first later event that a running thread
// writes: a switch_out of state `?` for the thread the record switched out, unless that
// event is its own; and a switch_in for the thread the record switched in, when the event
// is that thread's and the thread is recorded (wrote an event only recorded threads write).
// With no such event before the CPU's next switch, the `?` goes there (when that switch is
// not the same thread's).
Trace lose_switch(const Trace& trace, const SwitchRecord& lost);

}  // namespace cw::eval
