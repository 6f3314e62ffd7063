#include "engine/export/perfetto.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "engine/export/perfetto_sched.h"
#include "engine/export/perfetto_trace.pb.h"

namespace cw::engine {
namespace {

namespace pb = perfetto::protos;

// Track ids: processes and threads in ranges of their own (any 64-bit id will do).
uint64_t process_uuid(size_t index) {
  return (uint64_t{1} << 32) + index;
}
uint64_t thread_uuid(size_t index) {
  return (uint64_t{2} << 32) + index;
}

// One track event before it is written: events are sorted by time, as a sequence must be.
struct Pending {
  uint64_t ts;
  // At one time: slices end before others begin, then instants, flow starts before flow
  // ends, so that a zero-length gap between two slices does not nest them.
  int order;
  pb::TrackEvent event;
};

class Writer {
 public:
  explicit Writer(pb::Trace& out) : out_(out) {}

  // The iid of `s` in `table`; the first time, also the entry `add()` makes in the
  // packet's interned data.
  template <class Add>
  static uint64_t intern(std::unordered_map<std::string, uint64_t>& table, const std::string& s,
                         Add add) {
    auto [it, added] = table.emplace(s, table.size() + 1);
    if (added) {
      auto* entry = add();
      entry->set_iid(it->second);
      entry->set_name(s);
    }
    return it->second;
  }

  // A packet on the track event sequence; the first clears the sequence's interned state.
  pb::TracePacket* packet() {
    pb::TracePacket* p = out_.add_packet();
    p->set_trusted_packet_sequence_id(kTrackEventSequence);
    p->set_sequence_flags(first_ ? pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED
                                 : pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    first_ = false;
    return p;
  }

  // Writes `e` with its name and categories interned.
  void write(uint64_t ts, pb::TrackEvent e, const std::string& name,
             const std::vector<std::string>& cats) {
    pb::TracePacket* p = packet();
    p->set_timestamp(ts);
    pb::InternedData fresh;
    if (!name.empty())
      e.set_name_iid(intern(names_, name, [&] { return fresh.add_event_names(); }));
    for (const std::string& c : cats)
      e.add_category_iids(intern(categories_, c, [&] { return fresh.add_event_categories(); }));
    if (fresh.event_names_size() || fresh.event_categories_size())
      *p->mutable_interned_data() = std::move(fresh);
    *p->mutable_track_event() = std::move(e);
  }

 private:
  pb::Trace& out_;
  bool first_ = true;
  std::unordered_map<std::string, uint64_t> names_, categories_;
};

void annotate(pb::TrackEvent& e, const char* name, const std::string& value) {
  auto* a = e.add_debug_annotations();
  a->set_name(name);
  a->set_string_value(value);
}
void annotate(pb::TrackEvent& e, const char* name, uint64_t value) {
  auto* a = e.add_debug_annotations();
  a->set_name(name);
  a->set_uint_value(value);
}
void annotate_flag(pb::TrackEvent& e, const char* name, bool value) {
  if (!value) return;
  auto* a = e.add_debug_annotations();
  a->set_name(name);
  a->set_bool_value(true);
}

std::vector<std::string> slice_categories(const TimelineSlice& s) {
  std::vector<std::string> cats{"segment"};
  if (s.on_path) cats.push_back("causal_path");
  if (s.root_cause) cats.push_back("root_cause");
  if (s.hang) cats.push_back("hang");
  return cats;
}

}  // namespace

std::string perfetto_trace(const Trace& trace, const Timeline& tl,
                           std::vector<std::string>* notes) {
  pb::Trace out;
  Writer w(out);

  // Tracks first: Perfetto reads descriptors before the events that refer to them.
  for (size_t i = 0; i < tl.processes.size(); ++i) {
    const TimelineProcess& p = tl.processes[i];
    pb::TrackDescriptor* d = w.packet()->mutable_track_descriptor();
    d->set_uuid(process_uuid(i));
    d->mutable_process()->set_pid(static_cast<int32_t>(p.pid));
    if (!p.name.empty()) d->mutable_process()->set_process_name(p.name);
    for (uint32_t t : p.tracks) {
      const TimelineTrack& track = tl.tracks[t];
      pb::TrackDescriptor* td = w.packet()->mutable_track_descriptor();
      td->set_uuid(thread_uuid(t));
      td->set_parent_uuid(process_uuid(i));
      td->mutable_thread()->set_pid(static_cast<int32_t>(track.pid));
      td->mutable_thread()->set_tid(static_cast<int64_t>(track.tid));
      if (!track.name.empty()) td->mutable_thread()->set_thread_name(track.name);
    }
  }

  struct Named {
    Pending p;
    std::string name;
    std::vector<std::string> cats;
  };
  std::vector<Named> events;
  events.reserve(tl.slices.size() * 2 + tl.flows.size() * 2 + tl.instants.size());
  for (const TimelineSlice& s : tl.slices) {
    pb::TrackEvent e;
    e.set_track_uuid(thread_uuid(s.track));
    annotate(e, "segment", s.segment);
    // The report's time of it (seconds since the trace's first event), beside the trace's
    // clock Perfetto shows.
    annotate(e, "at",
             fmt::format(
                 "{:.6f} s",
                 static_cast<double>(s.start_ns - std::min(s.start_ns, tl.trace_start_ns)) / 1e9));
    annotate(e, "detail", s.detail);
    annotate_flag(e, "causal_path", s.on_path);
    annotate_flag(e, "root_cause", s.root_cause);
    annotate_flag(e, "hang", s.hang);
    if (s.end_ns == s.start_ns) {
      // A slice of no length is an instant: a begin and an end at one time could be
      // ordered either way among the other tracks' events.
      e.set_type(pb::TrackEvent::TYPE_INSTANT);
      events.push_back({{s.start_ns, 2, std::move(e)}, s.name, slice_categories(s)});
      continue;
    }
    e.set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
    events.push_back({{s.start_ns, 1, std::move(e)}, s.name, slice_categories(s)});
    pb::TrackEvent end;
    end.set_type(pb::TrackEvent::TYPE_SLICE_END);
    end.set_track_uuid(thread_uuid(s.track));
    events.push_back({{s.end_ns, 0, std::move(end)}, "", {}});
  }
  // A flow joins an instant at the cause's time to one at the effect's, each inside the
  // slice of its segment: the arrow starts and ends where the edge's evidence is.
  for (size_t i = 0; i < tl.flows.size(); ++i) {
    const TimelineFlow& f = tl.flows[i];
    const std::string name = fmt::format("{} ({})", f.kind, strength_name(f.strength));
    std::vector<std::string> cats{fmt::format("edge.{}", strength_name(f.strength))};
    if (f.on_path) cats.push_back("causal_path");
    for (int end = 0; end < 2; ++end) {
      pb::TrackEvent e;
      e.set_type(pb::TrackEvent::TYPE_INSTANT);
      e.set_track_uuid(thread_uuid(tl.slices[end ? f.to_slice : f.from_slice].track));
      if (end)
        e.add_terminating_flow_ids(i + 1);
      else
        e.add_flow_ids(i + 1);
      annotate(e, "edge", f.edge);
      annotate(e, "kind", f.kind);
      annotate(e, "strength", std::string(strength_name(f.strength)));
      annotate_flag(e, "causal_path", f.on_path);
      events.push_back({{end ? f.to_ns : f.from_ns, 3 + end, std::move(e)},
                        end ? "effect: " + name : "cause: " + name,
                        cats});
    }
  }
  for (const TimelineInstant& m : tl.instants) {
    pb::TrackEvent e;
    e.set_type(pb::TrackEvent::TYPE_INSTANT);
    e.set_track_uuid(thread_uuid(m.track));
    events.push_back({{m.ts, 5, std::move(e)}, m.name, {"marker"}});
  }
  std::stable_sort(events.begin(), events.end(), [](const Named& a, const Named& b) {
    return a.p.ts != b.p.ts ? a.p.ts < b.p.ts : a.p.order < b.p.order;
  });
  for (Named& n : events) w.write(n.p.ts, std::move(n.p.event), n.name, n.cats);

  add_compact_sched(trace, kSchedSequence, out, notes);
  return out.SerializeAsString();
}

}  // namespace cw::engine
