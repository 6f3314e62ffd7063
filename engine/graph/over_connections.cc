// Over-connections of a built graph (BuildStats, builder.h): per request (a thread's
// segments joined by neighbour edges) and per segment, the distinct other processes its
// edges join it to, beyond the first: one unit of work tied to several peers (the Argus
// paper, §3.1). Every build counts both at its end.
#include <algorithm>
#include <utility>
#include <vector>

#include "engine/graph/build_state.h"
#include "engine/graph/builder.h"

namespace cw::engine {

namespace {

uint16_t split_kind(const Graph& g) {
  for (uint32_t k = 0; k < g.kinds.size(); ++k)
    if (g.kinds[k] == kSplitKind) return static_cast<uint16_t>(k);
  return 0xffffu;
}

}  // namespace

namespace build {

// Both over-connection counts (BuildStats) in one sequential walk of the CSR: per vertex,
// the distinct other processes met through counted edges are stamped per segment and per
// request (a run of segments joined by neighbour edges), instead of listing and sorting
// (group, process) pairs. Random reads go to small arrays: a 2-byte process number per
// vertex and one flag byte per CSR slot.
std::pair<uint64_t, uint64_t> count_both_over_connections(const Graph& g) {
  CsrGraph rebuilt;
  const CsrGraph* csr = &g.csr;
  if (num_vertices(g.csr) != g.segments.size() || num_edges(g.csr) != g.edges.size()) {
    Graph copy;  // a graph whose csr was not built (or is stale): build one for counting
    copy.segments = g.segments;
    copy.edges = g.edges;
    copy.build_csr();
    rebuilt = std::move(copy.csr);
    csr = &rebuilt;
  }
  const auto& forward = csr->m_forward;
  const auto& backward = csr->m_backward;
  const auto n = static_cast<uint32_t>(g.segments.size());
  const uint16_t split = split_kind(g);

  // Dense process numbers: consecutive segments almost always share a process.
  std::vector<Pid> pids;
  for (const Segment& s : g.segments)
    if (pids.empty() || pids.back() != s.pid) pids.push_back(s.pid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  std::vector<uint32_t> process32;
  std::vector<uint16_t> process16;
  const bool narrow = pids.size() <= 0xffff;
  (narrow ? process16.resize(n) : process32.resize(n));
  uint32_t p = 0;
  for (uint32_t v = 0; v < n; ++v) {
    Pid pid = g.segments[v].pid;
    if (v == 0 || g.segments[v - 1].pid != pid)
      p = static_cast<uint32_t>(std::lower_bound(pids.begin(), pids.end(), pid) - pids.begin());
    if (narrow)
      process16[v] = static_cast<uint16_t>(p);
    else
      process32[v] = p;
  }
  auto process = [&](uint32_t v) -> uint32_t { return narrow ? process16[v] : process32[v]; };

  // Per forward CSR slot: bit 0 counts for segments, bit 1 for requests.
  constexpr uint8_t kSegment = 1, kRequest = 2;
  std::vector<uint8_t> starts_request(n, 1), slot_flags(g.edges.size());
  for (const Edge& e : g.edges)
    if (e.kind == split && e.to == e.from + 1) starts_request[e.to] = 0;
  for (size_t k = 0; k < slot_flags.size(); ++k) {
    const Edge& e = g.edges[forward.m_edge_properties[k]];
    if (e.kind == split) continue;
    slot_flags[k] = kSegment | (e.strength == Strength::Strong ? kRequest : 0);
  }

  constexpr uint32_t kNever = 0xffffffffu;
  std::vector<uint32_t> seen_by_segment(pids.size(), kNever), seen_by_request(pids.size(), kNever);
  uint64_t segment_total = 0, request_total = 0;
  uint32_t request = 0, segment_distinct = 0, request_distinct = 0;
  auto meet = [&](uint32_t v, uint32_t peer, uint8_t flags) {
    if ((flags & kSegment) && seen_by_segment[peer] != v) {
      seen_by_segment[peer] = v;
      ++segment_distinct;
    }
    if ((flags & kRequest) && seen_by_request[peer] != request) {
      seen_by_request[peer] = request;
      ++request_distinct;
    }
  };
  for (uint32_t v = 0; v < n; ++v) {
    if (starts_request[v]) {
      if (request_distinct > 1) request_total += request_distinct - 1;
      request = v;
      request_distinct = 0;
    }
    segment_distinct = 0;
    const uint32_t own = process(v);
    for (uint32_t k = forward.m_rowstart[v]; k < forward.m_rowstart[v + 1]; ++k)
      if (uint8_t flags = slot_flags[k]) {
        uint32_t peer = process(forward.m_column[k]);
        if (peer != own) meet(v, peer, flags);
      }
    for (uint32_t k = backward.m_rowstart[v]; k < backward.m_rowstart[v + 1]; ++k)
      if (uint8_t flags = slot_flags[backward.m_edge_properties[k]]) {
        uint32_t peer = process(backward.m_column[k]);
        if (peer != own) meet(v, peer, flags);
      }
    if (segment_distinct > 1) segment_total += segment_distinct - 1;
  }
  if (request_distinct > 1) request_total += request_distinct - 1;
  return {request_total, segment_total};
}

}  // namespace build

void fill_over_connections(BuildResult& result) {
  if (result.over_connections_counted) return;
  std::tie(result.stats.over_connections, result.stats.segment_over_connections) =
      build::count_both_over_connections(result.graph);
  result.over_connections_counted = true;
}

uint64_t count_segment_over_connections(const Graph& g) {
  return build::count_both_over_connections(g).second;
}

uint64_t count_over_connections(const Graph& g) {
  return build::count_both_over_connections(g).first;
}

}  // namespace cw::engine
