#include "engine/similar_segments.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace cw::engine {

namespace {

// Scheduling and interrupt events say how a thread ran, not what it did.
bool is_semantic(const Trace& trace, KindId kind) {
  static constexpr std::array<std::string_view, 10> kMechanics = {
      "switch_in", "switch_out", "wakeup",        "wakeup_new",   "irq_enter",
      "irq_exit",  "comm",       "softirq_enter", "softirq_exit", "thread_start"};
  const std::string& name = trace.schema.kind(kind).name;
  return std::find(kMechanics.begin(), kMechanics.end(), name) == kMechanics.end();
}

// The thread's events of `segment`: a slice of the thread's event list.
std::pair<const uint32_t*, const uint32_t*> segment_range(const ThreadEvents& events,
                                                          const Graph& graph, uint32_t segment) {
  const Segment& s = graph.segments[segment];
  const auto& list = events.of(s.tid);
  auto lo = std::lower_bound(list.begin(), list.end(), s.first);
  auto hi = std::upper_bound(lo, list.end(), s.last);
  return {list.data() + (lo - list.begin()), list.data() + (hi - list.begin())};
}

int64_t wait_result(const Trace& trace, const SegmentProfile& p) {
  if (p.longest_block_exit == kNoIndex) return 0;
  const Event& e = trace.events[p.longest_block_exit];
  int ret = trace.schema.field_index(e.kind, "ret");
  return ret < 0 ? 0 : trace.int_value(e, ret);
}

}  // namespace

std::vector<uint32_t> semantic_events(const Trace& trace, const ThreadEvents& events,
                                      const Graph& graph, uint32_t segment, size_t limit) {
  std::vector<uint32_t> out;
  auto [it, end] = segment_range(events, graph, segment);
  for (; it != end && out.size() < limit; ++it)
    if (is_semantic(trace, trace.events[*it].kind)) out.push_back(*it);
  return out;
}

bool same_semantics(const Trace& trace, uint32_t a, uint32_t b) {
  const Event& ea = trace.events[a];
  const Event& eb = trace.events[b];
  if (ea.kind != eb.kind) return false;
  const auto& fields = trace.schema.kind(ea.kind).fields;
  for (size_t f = 0; f < fields.size(); ++f) {
    int fi = static_cast<int>(f);
    if (fields[f].type == FieldType::Str) {
      if (trace.value(ea, fi) != trace.value(eb, fi)) return false;
    } else if (fields[f].name == "fd") {
      // The same descriptor number: the same channel, in this process or a re-run of it.
      if (trace.value(ea, fi) != trace.value(eb, fi)) return false;
    } else if (fields[f].name == "peer") {
      // Peers by name: the same program at the other end, whatever its pid this time.
      const ProcessInfo* pa = trace.process(static_cast<Pid>(trace.value(ea, fi)));
      const ProcessInfo* pb = trace.process(static_cast<Pid>(trace.value(eb, fi)));
      if ((pa ? pa->comm : 0) != (pb ? pb->comm : 0)) return false;
    }
  }
  return true;
}

std::vector<SimilarSegment> find_similar(const Trace& trace, const ThreadEvents& events,
                                         const Graph& graph, uint32_t hang_segment,
                                         const SegmentProfile& hang,
                                         const SimilarOptions& options) {
  const Segment& h = graph.segments[hang_segment];
  const std::vector<uint32_t> mine =
      semantic_events(trace, events, graph, hang_segment, options.compare_events);
  std::vector<SimilarSegment> out;
  if (mine.empty()) return out;
  const int64_t hang_result = wait_result(trace, hang);
  const bool hang_returned = hang.longest_block_exit != kNoIndex;

  const ThreadInfo* ht = trace.thread(h.tid);
  const ProcessInfo* hp = trace.process(h.pid);
  auto same_names = [&](Tid tid) {
    if (tid == h.tid) return true;
    const ThreadInfo* t = trace.thread(tid);
    if (!t || !ht || t->comm != ht->comm) return false;
    const ProcessInfo* p = trace.process(t->pid);
    return p && hp && p->comm == hp->comm;
  };

  for (const auto& ts : graph.threads) {
    if (!same_names(ts.tid) || events.of(ts.tid).empty()) continue;
    for (uint32_t s = ts.begin; s < ts.end; ++s) {
      if (s == hang_segment) continue;
      std::vector<uint32_t> theirs =
          semantic_events(trace, events, graph, s, options.compare_events);
      size_t n = std::min(mine.size(), theirs.size());
      if (n == 0) continue;
      bool same = true;
      for (size_t k = 0; k < n && same; ++k) same = same_semantics(trace, mine[k], theirs[k]);
      if (!same) continue;
      SegmentProfile p = profile_segment(trace, events, graph, s);
      SimilarSegment c;
      c.segment = s;
      c.wait_ns = p.longest_block_ns;
      c.wait_result = wait_result(trace, p);
      c.result_differs =
          hang_returned && p.longest_block_exit != kNoIndex && c.wait_result != hang_result;
      bool quick = static_cast<double>(p.longest_block_ns) <=
                   options.quick_fraction * static_cast<double>(hang.longest_block_ns);
      if (quick || c.result_differs) out.push_back(c);
    }
  }
  // Same thread first; then the latest before the hang, then those after it, nearest first.
  const uint64_t t0 = h.start_ns;
  std::stable_sort(out.begin(), out.end(), [&](const SimilarSegment& a, const SimilarSegment& b) {
    const Segment& sa = graph.segments[a.segment];
    const Segment& sb = graph.segments[b.segment];
    bool ta = sa.tid == h.tid, tb = sb.tid == h.tid;
    if (ta != tb) return ta;
    bool ba = sa.start_ns < t0, bb = sb.start_ns < t0;
    if (ba != bb) return ba;
    return ba ? sa.start_ns > sb.start_ns : sa.start_ns < sb.start_ns;
  });
  if (out.size() > options.max_candidates) out.resize(options.max_candidates);
  return out;
}

}  // namespace cw::engine
