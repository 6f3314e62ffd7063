// A timeline as Graphviz DOT for people: meant for the causal path's neighbourhood
// (timeline.h), not a whole trace (`causeway export --format dot`, docs/export.md).
#pragma once

#include <cstdint>
#include <iosfwd>

#include "engine/export/timeline.h"

namespace cw::engine {

// A cluster per thread, its slices left to right in time, labelled with what they did,
// when (seconds since `origin_ns`) and for how long; flows labelled by kind, styled by
// strength; the causal path bold and red, the root cause filled, the hang double-framed.
void write_timeline_dot(std::ostream& out, const Timeline& timeline, uint64_t origin_ns);

}  // namespace cw::engine
