#include "engine/graph/graph.h"

#include <algorithm>
#include <stdexcept>

#include "base/parallel.h"
#include "base/populate.h"

namespace cw::engine {

std::string_view strength_name(Strength s) {
  switch (s) {
    case Strength::Strong: return "strong";
    case Strength::Weak: return "weak";
    case Strength::Boosted: return "boosted";
  }
  return "?";
}

RuleNames RuleNames::from(const rules::RuleSet& rules) {
  RuleNames n;
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds)
    if (kind.builds_graph)
      for (const rules::RuleOrigin* origin : rules.origins(kind.kind))
        n.by_kind_[index(kind.kind)].push_back(origin->id);
  for (const auto& r : rules.splits) {
    n.split_cuts_after.push_back(r.cut_after);
    n.split_loops.push_back(r.loop);
  }
  for (const auto& r : rules.edges) {
    n.edge_strengths.push_back(r.strength);
    n.edge_ends_polling.push_back(r.ends_polling);
    n.edge_requests.push_back(r.request);
  }
  return n;
}

// kNoRuleKind, and kinds read from a cache entry, may be none of the table's.
const std::vector<std::string>* RuleNames::ids(RuleKind kind) const {
  const size_t k = index(kind);
  if (k >= by_kind_.size() || !dsl::kRuleKinds[k].builds_graph) return nullptr;
  return &by_kind_[k];
}

const std::string& RuleNames::id(RuleRef ref) const {
  static const std::string none;
  const std::vector<std::string>* list = ids(ref.kind);
  return list ? list->at(ref.index) : none;
}

uint16_t Graph::intern_kind(std::string_view kind) {
  for (size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] == kind) return static_cast<uint16_t>(i);
  if (kinds.size() >= 0xffff) throw std::length_error("too many edge kinds");
  kinds.emplace_back(kind);
  return static_cast<uint16_t>(kinds.size() - 1);
}

const Graph::ThreadSegments* Graph::thread_segments(Tid tid) const {
  auto it = std::lower_bound(threads.begin(), threads.end(), tid,
                             [](const ThreadSegments& t, Tid x) { return t.tid < x; });
  return it != threads.end() && it->tid == tid ? &*it : nullptr;
}

uint32_t Graph::segment_of(const Trace& trace, uint32_t event) const {
  const ThreadSegments* t = thread_segments(trace.events.at(event).tid);
  if (!t || t->begin == t->end) throw std::out_of_range("event has no segment");
  // The last segment of the thread whose first event is at or before `event`.
  auto begin = segments.begin() + t->begin, end = segments.begin() + t->end;
  auto it =
      std::upper_bound(begin, end, event, [](uint32_t e, const Segment& s) { return e < s.first; });
  if (it == begin) throw std::out_of_range("event precedes its thread's first segment");
  return static_cast<uint32_t>(it - segments.begin() - 1);
}

uint64_t Graph::cut_time(const Trace& trace, uint32_t s) const {
  const Segment& seg = segments.at(s);
  if (seg.cut_rule.kind == RuleKind::Split && rule_names.split_cuts_after.at(seg.cut_rule.index) &&
      s > 0)
    return trace.events[segments[s - 1].last].ts;
  return seg.start_ns;
}

// Fills Boost's CSR storage directly with two stable counting sorts instead of using its
// unsorted-edge constructor, which copies the edges several times and sorts the backward
// links through iterator adaptors. The order is the constructor's own: out-edges of a
// vertex in edge order, in-edges in forward-CSR order, so traversals are unchanged. On two
// CPUs each sort is shared by halves of the vertices: each half's worker reads every edge
// (or forward row) in order and writes only its own vertices' slots, so the lists are the
// ones a single pass makes.
void Graph::build_csr(uint64_t parallel_from) {
  const auto n = static_cast<uint32_t>(segments.size());
  const auto m = static_cast<uint32_t>(edges.size());
  csr = CsrGraph(n);
  auto& forward = csr.m_forward;
  auto& backward = csr.m_backward;
  const unsigned workers = m >= parallel_from ? std::min(2u, worker_count()) : 1u;
  const uint32_t half = workers > 1 ? n / 2 : n;
  auto lo = [&](size_t part) { return part == 0 ? 0u : half; };
  auto hi = [&](size_t part) { return part == 0 ? half : n; };
  // Out- and in-degrees: one worker each.
  parallel_for(
      2,
      [&](size_t which) {
        auto& rowstart = (which == 0 ? forward : backward).m_rowstart;
        rowstart.assign(static_cast<size_t>(n) + 1, 0);
        for (const Edge& e : edges) ++rowstart[(which == 0 ? e.from : e.to) + 1];
        for (uint32_t v = 0; v < n; ++v) rowstart[v + 1] += rowstart[v];
      },
      workers);
  for (auto* array : {&forward.m_column, &forward.m_edge_properties, &backward.m_column,
                      &backward.m_edge_properties})
    resize_populated(*array, m);
  std::vector<uint32_t> next(forward.m_rowstart.begin(), forward.m_rowstart.end() - 1);
  parallel_for(
      workers,
      [&](size_t part) {
        const uint32_t first = lo(part), last = hi(part);
        for (uint32_t i = 0; i < m; ++i) {
          const uint32_t from = edges[i].from;
          if (from < first || from >= last) continue;
          const uint32_t slot = next[from]++;
          forward.m_column[slot] = edges[i].to;
          forward.m_edge_properties[slot] = i;
        }
      },
      workers);
  next.assign(backward.m_rowstart.begin(), backward.m_rowstart.end() - 1);
  parallel_for(
      workers,
      [&](size_t part) {
        const uint32_t first = lo(part), last = hi(part);
        for (uint32_t v = 0; v < n; ++v) {
          for (uint32_t k = forward.m_rowstart[v]; k < forward.m_rowstart[v + 1]; ++k) {
            const uint32_t to = forward.m_column[k];
            if (to < first || to >= last) continue;
            const uint32_t slot = next[to]++;
            backward.m_column[slot] = v;
            backward.m_edge_properties[slot] = k;
          }
        }
      },
      workers);
}

}  // namespace cw::engine
