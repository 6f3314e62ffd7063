#include "engine/export/graph_report.h"

#include <fmt/format.h>

#include <map>
#include <ostream>
#include <set>

#include "base/terminal_text.h"
#include "trace/command_marker.h"
#include "trace/losses.h"
#include "trace/names.h"

namespace cw::engine {

namespace {

using nlohmann::json;

json strength_counts(uint64_t strong, uint64_t weak, uint64_t boosted) {
  return {{"strong", strong}, {"weak", weak}, {"boosted", boosted}};
}

// Distinct processes and threads: the tables may name an id more than once (a recorder
// appends a renamed thread or process again). The text and the JSON count the same way.
std::pair<size_t, size_t> distinct_processes_threads(const Trace& trace) {
  std::set<Pid> pids;
  std::set<Tid> tids;
  for (const auto& p : trace.processes) pids.insert(p.pid);
  for (const auto& t : trace.threads) tids.insert(t.tid);
  return {pids.size(), tids.size()};
}

}  // namespace

// A label holds a name from the trace: its control bytes become \xNN (the backslash then
// escaped for DOT, so Graphviz shows it), as on a terminal.
std::string dot_escape(std::string_view raw) {
  const std::string s = terminal_text(raw);
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

json losses_json(const Trace& trace) {
  json out = json::object();
  for (const LossLine& l : loss_lines(trace)) out[l.key] = l.count;
  return out;
}

json stats_json(const BuildStats& s) {
  return {{"candidates", s.candidates},
          {"unclassified", s.unclassified},
          {"pruned", s.pruned},
          {"boosted", s.boosted},
          {"cuts", s.cuts},
          {"over_connections", s.over_connections},
          {"segment_over_connections", s.segment_over_connections},
          {"flag_edges", s.flag_edges},
          {"data_flags_used", s.data_flags_used}};
}

json event_json(const Trace& trace, uint32_t index) {
  const Event& e = trace.events[index];
  const KindDef& kind = trace.schema.kind(e.kind);
  json j = {{"index", index},
            {"ts", e.ts},
            {"tid", e.tid},
            {"pid", trace.pid_of(e.tid)},
            {"comm", thread_comm(trace, e.tid)},
            {"kind", kind.name}};
  for (size_t f = 0; f < kind.fields.size(); ++f) {
    uint64_t v = trace.value(e, static_cast<int>(f));
    switch (kind.fields[f].type) {
      case FieldType::Str:
        j[kind.fields[f].name] = std::string(trace.strings.get(static_cast<StrId>(v)));
        break;
      case FieldType::Int: j[kind.fields[f].name] = static_cast<int64_t>(v); break;
      case FieldType::Uint:
      case FieldType::Tid: j[kind.fields[f].name] = v; break;
    }
  }
  return j;
}

json edge_list_json(const Trace& trace, const Graph& g) {
  json out = json::array();
  for (const Edge& e : g.edges) {
    // Neighbour edges of splits and batches join a thread's own segments; link and flag
    // edges join threads.
    if (e.link == kNoRule && e.rule.kind != RuleKind::Flag) continue;
    json edge = {{"kind", g.kinds[e.kind]},
                 {"strength", std::string(strength_name(e.strength))},
                 {"rule", g.rule_names.id(e.rule)},
                 {"from", event_json(trace, e.from_event)},
                 {"to", event_json(trace, e.to_event)}};
    // An edge whose rule says `from_thread` leaves another thread than its event's (an
    // interrupt's wake-up, the timer's owner): name it.
    const Tid from_tid = g.segments[e.from].tid;
    if (from_tid != trace.events[e.from_event].tid)
      edge["from_thread"] = {{"tid", from_tid},
                             {"pid", trace.pid_of(from_tid)},
                             {"comm", thread_comm(trace, from_tid)}};
    out.push_back(std::move(edge));
  }
  return out;
}

json graph_json(const Trace& trace, const BuildResult& result) {
  const Graph& g = result.graph;
  uint64_t by_strength[3] = {0, 0, 0};
  std::vector<std::array<uint64_t, 3>> by_kind(g.kinds.size(), {0, 0, 0});
  for (const Edge& e : g.edges) {
    ++by_strength[static_cast<int>(e.strength)];
    ++by_kind[e.kind][static_cast<int>(e.strength)];
  }
  json kinds = json::object();
  for (size_t k = 0; k < g.kinds.size(); ++k)
    if (by_kind[k][0] + by_kind[k][1] + by_kind[k][2] > 0)
      kinds[g.kinds[k]] = strength_counts(by_kind[k][0], by_kind[k][1], by_kind[k][2]);

  const RuleNames& names = g.rule_names;
  const RuleCounts& counts = result.counts;
  json splits = json::object(), edges = json::object(), pruned = json::object(),
       boosted = json::object(), flags = json::object();
  const auto &split_ids = names.of(RuleKind::Split), &batch_ids = names.of(RuleKind::Batch),
             &edge_ids = names.of(RuleKind::Edge), &flag_ids = names.of(RuleKind::Flag);
  for (size_t i = 0; i < split_ids.size(); ++i) splits[split_ids[i]] = counts.splits.at(i);
  for (size_t i = 0; i < batch_ids.size(); ++i) splits[batch_ids[i]] = counts.batches.at(i);
  for (size_t i = 0; i < edge_ids.size(); ++i) {
    switch (names.edge_strengths[i]) {
      case rules::Strength::Strong:
      case rules::Strength::Weak: edges[edge_ids[i]] = counts.edges.at(i); break;
      case rules::Strength::Prune: pruned[edge_ids[i]] = counts.pruned.at(i); break;
      case rules::Strength::Boost: boosted[edge_ids[i]] = counts.boosted.at(i); break;
    }
  }
  for (size_t i = 0; i < flag_ids.size(); ++i) flags[flag_ids[i]] = counts.flags.at(i);

  const auto [processes, threads] = distinct_processes_threads(trace);
  std::map<uint16_t, uint64_t> lost_by_cpu;
  for (const auto& l : trace.lost) lost_by_cpu[l.cpu] += l.count;
  json lost_per_cpu = json::object();
  for (auto [cpu, n] : lost_by_cpu) lost_per_cpu[std::to_string(cpu)] = n;

  return {
      {"trace",
       {{"events", trace.events.size()},
        {"processes", processes},
        {"threads", threads},
        {"lost_events", trace.lost_events()},
        {"lost_per_cpu", lost_per_cpu},
        {"losses", losses_json(trace)},
        {"notes", recorder_notes(trace)}}},
      {"graph",
       {{"vertices", g.segments.size()},
        {"edges", g.edges.size()},
        {"edges_by_strength", strength_counts(by_strength[0], by_strength[1], by_strength[2])},
        {"edges_by_kind", kinds}}},
      {"rules",
       {{"splits", splits},
        {"edges", edges},
        {"pruned", pruned},
        {"boosted", boosted},
        {"flags", flags}}},
      {"stats", stats_json(result.stats)},
  };
}

void write_dot(std::ostream& out, const Trace& trace, const Graph& g) {
  out << "digraph causeway {\n  node [shape=box];\n";
  for (size_t i = 0; i < g.segments.size(); ++i) {
    const Segment& s = g.segments[i];
    out << fmt::format("  s{} [label=\"{} {} [{},{})\"];\n", i,
                       dot_escape(thread_comm(trace, s.tid)), s.tid, s.start_ns, s.end_ns);
  }
  for (const Edge& e : g.edges) {
    const char* style = e.strength == Strength::Strong ? "solid"
                        : e.strength == Strength::Weak ? "dashed"
                                                       : "bold";
    out << fmt::format("  s{} -> s{} [label=\"{}\", style={}];\n", e.from, e.to,
                       dot_escape(g.kind_name(e)), style);
  }
  out << "}\n";
}

std::string text_summary(const Trace& trace, const BuildResult& result) {
  const Graph& g = result.graph;
  const BuildStats& s = result.stats;
  uint64_t by_strength[3] = {0, 0, 0};
  std::map<std::string, uint64_t> by_kind;
  for (const Edge& e : g.edges) {
    ++by_strength[static_cast<int>(e.strength)];
    ++by_kind[g.kind_name(e)];
  }
  const auto [processes, threads] = distinct_processes_threads(trace);
  std::string out = fmt::format("trace: {} events, {} processes, {} threads, {} lost events\n",
                                trace.events.size(), processes, threads, trace.lost_events());
  out += losses_text(trace);
  for (const std::string& n : recorder_notes(trace))
    out += "note: recording: " + terminal_text(n) + "\n";
  out += fmt::format("graph: {} segments, {} edges ({} strong, {} weak, {} boosted)\n",
                     g.segments.size(), g.edges.size(), by_strength[0], by_strength[1],
                     by_strength[2]);
  if (!by_kind.empty()) {
    out += "edges by kind:";
    for (const auto& [kind, n] : by_kind) out += fmt::format(" {} {}", kind, n);
    out += "\n";
  }
  out += fmt::format(
      "rules: {} candidates, {} unclassified, {} pruned, {} boosted, {} cuts, {} flag edges "
      "from {} data flags\n",
      s.candidates, s.unclassified, s.pruned, s.boosted, s.cuts, s.flag_edges, s.data_flags_used);
  out += fmt::format("over-connections: {} (requests), {} (segments)\n", s.over_connections,
                     s.segment_over_connections);
  return out;
}

}  // namespace cw::engine
