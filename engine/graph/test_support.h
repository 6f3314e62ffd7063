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

// A replayable stream of random numbers (xorshift64): random_cut_trace(seed) and the other
// generated inputs are the same on every machine.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t operator()(uint64_t n) {  // in [0, n)
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_ % n;
  }

 private:
  uint64_t state_;
};

struct Built {
  Trace trace;
  rules::RuleSet rules;
  BuildResult result;
  const Graph& graph() const { return result.graph; }
};

// Every field of two builds' graphs, statistics and rule counts, as text: equal texts are
// equal builds.
inline std::string describe(const BuildResult& r) {
  std::string out;
  auto add = [&](uint64_t v) { out += std::to_string(v) + ' '; };
  for (const Segment& s : r.graph.segments) {
    for (uint64_t v : {uint64_t{s.tid}, uint64_t{s.pid}, uint64_t{s.first}, uint64_t{s.last},
                       s.start_ns, s.end_ns, uint64_t(s.cut_rule.kind), uint64_t{s.cut_rule.index}})
      add(v);
    out += '\n';
  }
  for (const Edge& e : r.graph.edges) {
    for (uint64_t v :
         {uint64_t{e.from}, uint64_t{e.to}, uint64_t{e.from_event}, uint64_t{e.to_event},
          uint64_t(e.rule.kind), uint64_t{e.rule.index}, uint64_t{e.boost_rule}, uint64_t{e.link},
          uint64_t{e.kind}, uint64_t(e.strength), uint64_t{e.cost}})
      add(v);
    out += '\n';
  }
  for (const auto& k : r.graph.kinds) out += k + ' ';
  for (const auto& t : r.graph.threads)
    for (uint64_t v : {uint64_t{t.tid}, uint64_t{t.begin}, uint64_t{t.end}}) add(v);
  const BuildStats& st = r.stats;
  for (uint64_t v :
       {st.candidates, st.unclassified, st.pruned, st.boosted, st.cuts, st.over_connections,
        st.segment_over_connections, st.flag_edges, st.data_flags_used})
    add(v);
  const RuleCounts& c = r.counts;
  for (const auto* list : {&c.splits, &c.batches, &c.edges, &c.pruned, &c.boosted, &c.flags}) {
    for (uint64_t v : *list) add(v);
    out += '|';
  }
  for (const PeerCut& p : r.peer_cuts)
    for (uint64_t v : {uint64_t{p.thread}, uint64_t{p.event}, uint64_t{p.rule},
                       uint64_t(p.neighbour), uint64_t{p.since}})
      add(v);
  return out;
}

#ifdef CW_SOURCE_DIR
// The trace built with the standard packs as they ship (stdlib-rules), as `causeway debug`
// loads them.
inline Built build_with_stdlib(const std::string& trace_text) {
  auto loaded = rules::load_packs({CW_SOURCE_DIR "/stdlib-rules"});
  REQUIRE_MESSAGE(loaded.ok(), loaded.render());
  Built b{load_trace(trace_text), std::move(loaded.rules), {}};
  b.result = build_graph(b.trace, b.rules, {});
  return b;
}
#endif

// Builds twice: with the rules' compiled expressions and candidates classified by two
// threads however few, and on one thread walking the expressions' trees (the reference);
// both must make the same graph, or fail with the same message.
inline Built build(const std::string& rules_text, const std::string& trace_text) {
  Built b{load_trace(trace_text), load_rules(rules_text), {}};
  BuildOptions fast, walk;
  fast.parallel_from = 0;
  walk.interpret_expressions = true;
  walk.parallel_from = ~uint64_t{0};
  try {
    b.result = build_graph(b.trace, b.rules, fast);
  } catch (const std::exception& compiled) {
    std::string walked = "(no error)";
    try {
      build_graph(b.trace, b.rules, walk);
    } catch (const std::exception& e) {
      walked = e.what();
    }
    CHECK_MESSAGE(walked == compiled.what(), "compiled and walked expressions fail differently");
    throw;
  }
  BuildResult reference = build_graph(b.trace, b.rules, walk);
  CHECK_MESSAGE(describe(b.result) == describe(reference),
                "compiled and walked expressions build different graphs");
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
