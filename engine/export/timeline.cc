#include "engine/export/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "engine/diagnosis/symptom.h"
#include "trace/command_marker.h"
#include "trace/names.h"

namespace cw::engine {
namespace {

std::string ms(uint64_t ns) {
  return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
}

// The first string field of an event (a call's name, a function's), "" when it has none:
// the schema says which field names a span, so no kind is named here.
std::string first_str_field(const Trace& trace, uint32_t event) {
  const Event& e = trace.events[event];
  const KindDef& def = trace.schema.kind(e.kind);
  for (size_t f = 0; f < def.fields.size(); ++f)
    if (def.fields[f].type == FieldType::Str) {
      std::string_view v = trace.strings.get(static_cast<StrId>(trace.value(e, int(f))));
      if (!v.empty()) return std::string(v);
    }
  return {};
}

// An event that opens a span, as "name" (its first string field) or the span's name.
std::string span_label(const Trace& trace, uint32_t event) {
  const KindDef& def = trace.schema.kind(trace.events[event].kind);
  if (def.span_role != SpanRole::Open) return {};
  std::string name = first_str_field(trace, event);
  return name.empty() ? def.span : name;
}

// The innermost user frame seen most often on the segment's events, "" when none has a
// stack. A span's events are left out: a call's stack ends in the call's own wrapper,
// which says where the thread waited, not where it ran.
std::string hottest_function(const Trace& trace, const std::vector<uint32_t>& events) {
  std::map<std::string, uint32_t> counts;
  for (uint32_t i : events) {
    StackId st = trace.events[i].stack;
    if (st == 0 || trace.schema.kind(trace.events[i].kind).span_role != SpanRole::None) continue;
    for (const Frame& f : frames_of(trace.stacks[st])) {
      if (f.kernel) continue;
      ++counts[frame_name(trace.strings, f)];
      break;
    }
  }
  std::string best;
  uint32_t n = 0;
  for (const auto& [name, c] : counts)
    if (c > n) best = name, n = c;
  return best;
}

// The thread's events within segment `s` (indexes into Trace::events).
std::vector<uint32_t> segment_events(const ThreadEvents& te, const Segment& seg) {
  const auto& all = te.of(seg.tid);
  auto b = std::lower_bound(all.begin(), all.end(), seg.first);
  auto e = std::upper_bound(b, all.end(), seg.last);
  return {b, e};
}

struct Naming {
  const Trace& trace;
  const Graph& graph;
  const ThreadEvents& te;

  // What segment `s` did, in a few words: the call it blocked in when it mostly waited,
  // else the function its stacks were in most often, else how long it ran when it mostly
  // ran, else the call that ended it, else the calls it made most; and the numbers
  // behind it.
  void name(uint32_t s, TimelineSlice& out) const {
    const Segment& seg = graph.segments[s];
    const SegmentProfile p = profile_segment(trace, te, graph, s);
    const std::vector<uint32_t> events = segment_events(te, seg);
    const std::string hot = hottest_function(trace, events);
    std::string ends_in;
    // The call it ended in: its last event, or the next segment's first when a cut before
    // that call started the next one.
    if (!events.empty()) ends_in = span_label(trace, events.back());
    if (ends_in.empty() && s + 1 < graph.segments.size() && graph.segments[s + 1].tid == seg.tid)
      ends_in = span_label(trace, graph.segments[s + 1].first);

    if (p.longest_block_ns > 0 && classify(p) == HangKind::LongWait) {
      out.name = p.longest_block_call == kNoIndex
                     ? "blocked"
                     : "blocked in " + first_str_field(trace, p.longest_block_call);
    } else if (!hot.empty()) {
      out.name = "in " + hot;
    } else if (p.on_cpu_ns > 0 && 2 * p.on_cpu_ns >= seg.end_ns - seg.start_ns) {
      out.name = "ran " + ms(p.on_cpu_ns);
    } else if (!ends_in.empty()) {
      out.name = "until " + ends_in;
    } else if (!p.by_name.empty()) {
      out.name = std::string(trace.strings.get(p.by_name[0].name));
      if (p.by_name.size() > 1)
        out.name += fmt::format(", {}", trace.strings.get(p.by_name[1].name));
      if (p.by_name.size() > 2) out.name += ", …";
    } else {
      out.name = p.on_cpu_ns > 0 ? "ran " + ms(p.on_cpu_ns) : "segment";
    }

    out.detail = fmt::format("on CPU {}, runnable {}, blocked {}", ms(p.on_cpu_ns),
                             ms(p.runnable_ns), ms(p.blocked_ns));
    if (p.longest_block_ns > 0 && p.longest_block_call != kNoIndex)
      out.detail += fmt::format("; longest block {} in {}", ms(p.longest_block_ns),
                                first_str_field(trace, p.longest_block_call));
    if (!p.by_name.empty()) {
      out.detail += "; calls:";
      for (size_t k = 0; k < p.by_name.size() && k < 4; ++k)
        out.detail +=
            fmt::format(" {} ×{}", trace.strings.get(p.by_name[k].name), p.by_name[k].count);
    }
    if (!ends_in.empty()) out.detail += "; ends in " + ends_in;
    if (!hot.empty()) out.detail += "; hottest frame " + hot;
  }
};

std::set<uint32_t> path_edges(const Diagnosis* d) {
  std::set<uint32_t> out;
  if (d)
    for (const PathStep& step : d->path)
      if (step.edge != kNoIndex) out.insert(step.edge);
  return out;
}

}  // namespace

TimelineScope neighbourhood(const Graph& graph, const Diagnosis& d) {
  std::set<uint32_t> core;
  for (const PathStep& step : d.path) core.insert(step.segment);
  for (const RootCause& rc : d.root_causes) core.insert(rc.segment);
  if (d.hang.segment != kNoIndex) core.insert(d.hang.segment);
  if (d.hang.first_segment != kNoIndex && d.hang.last_segment != kNoIndex)
    for (uint32_t s = d.hang.first_segment; s <= d.hang.last_segment; ++s) core.insert(s);
  core.erase(kNoIndex);

  std::set<uint32_t> out = core;
  for (const Edge& e : graph.edges) {
    if (core.count(e.from)) out.insert(e.to);
    if (core.count(e.to)) out.insert(e.from);
  }
  for (uint32_t s : core) {
    if (s > 0 && graph.segments[s - 1].tid == graph.segments[s].tid) out.insert(s - 1);
    if (s + 1 < graph.segments.size() && graph.segments[s + 1].tid == graph.segments[s].tid)
      out.insert(s + 1);
  }
  return {false, {out.begin(), out.end()}};
}

TimelineScope process_tree_scope(const Trace& trace, const Graph& graph, const Diagnosis* diagnosis,
                                 Pid root) {
  std::set<Tid> named;
  if (diagnosis) {
    auto add = [&](uint32_t s) {
      if (s != kNoIndex && s < graph.segments.size()) named.insert(graph.segments[s].tid);
    };
    for (const PathStep& step : diagnosis->path) add(step.segment);
    for (const RootCause& rc : diagnosis->root_causes) add(rc.segment);
    add(diagnosis->hang.segment);
  }
  // A process's ancestry is walked once, not once per segment of it.
  std::unordered_map<Pid, bool> in_tree;
  TimelineScope scope{false, {}};
  for (uint32_t s = 0; s < graph.segments.size(); ++s) {
    const Segment& seg = graph.segments[s];
    auto [it, fresh] = in_tree.try_emplace(seg.pid, false);
    if (fresh) it->second = in_process_tree(trace, seg.pid, root);
    if (it->second || named.count(seg.tid)) scope.segments.push_back(s);
  }
  return scope;
}

namespace {
bool flow_edge(const Graph& graph, uint32_t edge, const std::set<uint32_t>& on_path) {
  const Edge& e = graph.edges[edge];
  const bool same_thread_split =
      graph.kind_name(e) == kSplitKind && graph.segments[e.from].tid == graph.segments[e.to].tid;
  return !same_thread_split || on_path.count(edge) > 0;
}
}  // namespace

bool is_flow_edge(const Graph& graph, uint32_t edge, const Diagnosis* diagnosis) {
  return flow_edge(graph, edge, path_edges(diagnosis));
}

Timeline build_timeline(const Trace& trace, const Graph& graph, const Diagnosis* diagnosis,
                        const TimelineScope& scope) {
  std::vector<uint32_t> shown;
  if (scope.all) {
    shown.resize(graph.segments.size());
    for (uint32_t s = 0; s < shown.size(); ++s) shown[s] = s;
  } else {
    shown = scope.segments;
  }
  // Tracks: by process, then thread.
  std::map<std::pair<Pid, Tid>, std::vector<uint32_t>> by_thread;
  for (uint32_t s : shown) {
    const Segment& seg = graph.segments[s];
    by_thread[{seg.pid, seg.tid}].push_back(s);
  }
  std::vector<Tid> tids;
  for (const auto& [key, segs] : by_thread) tids.push_back(key.second);
  std::sort(tids.begin(), tids.end());
  const ThreadEvents te(trace, tids);
  const Naming naming{trace, graph, te};

  Timeline tl;
  tl.trace_start_ns = trace_start_ns(trace);
  std::unordered_map<uint32_t, uint32_t> slice_of;  // segment -> slice
  std::unordered_map<Tid, uint32_t> track_of;
  bool any = false;
  for (const auto& [key, segs] : by_thread) {
    const auto [pid, tid] = key;
    if (tl.processes.empty() || tl.processes.back().pid != pid)
      tl.processes.push_back({pid, std::string(process_comm(trace, pid)), {}});
    const uint32_t track = static_cast<uint32_t>(tl.tracks.size());
    tl.processes.back().tracks.push_back(track);
    tl.tracks.push_back({pid, tid, std::string(thread_comm(trace, tid)), {}});
    track_of[tid] = track;
    for (uint32_t s : segs) {
      const Segment& seg = graph.segments[s];
      TimelineSlice slice;
      slice.segment = s;
      slice.track = track;
      slice.start_ns = seg.start_ns;
      slice.end_ns = std::max(seg.end_ns, seg.start_ns);
      naming.name(s, slice);
      const uint32_t index = static_cast<uint32_t>(tl.slices.size());
      slice_of[s] = index;
      tl.tracks[track].slices.push_back(index);
      tl.start_ns = any ? std::min(tl.start_ns, slice.start_ns) : slice.start_ns;
      tl.end_ns = any ? std::max(tl.end_ns, slice.end_ns) : slice.end_ns;
      any = true;
      tl.slices.push_back(std::move(slice));
    }
  }

  if (diagnosis) {
    auto mark = [&](uint32_t s, bool TimelineSlice::*flag) {
      if (auto it = slice_of.find(s); it != slice_of.end()) tl.slices[it->second].*flag = true;
    };
    for (const PathStep& step : diagnosis->path) mark(step.segment, &TimelineSlice::on_path);
    for (const RootCause& rc : diagnosis->root_causes) mark(rc.segment, &TimelineSlice::root_cause);
    mark(diagnosis->hang.segment, &TimelineSlice::hang);
  }

  const std::set<uint32_t> on_path = path_edges(diagnosis);
  for (uint32_t i = 0; i < graph.edges.size(); ++i) {
    const Edge& e = graph.edges[i];
    auto from = slice_of.find(e.from), to = slice_of.find(e.to);
    if (from == slice_of.end() || to == slice_of.end()) continue;
    if (!flow_edge(graph, i, on_path)) continue;
    const TimelineSlice& a = tl.slices[from->second];
    const TimelineSlice& b = tl.slices[to->second];
    TimelineFlow f;
    f.edge = i;
    f.from_slice = from->second;
    f.to_slice = to->second;
    f.from_ns = std::clamp(trace.events[e.from_event].ts, a.start_ns, a.end_ns);
    f.to_ns = std::clamp(trace.events[e.to_event].ts, b.start_ns, b.end_ns);
    // A send is recorded as its call returns; on another CPU the receiver may have read
    // the bytes before that: they left the sender by the time they were read, so the arrow
    // starts no later than its end (never back in time: viewers reject such a flow).
    if (f.to_ns < f.from_ns) f.from_ns = std::max(a.start_ns, f.to_ns);
    if (f.to_ns < f.from_ns) f.to_ns = std::min(b.end_ns, f.from_ns);
    if (f.to_ns < f.from_ns) continue;  // the receiving slice ended before the sending began
    f.kind = graph.kind_name(e);
    f.strength = e.strength;
    f.on_path = on_path.count(i) > 0;
    tl.flows.push_back(std::move(f));
  }

  // Markers: those on the threads shown.
  const KindId marker = trace.schema.find("marker");
  if (marker != kNoKind && any) {
    const int text = trace.schema.field_index(marker, "text");
    for (const Event& e : trace.events) {
      if (e.kind != marker) continue;
      auto it = track_of.find(e.tid);
      if (it == track_of.end()) continue;
      std::string name =
          text >= 0 ? std::string(trace.strings.get(static_cast<StrId>(trace.value(e, text))))
                    : std::string();
      tl.instants.push_back({it->second, e.ts, name.empty() ? "marker" : name});
    }
  }
  return tl;
}

}  // namespace cw::engine
