#include "engine/export/perfetto_check.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>

#include "engine/export/perfetto_trace.pb.h"

namespace cw::engine {
namespace {

namespace pb = perfetto::protos;

struct Sequence {
  uint64_t last_ts = 0;
  bool cleared = false;
  std::unordered_map<uint64_t, std::string> names, categories;
};

void check_compact_sched(const pb::FtraceEventBundle& b, size_t packet, PerfettoReadBack& r) {
  if (!b.has_compact_sched()) return;
  const auto& c = b.compact_sched();
  const int n = c.switch_timestamp_size();
  if (c.switch_prev_state_size() != n || c.switch_next_pid_size() != n ||
      c.switch_next_prio_size() != n || c.switch_next_comm_index_size() != n)
    r.problems.push_back(fmt::format("packet {}: sched_switch columns differ in length", packet));
  const int w = c.waking_timestamp_size();
  if (c.waking_pid_size() != w || c.waking_target_cpu_size() != w || c.waking_prio_size() != w ||
      c.waking_comm_index_size() != w || c.waking_common_flags_size() != w)
    r.problems.push_back(fmt::format("packet {}: sched_waking columns differ in length", packet));
  for (uint32_t i : c.switch_next_comm_index())
    if (i >= uint32_t(c.intern_table_size()))
      r.problems.push_back(fmt::format("packet {}: comm index {} outside intern_table", packet, i));
  for (uint32_t i : c.waking_comm_index())
    if (i >= uint32_t(c.intern_table_size()))
      r.problems.push_back(fmt::format("packet {}: comm index {} outside intern_table", packet, i));
  r.sched_switches += n;
  r.sched_wakings += w;
}

}  // namespace

PerfettoReadBack read_back_perfetto(std::string_view bytes) {
  PerfettoReadBack r;
  pb::Trace trace;
  if (!trace.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    r.problems.push_back("not a Perfetto trace: protobuf cannot parse it");
    return r;
  }
  std::set<uint64_t> tracks;
  std::map<uint64_t, uint64_t> parents;  // thread track -> its parent
  std::map<uint32_t, Sequence> sequences;
  std::map<uint64_t, std::vector<uint64_t>> open;  // track -> begin times of open slices
  std::map<uint64_t, std::pair<int, int>> flows;   // id -> (starts, terminations)
  std::set<uint32_t> cpus;

  for (int i = 0; i < trace.packet_size(); ++i) {
    const pb::TracePacket& p = trace.packet(i);
    Sequence& seq = sequences[p.trusted_packet_sequence_id()];
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      seq.cleared = true;
      seq.names.clear();
      seq.categories.clear();
    }
    if (p.has_interned_data()) {
      for (const auto& n : p.interned_data().event_names()) seq.names[n.iid()] = n.name();
      for (const auto& c : p.interned_data().event_categories()) seq.categories[c.iid()] = c.name();
    }
    if (p.has_track_descriptor()) {
      const pb::TrackDescriptor& d = p.track_descriptor();
      if (!tracks.insert(d.uuid()).second)
        r.problems.push_back(fmt::format("packet {}: track {} described twice", i, d.uuid()));
      if (d.has_thread()) {
        ++r.thread_tracks;
        parents[d.uuid()] = d.parent_uuid();
      } else if (d.has_process()) {
        ++r.process_tracks;
      }
    }
    if (p.has_ftrace_events()) {
      cpus.insert(p.ftrace_events().cpu());
      check_compact_sched(p.ftrace_events(), i, r);
    }
    if (!p.has_track_event()) continue;
    if ((p.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) && !seq.cleared)
      r.problems.push_back(fmt::format("packet {}: needs incremental state never cleared", i));
    if (p.timestamp() < seq.last_ts)
      r.problems.push_back(fmt::format("packet {}: timestamp {} before the sequence's {}", i,
                                       p.timestamp(), seq.last_ts));
    seq.last_ts = p.timestamp();
    const pb::TrackEvent& e = p.track_event();
    if (!tracks.count(e.track_uuid()))
      r.problems.push_back(fmt::format("packet {}: event on unknown track {}", i, e.track_uuid()));
    std::set<std::string> cats;
    for (uint64_t iid : e.category_iids()) {
      auto it = seq.categories.find(iid);
      if (it == seq.categories.end())
        r.problems.push_back(fmt::format("packet {}: category iid {} never interned", i, iid));
      else
        cats.insert(it->second);
    }
    for (const std::string& c : e.categories()) cats.insert(c);
    if (e.has_name_iid() && !seq.names.count(e.name_iid()))
      r.problems.push_back(fmt::format("packet {}: name iid {} never interned", i, e.name_iid()));
    for (uint64_t id : e.flow_ids()) ++flows[id].first;
    for (uint64_t id : e.terminating_flow_ids()) {
      if (flows[id].first == 0)
        r.problems.push_back(fmt::format("packet {}: flow {} ends before it starts", i, id));
      ++flows[id].second;
    }
    switch (e.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN: open[e.track_uuid()].push_back(p.timestamp()); break;
      case pb::TrackEvent::TYPE_SLICE_END:
        if (open[e.track_uuid()].empty())
          r.problems.push_back(fmt::format("packet {}: slice end with no slice open", i));
        else
          open[e.track_uuid()].pop_back();
        break;
      default: break;
    }
    if (e.type() == pb::TrackEvent::TYPE_SLICE_END) continue;
    if (cats.count("segment")) {
      ++r.segment_slices;
      r.path_slices += cats.count("causal_path");
      r.root_cause_slices += cats.count("root_cause");
    }
    if (cats.count("marker")) ++r.markers;
    if (!e.terminating_flow_ids().empty() && cats.count("causal_path")) ++r.path_flows;
  }
  for (const auto& [track, parent] : parents)
    if (!tracks.count(parent))
      r.problems.push_back(fmt::format("thread track {} has unknown parent {}", track, parent));
  for (const auto& [track, begins] : open)
    if (!begins.empty())
      r.problems.push_back(fmt::format("track {}: {} slice(s) never ended", track, begins.size()));
  for (const auto& [id, ends] : flows) {
    if (ends.first == 1 && ends.second == 1)
      ++r.flows;
    else
      r.problems.push_back(fmt::format("flow {}: {} start(s) and {} end(s), expected one each", id,
                                       ends.first, ends.second));
  }
  r.cpus = cpus.size();
  return r;
}

}  // namespace cw::engine
