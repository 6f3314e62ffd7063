// The event graph: segments of one thread's execution (vertices) joined by causal edges.
//
// Every cut and every edge remembers the rule that made it, so reports, pack tests and
// saved answers can name it. The graph is self-contained: it keeps the rule ids it refers
// to, so it can be reported without the RuleSet it was built from.
#pragma once

#include <array>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dsl/rule_kinds.h"
#include "rules/ruleset.h"
#include "trace/trace.h"

namespace cw::engine {

using rules::kNoRule;

// The kind of rule a cut or an edge names: a kind of the table (dsl/rule_kinds.h), so the
// graph has no list of kinds of its own. RuleNames::ids gives the ids its index points
// into.
using RuleKind = dsl::RuleKind;
// No rule (a thread's first segment). Stored as a byte in the graph and in its cache entry
// (engine/cache), so it is a value no kind of the table takes.
inline constexpr RuleKind kNoRuleKind = static_cast<RuleKind>(UINT8_MAX);
static_assert(sizeof(RuleKind) == 1 && dsl::kRuleKinds.size() < UINT8_MAX);

struct RuleRef {
  RuleKind kind = kNoRuleKind;
  uint32_t index = kNoRule;
  bool operator==(const RuleRef&) const = default;
};

// A vertex: events [first, last] of one thread (indexes into Trace::events; the thread's
// events in between belong to it too). Time is [start_ns, end_ns): end_ns is the start of
// the thread's next segment, or the time of its last event for the thread's last one.
struct Segment {
  Tid tid = 0;
  Pid pid = 0;
  uint32_t first = 0;
  uint32_t last = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  RuleRef cut_rule;  // the split or batch rule that started it; none = thread start
};

enum class Strength : uint8_t { Strong, Weak, Boosted };
std::string_view strength_name(Strength s);

// The kind label of neighbour edges across a cut.
inline constexpr std::string_view kSplitKind = "split";

struct Edge {
  uint32_t from = 0;              // segment
  uint32_t to = 0;                // segment
  uint32_t from_event = 0;        // the evidence: the cause event ...
  uint32_t to_event = 0;          // ... and the effect event
  RuleRef rule;                   // edge rule (link edges), flag rule, or split/batch rule
  uint32_t boost_rule = kNoRule;  // edge rule that boosted a weak edge
  uint32_t link = kNoRule;        // the link whose candidate this is (link edges only)
  uint16_t kind = 0;              // index into Graph::kinds
  Strength strength = Strength::Weak;
  // The search cost the classifying edge rule's `cost` clause gave (0–254), or
  // kDefaultCost: the searches then cost it by strength. One byte keeps an Edge at 36.
  static constexpr uint8_t kDefaultCost = 255;
  uint8_t cost = kDefaultCost;
};
static_assert(sizeof(Edge) == 36, "Edge must stay compact: graphs hold millions");

// Boost.Graph view: vertex i is segments[i]; an edge's bundle is its index in Graph::edges.
using CsrGraph =
    boost::compressed_sparse_row_graph<boost::bidirectionalS, boost::no_property, uint32_t,
                                       boost::no_property, uint32_t, uint32_t>;

// Qualified ids of the rules a graph refers to, per kind of the table, and what the
// diagnosis reads of some of them.
struct RuleNames {
  std::vector<bool> split_cuts_after;           // per split rule: `cut after`
  std::vector<bool> split_loops;                // per split rule: `loop`
  std::vector<rules::Strength> edge_strengths;  // per edge rule
  std::vector<bool> edge_ends_polling;          // per edge rule: `ends_polling`
  std::vector<bool> edge_requests;              // per edge rule: `request`

  static RuleNames from(const rules::RuleSet& rules);
  // The ids of the rules of `kind`, in its RuleSet list's order, or nullptr for no kind or
  // a kind whose rules the graph build does not apply (the table's builds_graph).
  const std::vector<std::string>* ids(RuleKind kind) const;
  std::vector<std::string>* ids(RuleKind kind) {
    return const_cast<std::vector<std::string>*>(std::as_const(*this).ids(kind));
  }
  // The ids of a kind the graph build applies, named where it is read: of(RuleKind::Edge).
  const std::vector<std::string>& of(RuleKind kind) const { return by_kind_.at(index(kind)); }
  const std::string& id(RuleRef ref) const;  // "" for none

 private:
  static constexpr size_t index(RuleKind kind) { return static_cast<size_t>(kind); }
  // Indexed by RuleKind, so a kind the table adds has its list with no change here; those
  // the graph build does not apply stay empty.
  std::array<std::vector<std::string>, dsl::kRuleKinds.size()> by_kind_;
};

struct Graph {
  std::vector<Segment> segments;
  std::vector<Edge> edges;
  std::vector<std::string> kinds;  // edge kind labels
  RuleNames rule_names;
  CsrGraph csr;
  // Per thread, sorted by tid: its segments are [begin, end) in `segments`.
  struct ThreadSegments {
    Tid tid = 0;
    uint32_t begin = 0, end = 0;
  };
  std::vector<ThreadSegments> threads;

  uint16_t intern_kind(std::string_view kind);
  const std::string& kind_name(const Edge& e) const { return kinds[e.kind]; }
  // The segment holding `event` (an index into the trace this graph was built from).
  uint32_t segment_of(const Trace& trace, uint32_t event) const;
  const ThreadSegments* thread_segments(Tid tid) const;
  // When the cut that started segment `s` happened: its first event's time for a cut
  // before, the cutting event's (the previous segment's last) for a cut after.
  uint64_t cut_time(const Trace& trace, uint32_t s) const;
  // Builds `csr` from `edges`: on two CPUs when there are `parallel_from` edges or more
  // (the lists are the same either way).
  void build_csr(uint64_t parallel_from = uint64_t{1} << 16);
};

}  // namespace cw::engine
