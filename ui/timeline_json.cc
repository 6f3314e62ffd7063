#include "ui/timeline_json.h"

#include <algorithm>
#include <map>

#include "engine/diagnosis/symptom.h"

namespace cw::ui {

nlohmann::json timeline_json(const engine::Timeline& t, uint64_t trace_start_ns, uint64_t key,
                             const QuestionMarks* marks) {
  const uint64_t origin = t.start_ns;
  auto at = [&](uint64_t ns) { return static_cast<int64_t>(ns - origin); };
  std::map<Pid, std::string> process_names;
  for (const auto& p : t.processes) process_names[p.pid] = p.name;
  std::map<uint32_t, uint32_t> segment_option, edge_option;
  if (marks) {
    for (auto [segment, option] : marks->option_segments) segment_option[segment] = option;
    for (auto [edge, option] : marks->option_edges) edge_option[edge] = option;
  }

  nlohmann::json tracks = nlohmann::json::array();
  for (const auto& tr : t.tracks)
    tracks.push_back(
        {{"pid", tr.pid}, {"tid", tr.tid}, {"name", tr.name}, {"process", process_names[tr.pid]}});
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : t.slices) {
    nlohmann::json j{{"segment", s.segment},
                     {"track", s.track},
                     {"start_ns", at(s.start_ns)},
                     {"end_ns", at(s.end_ns)},
                     {"name", s.name},
                     {"detail", s.detail},
                     {"on_path", s.on_path},
                     {"root_cause", s.root_cause},
                     {"hang", s.hang}};
    if (marks && s.segment == marks->subject) j["subject"] = true;
    if (auto it = segment_option.find(s.segment); it != segment_option.end())
      j["option"] = it->second;
    slices.push_back(std::move(j));
  }
  nlohmann::json flows = nlohmann::json::array();
  for (const auto& f : t.flows) {
    nlohmann::json j{{"edge", f.edge},
                     {"from_slice", f.from_slice},
                     {"to_slice", f.to_slice},
                     {"from_ns", at(f.from_ns)},
                     {"to_ns", at(f.to_ns)},
                     {"kind", f.kind},
                     {"strength", engine::strength_name(f.strength)},
                     {"on_path", f.on_path}};
    if (auto it = edge_option.find(f.edge); it != edge_option.end()) j["option"] = it->second;
    flows.push_back(std::move(j));
  }
  nlohmann::json instants = nlohmann::json::array();
  for (const auto& m : t.instants)
    instants.push_back({{"track", m.track}, {"ts", at(m.ts)}, {"name", m.name}});
  return {{"key", key},
          {"start_ns", 0},
          {"end_ns", at(t.end_ns)},
          {"trace_start_ns", static_cast<int64_t>(trace_start_ns) - static_cast<int64_t>(origin)},
          {"tracks", std::move(tracks)},
          {"slices", std::move(slices)},
          {"flows", std::move(flows)},
          {"instants", std::move(instants)}};
}

nlohmann::json diagnosis_timeline(const Trace& trace, const engine::Graph& graph,
                                  const engine::Diagnosis& d, uint64_t key,
                                  const engine::Question* question) {
  engine::TimelineScope scope = engine::neighbourhood(graph, d);
  QuestionMarks marks;
  if (question) {
    auto show = [&](uint32_t segment) {
      if (segment < graph.segments.size()) scope.segments.push_back(segment);
    };
    marks.subject = question->subject;
    show(question->subject);
    for (uint32_t i = 0; i < question->options.size(); ++i) {
      const engine::Option& o = question->options[i];
      if (o.segment < graph.segments.size()) {
        show(o.segment);
        marks.option_segments.emplace_back(o.segment, i + 1);
      }
      if (o.edge < graph.edges.size()) {
        show(graph.edges[o.edge].from);
        show(graph.edges[o.edge].to);
        marks.option_edges.emplace_back(o.edge, i + 1);
      }
    }
    std::sort(scope.segments.begin(), scope.segments.end());
    scope.segments.erase(std::unique(scope.segments.begin(), scope.segments.end()),
                         scope.segments.end());
  }
  const engine::Timeline t = engine::build_timeline(trace, graph, &d, scope);
  return timeline_json(t, engine::trace_start_ns(trace), key, question ? &marks : nullptr);
}

}  // namespace cw::ui
