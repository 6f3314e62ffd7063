// The graph as a timeline for people: one track per thread, grouped by process; each
// segment a slice named by what it did; each causal edge a flow from the slice of its
// cause to the slice of its effect; markers as instants; the diagnosis's causal path and
// root cause marked. `causeway export` writes it as Perfetto, Chrome JSON and DOT, and
// `causeway ui` draws it (docs/export.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "engine/graph/graph.h"
#include "trace/trace.h"

namespace cw::engine {

struct TimelineSlice {
  uint32_t segment = 0;  // index into Graph::segments
  uint32_t track = 0;    // index into Timeline::tracks
  uint64_t start_ns = 0, end_ns = 0;
  std::string name;      // what it did, short: its wait, the call it ended in, its hottest function
  std::string detail;    // a line with the numbers behind the name (CPU, runnable, blocked, calls)
  bool on_path = false;  // a step of the diagnosis's causal path
  bool root_cause = false;  // a segment the diagnosis blames
  bool hang = false;        // the hang vertex
};

struct TimelineFlow {
  uint32_t edge = 0;  // index into Graph::edges
  uint32_t from_slice = 0, to_slice = 0;
  // When the cause and the effect happened (the edge's evidence events), kept within
  // their slices: a format binds a flow to the slice that encloses its time.
  uint64_t from_ns = 0, to_ns = 0;
  std::string kind;  // the edge's kind label
  Strength strength = Strength::Weak;
  bool on_path = false;  // the edge a causal path step leads along
};

// A marker event (`causeway mark`, the application's own) on its thread's track.
struct TimelineInstant {
  uint32_t track = 0;
  uint64_t ts = 0;
  std::string name;
};

struct TimelineTrack {
  Pid pid = 0;
  Tid tid = 0;
  std::string name;              // the thread's comm, "" when the trace does not know it
  std::vector<uint32_t> slices;  // in time order
};

struct TimelineProcess {
  Pid pid = 0;
  std::string name;              // the process's comm, "" when unknown
  std::vector<uint32_t> tracks;  // by tid
};

struct Timeline {
  std::vector<TimelineProcess> processes;  // by pid
  std::vector<TimelineTrack> tracks;       // grouped by process, by tid within it
  std::vector<TimelineSlice> slices;       // by track, then time
  std::vector<TimelineFlow> flows;         // in graph edge order
  std::vector<TimelineInstant> instants;   // in time order
  uint64_t start_ns = 0, end_ns = 0;       // of the slices and instants
  // The trace's first event: the report's times are seconds since it, the formats' are the
  // trace's clock; each slice carries both (`at`).
  uint64_t trace_start_ns = 0;
};

// Which segments to show: the listed ones (sorted, unique), or every segment when `all`.
struct TimelineScope {
  bool all = true;
  std::vector<uint32_t> segments;
};

// The causal path's segments (the path, its root causes and the hang's stretch) and
// their direct neighbours: the segments one edge away, the thread's previous and next
// segment included. What DOT shows and what a UI timeline starts from.
TimelineScope neighbourhood(const Graph& graph, const Diagnosis& diagnosis);

// The segments of process `root` and its descendants (a recorded command's), and of every
// thread the diagnosis (may be null) names: its path, its root causes, its hang — the
// server the command waited for is shown though it is no child of the command.
TimelineScope process_tree_scope(const Trace& trace, const Graph& graph, const Diagnosis* diagnosis,
                                 Pid root);

// Whether an edge is drawn as a flow: every edge but the split edges that only join a
// thread's consecutive segments (the track shows that order) unless a causal path step
// leads along it.
bool is_flow_edge(const Graph& graph, uint32_t edge, const Diagnosis* diagnosis);

// The timeline of the segments in `scope`; flows only between two shown segments.
// `diagnosis` (may be null) marks the path, the root causes and the hang.
Timeline build_timeline(const Trace& trace, const Graph& graph, const Diagnosis* diagnosis,
                        const TimelineScope& scope = {});

}  // namespace cw::engine
