#include "engine/export/timeline_dot.h"

#include <fmt/format.h>

#include <ostream>

#include "engine/export/graph_report.h"

namespace cw::engine {

void write_timeline_dot(std::ostream& out, const Timeline& tl, uint64_t origin_ns) {
  auto secs = [&](uint64_t ns) { return (static_cast<double>(ns) - double(origin_ns)) / 1e9; };
  out << "digraph causal_path {\n"
         "  rankdir=LR;\n"
         "  node [shape=box, fontname=\"sans\", fontsize=10];\n"
         "  edge [fontname=\"sans\", fontsize=9];\n";
  for (const TimelineProcess& p : tl.processes)
    for (uint32_t t : p.tracks) {
      const TimelineTrack& track = tl.tracks[t];
      out << fmt::format("  subgraph cluster_t{} {{\n    label=\"{} {} (process {} {})\";\n", t,
                         dot_escape(track.name), track.tid, dot_escape(p.name), p.pid);
      for (uint32_t i : track.slices) {
        const TimelineSlice& s = tl.slices[i];
        std::string attrs;
        if (s.root_cause)
          attrs += ", style=\"filled,bold\", fillcolor=\"#f6b3b3\"";
        else if (s.on_path)
          attrs += ", style=bold";
        if (s.on_path) attrs += ", color=\"#c00000\", penwidth=2";
        if (s.hang) attrs += ", peripheries=2";
        std::string role = s.root_cause ? "root cause\\n" : s.hang ? "hang\\n" : "";
        out << fmt::format("    s{} [label=\"{}{}\\n{:.6f} s, {:.1f} ms\"{}];\n", i, role,
                           dot_escape(s.name), secs(s.start_ns),
                           static_cast<double>(s.end_ns - s.start_ns) / 1e6, attrs);
      }
      // The thread's order in time, drawn faintly.
      for (size_t k = 1; k < track.slices.size(); ++k)
        out << fmt::format("    s{} -> s{} [color=gray, style=dotted, arrowhead=none];\n",
                           track.slices[k - 1], track.slices[k]);
      out << "  }\n";
    }
  for (const TimelineFlow& f : tl.flows) {
    const char* style = f.strength == Strength::Strong ? "solid"
                        : f.strength == Strength::Weak ? "dashed"
                                                       : "bold";
    std::string attrs = fmt::format("style={}", style);
    if (f.on_path) attrs += ", color=\"#c00000\", penwidth=3";
    out << fmt::format("  s{} -> s{} [label=\"{} ({})\", {}];\n", f.from_slice, f.to_slice,
                       dot_escape(f.kind), strength_name(f.strength), attrs);
  }
  out << "}\n";
}

}  // namespace cw::engine
