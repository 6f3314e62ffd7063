// What a built graph is reported as: `graph --json` (docs/json.md), Graphviz DOT, and a
// short text summary for people.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/graph/builder.h"
#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::engine {

// {"trace", "graph", "rules", "stats"} exactly as docs/json.md describes.
nlohmann::json graph_json(const Trace& trace, const BuildResult& result);
// Every cross-thread edge with the two events that are its evidence, all their fields
// included (`graph --json --edges`, docs/json.md).
nlohmann::json edge_list_json(const Trace& trace, const Graph& graph);
// Every kind of loss with its count, zeros included: {"kernel_buffer": N, "hook_log": N,
// "switches_unreported": N, "maps": N, "watchpoints_silent": N} (trace/losses.h).
nlohmann::json losses_json(const Trace& trace);
// The "stats" object alone (pack tests compare against it).
nlohmann::json stats_json(const BuildStats& stats);

// A name from the trace for a DOT label: control bytes as \xNN, as on a terminal, then
// `"` and `\` escaped for DOT.
std::string dot_escape(std::string_view raw);

// Segments labelled "comm tid [start,end)"; edges labelled by kind, styled by strength:
// strong solid, weak dashed, boosted bold.
void write_dot(std::ostream& out, const Trace& trace, const Graph& graph);

// A few lines: trace size, graph size, edges by strength and kind, statistics.
std::string text_summary(const Trace& trace, const BuildResult& result);

}  // namespace cw::engine
