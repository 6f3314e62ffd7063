// The timeline as Chrome's trace event JSON (`causeway export --format chrome`,
// docs/export.md): chrome://tracing, ui.perfetto.dev and speedscope read it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/export/timeline.h"

namespace cw::engine {

// {"traceEvents": [...], "displayTimeUnit": "ns"}: per thread its "M" name events, a
// complete ("X") event per slice, an "s"/"f" pair per flow, an "i" event per instant.
// Times are µs (with ns in the fraction) as the format wants.
nlohmann::json chrome_trace_json(const Timeline& timeline);

// What breaks the format's rules for flow events in `doc` (empty: none): every "s" has
// one "f" with the same id and cat and the reverse, each "f" binds to its enclosing slice
// ("bp": "e"), each flow event's time lies in an "X" event of its own pid and tid, a flow
// id is used by one flow only. Each problem names the event by its index in traceEvents.
std::vector<std::string> chrome_flow_problems(const nlohmann::json& doc);

}  // namespace cw::engine
