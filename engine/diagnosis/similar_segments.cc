#include "engine/diagnosis/similar_segments.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace cw::engine {

namespace {

// What each event kind contributes to a comparison, looked up once per kind: whether it
// is semantic at all (scheduling and interrupts say how a thread ran, not what it did),
// and which of its fields are compared.
struct KindRoles {
  bool semantic = false;
  std::vector<int> text_fields;  // compared by value
  int fd = -1;                   // the same descriptor number
  int peer = -1;                 // the peer process, by name
};

class Semantics {
 public:
  explicit Semantics(const Trace& trace) : trace_(trace), roles_(trace.schema.size()) {
    static constexpr std::array<std::string_view, 10> kMechanics = {
        "switch_in", "switch_out", "wakeup",        "wakeup_new",   "irq_enter",
        "irq_exit",  "comm",       "softirq_enter", "softirq_exit", "thread_start"};
    for (KindId k = 0; k < roles_.size(); ++k) {
      const KindDef& def = trace.schema.kind(k);
      KindRoles& r = roles_[k];
      r.semantic = std::find(kMechanics.begin(), kMechanics.end(), def.name) == kMechanics.end();
      for (size_t f = 0; f < def.fields.size(); ++f) {
        if (def.fields[f].type == FieldType::Str) r.text_fields.push_back(static_cast<int>(f));
        if (def.fields[f].name == "fd") r.fd = static_cast<int>(f);
        if (def.fields[f].name == "peer") r.peer = static_cast<int>(f);
      }
    }
  }

  bool semantic(uint32_t event) const { return roles_[trace_.events[event].kind].semantic; }

  bool same(uint32_t a, uint32_t b) const {
    const Event& ea = trace_.events[a];
    const Event& eb = trace_.events[b];
    if (ea.kind != eb.kind) return false;
    const KindRoles& r = roles_[ea.kind];
    for (int f : r.text_fields)
      if (trace_.value(ea, f) != trace_.value(eb, f)) return false;
    if (r.fd >= 0 && trace_.value(ea, r.fd) != trace_.value(eb, r.fd)) return false;
    if (r.peer >= 0) {
      // Peers by name: the same program at the other end, whatever its pid this time.
      const ProcessInfo* pa = trace_.process(static_cast<Pid>(trace_.value(ea, r.peer)));
      const ProcessInfo* pb = trace_.process(static_cast<Pid>(trace_.value(eb, r.peer)));
      if ((pa ? pa->comm : 0) != (pb ? pb->comm : 0)) return false;
    }
    return true;
  }

 private:
  const Trace& trace_;
  std::vector<KindRoles> roles_;
};

// The thread's events of `segment`: a slice of the thread's event list.
std::pair<const uint32_t*, const uint32_t*> segment_range(const ThreadEvents& events,
                                                          const Graph& graph, uint32_t segment) {
  const Segment& s = graph.segments[segment];
  const auto& list = events.of(s.tid);
  auto lo = std::lower_bound(list.begin(), list.end(), s.first);
  auto hi = std::upper_bound(lo, list.end(), s.last);
  return {list.data() + (lo - list.begin()), list.data() + (hi - list.begin())};
}

std::vector<uint32_t> semantic_of(const Semantics& sem, const ThreadEvents& events,
                                  const Graph& graph, uint32_t segment, size_t limit) {
  std::vector<uint32_t> out;
  auto [it, end] = segment_range(events, graph, segment);
  for (; it != end && out.size() < limit; ++it)
    if (sem.semantic(*it)) out.push_back(*it);
  return out;
}

int64_t wait_result(const Trace& trace, const SegmentProfile& p) {
  if (p.longest_block_exit == kNoIndex) return 0;
  const Event& e = trace.events[p.longest_block_exit];
  int ret = trace.schema.field_index(e.kind, "ret");
  return ret < 0 ? 0 : trace.int_value(e, ret);
}

// Whether the semantic events of `seg` (in `list`, the thread's events) contain `mine` in
// order from one of its semantic events on, up to the segment's end: all of `mine`, or as
// much of it as the segment holds from there.
bool matches_within(const Semantics& sem, EventList list, const Segment& seg,
                    const std::vector<uint32_t>& mine) {
  const size_t at =
      static_cast<size_t>(std::lower_bound(list.begin(), list.end(), seg.first) - list.begin());
  for (size_t start = at; start < list.size() && list[start] <= seg.last; ++start) {
    if (!sem.semantic(list[start]) || !sem.same(mine[0], list[start])) continue;
    size_t k = 0;
    bool same = true;
    for (size_t i = start; i < list.size() && list[i] <= seg.last && k < mine.size(); ++i) {
      if (!sem.semantic(list[i])) continue;
      if (!sem.same(mine[k], list[i])) {
        same = false;
        break;
      }
      ++k;
    }
    if (same) return true;
  }
  return false;
}

}  // namespace

std::vector<SimilarSegment> find_similar(const Trace& trace, const ThreadEvents& events,
                                         const Graph& graph, uint32_t hang_segment,
                                         const SegmentProfile& hang,
                                         const SimilarOptions& options) {
  const Segment& h = graph.segments[hang_segment];
  const Semantics sem(trace);
  std::vector<uint32_t> mine =
      semantic_of(sem, events, graph, hang_segment, options.compare_events);
  // What the segment did up to the return of its wait (and what that delivered, recorded
  // before the return): what came after — the next request, an exit — is another story.
  if (hang.longest_block_exit != kNoIndex)
    mine.erase(std::upper_bound(mine.begin(), mine.end(), hang.longest_block_exit), mine.end());
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

  // A baseline shows what should have happened before the hang went wrong: it ended
  // before the hang's wait began (a later run may be the hang's own aftermath).
  const uint64_t hang_began = hang.longest_block_ns > 0 ? hang.longest_block_start : h.start_ns;
  for (const auto& ts : graph.threads) {
    if (!same_names(ts.tid) || events.of(ts.tid).empty()) continue;
    const auto& list = events.of(ts.tid);
    for (uint32_t s = ts.begin; s < ts.end; ++s) {
      const Segment& seg = graph.segments[s];
      if (seg.start_ns >= hang_began) break;  // segments of a thread are in time order
      if (s == hang_segment) continue;
      // The same calls from the segment's start, or from the middle of one: a wait for
      // data cuts a segment only when it blocks, so a run of it that found its data
      // already there sits inside the segment of what came before (a request sent and
      // its answer read in one step).
      if (!matches_within(sem, list, seg, mine)) continue;
      SegmentProfile p = profile_segment(trace, events, graph, s);
      SimilarSegment c;
      c.segment = s;
      c.wait_ns = p.longest_block_ns;
      c.wait_result = wait_result(trace, p);
      c.result_differs =
          hang_returned && p.longest_block_exit != kNoIndex && c.wait_result != hang_result;
      // Only a quick wait: one that took as long (whatever it returned) shows nothing
      // about what the hang lacked.
      bool quick = static_cast<double>(p.longest_block_ns) <=
                   options.quick_fraction * static_cast<double>(hang.longest_block_ns);
      bool ended_before = p.longest_block_start + p.longest_block_ns <= hang_began;
      if (quick && ended_before) out.push_back(c);
    }
  }
  // Same thread first; then the latest first.
  std::stable_sort(out.begin(), out.end(), [&](const SimilarSegment& a, const SimilarSegment& b) {
    const Segment& sa = graph.segments[a.segment];
    const Segment& sb = graph.segments[b.segment];
    bool ta = sa.tid == h.tid, tb = sb.tid == h.tid;
    if (ta != tb) return ta;
    return sa.start_ns > sb.start_ns;
  });
  if (out.size() > options.max_candidates) out.resize(options.max_candidates);
  return out;
}

}  // namespace cw::engine
