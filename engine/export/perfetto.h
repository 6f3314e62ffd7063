// The timeline as a Perfetto trace (`causeway export --format perfetto`, docs/export.md):
// a track per thread under its process, slices for segments, flows for edges, markers as
// instants, and the scheduler events as Perfetto's own (perfetto_sched.h).
#pragma once

#include <string>
#include <vector>

#include "engine/export/timeline.h"
#include "trace/trace.h"

namespace cw::engine {

// The packet sequences the file uses: Perfetto keeps interned strings per sequence and
// wants each sequence's timestamps in order.
inline constexpr uint32_t kTrackEventSequence = 1;
inline constexpr uint32_t kSchedSequence = 2;

// The serialized trace. `notes` (may be null) gets what the file cannot say faithfully.
std::string perfetto_trace(const Trace& trace, const Timeline& timeline,
                           std::vector<std::string>* notes);

}  // namespace cw::engine
