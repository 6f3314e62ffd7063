// Helpers for engine tests: rules and traces written as text, and graph queries.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/graph/builder.h"
#include "rules/loader.h"
#include "trace/text_format.h"

namespace cw::engine::testing {

// One pack "t" in file t.cw; the header is line 1, so `body` starts on line 2.
inline rules::RuleSet load_rules(const std::string& body) {
  auto r = rules::load_sources({make_source("t.cw", "pack t { version \"0.1.0\" }\n" + body)});
  REQUIRE_MESSAGE(r.ok(), r.render());
  return std::move(r.rules);
}

// A trace in the text form; the format line is added.
inline Trace load_trace(const std::string& body) {
  return parse_text_trace(make_source("t.trace", "causeway-trace 1\n" + body));
}

struct Built {
  Trace trace;
  rules::RuleSet rules;
  BuildResult result;
  const Graph& graph() const { return result.graph; }
};

inline Built build(const std::string& rules_text, const std::string& trace_text) {
  Built b{load_trace(trace_text), load_rules(rules_text), {}};
  b.result = build_graph(b.trace, b.rules);
  return b;
}

// Edges from a segment of thread `from` to one of thread `to`, as
// "KIND STRENGTH RULE CAUSE_TIME->EFFECT_TIME" (plus " +BOOST_RULE" when boosted), in
// graph order.
inline std::vector<std::string> edges(const Built& b, Tid from, Tid to) {
  std::vector<std::string> out;
  const Graph& g = b.graph();
  for (const Edge& e : g.edges) {
    if (g.segments[e.from].tid != from || g.segments[e.to].tid != to) continue;
    std::string s = g.kind_name(e) + " " + std::string(strength_name(e.strength)) + " " +
                    g.rule_names.id(e.rule) + " " +
                    std::to_string(b.trace.events[e.from_event].ts) + "->" +
                    std::to_string(b.trace.events[e.to_event].ts);
    if (e.boost_rule != kNoRule) s += " +" + g.rule_names.id({RuleKind::Edge, e.boost_rule});
    out.push_back(s);
  }
  return out;
}

// The cuts of thread `tid` as "TIME RULE".
inline std::vector<std::string> cuts(const Built& b, Tid tid) {
  std::vector<std::string> out;
  const Graph& g = b.graph();
  const auto* t = g.thread_segments(tid);
  if (!t) return out;
  for (uint32_t s = t->begin + 1; s < t->end; ++s)
    out.push_back(std::to_string(g.cut_time(b.trace, s)) + " " +
                  g.rule_names.id(g.segments[s].cut_rule));
  return out;
}

inline size_t segments(const Built& b, Tid tid) {
  const auto* t = b.graph().thread_segments(tid);
  return t ? t->end - t->begin : 0;
}

}  // namespace cw::engine::testing
