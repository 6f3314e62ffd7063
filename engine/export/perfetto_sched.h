// The trace's scheduler events as Perfetto's own (compact_sched in one ftrace bundle per
// CPU), so that Perfetto's CPU tracks, its thread_state table and its critical-path view
// work on a causeway trace (docs/export.md).
#pragma once

#include <string>
#include <vector>

#include "engine/export/perfetto_trace.pb.h"
#include "trace/trace.h"

namespace cw::engine {

// Appends one packet per CPU that has switch or wake-up events, on packet sequence
// `sequence`. `notes` gets what the conversion could not say faithfully (a thread found
// on a CPU another thread had not left: the trace's CPU numbers are missing or events
// were lost; task states Perfetto has no code for).
void add_compact_sched(const Trace& trace, uint32_t sequence, perfetto::protos::Trace& out,
                       std::vector<std::string>* notes);

}  // namespace cw::engine
