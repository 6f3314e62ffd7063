#include "eval/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "engine/diagnosis/debug_report.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/graph/builder.h"
#include "eval/automatic_slice.h"
#include "trace/names.h"

namespace cw::eval {

using engine::Graph;

engine::Answer ScriptedAnswerer::ask(const engine::Question& q) {
  const std::string kind(engine::question_kind_name(q.kind));
  for (size_t i = 0; i < script_.size(); ++i) {
    if (used_[i] || script_[i].kind != kind) continue;
    for (uint32_t k = 0; k < q.options.size(); ++k) {
      const engine::Option& o = q.options[k];
      bool hit = script_[i].choose == "stop" ? o.stop
                                             : o.label.find(script_[i].choose) != std::string::npos;
      if (hit) {
        used_[i] = true;
        return {k, engine::AnswerSource::Answers, {}};
      }
    }
  }
  return {0, engine::AnswerSource::Auto, {}};
}

namespace {

std::string comm_of(const Trace& trace, Tid tid) {
  return std::string(thread_comm(trace, tid, "?"));
}

bool is_neighbour(const Graph& g, const engine::Edge& e) {
  return g.segments[e.from].tid == g.segments[e.to].tid;
}

uint64_t connections(const Graph& g) {
  return static_cast<uint64_t>(std::count_if(g.edges.begin(), g.edges.end(),
                                             [&](const auto& e) { return !is_neighbour(g, e); }));
}

// Connections through segments: pairs of an edge into a segment from another thread and a
// later edge out of it to another thread. Each is a claim that the first caused the
// second; cutting a segment between them withdraws it.
uint64_t through_connections(const Graph& g) {
  std::vector<std::vector<uint32_t>> in(g.segments.size()), out(g.segments.size());
  for (const engine::Edge& e : g.edges) {
    if (is_neighbour(g, e)) continue;
    out[e.from].push_back(e.from_event);
    in[e.to].push_back(e.to_event);
  }
  uint64_t pairs = 0;
  for (size_t s = 0; s < g.segments.size(); ++s) {
    if (in[s].empty() || out[s].empty()) continue;
    std::sort(in[s].begin(), in[s].end());
    for (uint32_t o : out[s])
      pairs +=
          static_cast<uint64_t>(std::lower_bound(in[s].begin(), in[s].end(), o) - in[s].begin());
  }
  return pairs;
}

bool has_edge(const Trace& trace, const Graph& g, const EdgeTruth& want) {
  for (const engine::Edge& e : g.edges) {
    if (is_neighbour(g, e)) continue;
    if (!want.kind.empty() && g.kind_name(e) != want.kind) continue;
    if (comm_of(trace, g.segments[e.from].tid) == want.from &&
        comm_of(trace, g.segments[e.to].tid) == want.to)
      return true;
  }
  return false;
}

std::string edge_text(const EdgeTruth& e) {
  return fmt::format("{} -> {}{}", e.from, e.to, e.kind.empty() ? "" : " (" + e.kind + ")");
}

}  // namespace

Outcome evaluate(const Scenario& s, const Trace& trace, const rules::RuleSet& rules,
                 const std::string& scenario_pack) {
  Outcome out;
  engine::BuildResult built = engine::build_graph(trace, rules);
  const Graph& g = built.graph;

  // The same trace with no split or batch rule: what the cuts filtered out.
  rules::RuleSet uncut = rules;
  uncut.splits.clear();
  uncut.batches.clear();
  engine::BuildResult whole = engine::build_graph(trace, uncut);

  ScriptedAnswerer user(s.answers);
  engine::DiagnoseOptions options;
  options.answerer = &user;
  if (s.hang != "auto") options.symptom.thread_name = s.hang;
  engine::Diagnosis d = engine::diagnose(trace, built, rules, options);

  Columns& c = out.columns;
  c.connections = connections(g);
  c.without_cuts = through_connections(whole.graph);
  const uint64_t with_cuts = through_connections(g);
  c.filtered_out = c.without_cuts > with_cuts ? c.without_cuts - with_cuts : 0;
  c.added = built.stats.flag_edges + built.stats.boosted;
  if (!scenario_pack.empty())
    for (size_t i = 0; i < rules.edges.size() && i < built.counts.edges.size(); ++i)
      if (rules.edges[i].origin.pack == scenario_pack) c.added += built.counts.edges[i];
  c.data_flags = built.stats.data_flags_used;
  for (const engine::Query& q : d.queries)
    if (q.answer.source != engine::AnswerSource::Rule) ++c.questions;
  c.baseline = static_cast<uint32_t>(d.baseline_path.size());
  c.interactive = static_cast<uint32_t>(d.path.size());
  c.automatic = static_cast<uint32_t>(engine::automatic_slice(g, d.hang.segment).size());

  // The truth, item by item.
  const std::string hang_comm = comm_of(trace, d.hang.tid);
  const std::string hang_kind(engine::hang_kind_name(d.hang.kind));
  out.hang = fmt::format("{} {} {:.3f} s", hang_comm, hang_kind,
                         static_cast<double>(d.hang.end_ns - d.hang.start_ns) / 1e9);
  auto miss = [&](std::string line) { out.mismatches.push_back(std::move(line)); };
  if (hang_comm != s.hang_truth.comm || hang_kind != s.hang_truth.kind)
    miss(fmt::format("hang: {} {}, expected {} {}", hang_comm, hang_kind, s.hang_truth.comm,
                     s.hang_truth.kind));
  if (d.root_causes.empty()) {
    out.root_cause = "(none)";
    miss("root cause: none found");
  } else {
    const engine::RootCause& r = d.root_causes[0];
    const std::string comm = comm_of(trace, g.segments[r.segment].tid);
    const std::string kind(engine::hang_kind_name(r.kind));
    out.root_cause = fmt::format("{} {}: {}", comm, kind, r.what);
    out.root_comm = comm;
    out.root_kind = kind;
    if (comm != s.root_truth.comm || kind != s.root_truth.kind)
      miss(fmt::format("root cause: {} {}, expected {} {}", comm, kind, s.root_truth.comm,
                       s.root_truth.kind));
    if (!s.root_truth.what.empty() &&
        !std::regex_search(r.what, std::regex(s.root_truth.what, std::regex::extended)))
      miss(fmt::format("root cause: '{}' does not match /{}/", r.what, s.root_truth.what));
    if (!s.root_truth.stack.empty()) {
      auto frames = engine::stack_frames(trace, r.stack);
      if (std::find(frames.begin(), frames.end(), s.root_truth.stack) == frames.end())
        miss(fmt::format("root cause: stack [{}] has no {}", fmt::join(frames, " <- "),
                         s.root_truth.stack));
    }
  }
  for (const engine::PathStep& p : d.path)
    out.path.push_back(comm_of(trace, g.segments[p.segment].tid));
  {
    size_t k = 0;
    for (const std::string& comm : out.path)
      if (k < s.path_truth.size() && comm == s.path_truth[k]) ++k;
    if (k < s.path_truth.size())
      miss(fmt::format("path: [{}] does not pass through [{}] in that order",
                       fmt::join(out.path, ", "), fmt::join(s.path_truth, ", ")));
  }
  for (const EdgeTruth& e : s.edges)
    if (!has_edge(trace, g, e)) miss("edges: no edge " + edge_text(e));
  for (const EdgeTruth& e : s.not_edges)
    if (has_edge(trace, g, e)) miss("not_edges: the graph has the edge " + edge_text(e));
  out.match = out.mismatches.empty();
  out.report = engine::debug_text(trace, g, d);
  out.notes = d.notes;
  out.queries = std::move(d.queries);
  return out;
}

}  // namespace cw::eval
