#include "engine/export/perfetto.h"

#include <doctest/doctest.h>

#include "engine/export/export_test_support.h"
#include "engine/export/perfetto_check.h"
#include "engine/export/perfetto_trace.pb.h"

namespace cw::engine {
namespace {

using testing::build;
using testing::Built;
using testing::diagnose_client;
using testing::kAskAndWait;
using testing::kTimelineRules;

std::string problems(const PerfettoReadBack& r) {
  std::string out;
  for (const auto& p : r.problems) out += p + "\n";
  return out;
}

TEST_CASE(
    "perfetto: the export reads back with a track per thread, a slice per segment, a "
    "flow per edge") {
  const Built b = build(kTimelineRules, kAskAndWait);
  const Graph& g = b.graph();
  const Diagnosis d = diagnose_client(b);
  const Timeline tl = build_timeline(b.trace, g, &d);
  std::vector<std::string> notes;
  const std::string bytes = perfetto_trace(b.trace, tl, &notes);
  const PerfettoReadBack r = read_back_perfetto(bytes);
  CHECK_MESSAGE(r.problems.empty(), problems(r));

  // Against the graph itself, not the timeline: every thread, segment and cross-thread edge.
  CHECK(r.process_tracks == 2);
  CHECK(r.thread_tracks == g.threads.size());
  CHECK(r.segment_slices == g.segments.size());
  size_t edges = 0;
  for (const Edge& e : g.edges)
    edges += g.kind_name(e) != kSplitKind || g.segments[e.from].tid != g.segments[e.to].tid;
  CHECK(r.flows == edges);
  CHECK(r.markers == 1);
  CHECK(r.root_cause_slices == 1);
  size_t path_edges = 0;
  for (const PathStep& s : d.path) path_edges += s.edge != kNoIndex;
  CHECK(r.path_slices == d.path.size());
  CHECK(r.path_flows == path_edges);

  // The scheduler stream: every switch_out and switch_in on CPU 0 of this trace pairs up
  // or meets an idle CPU; each wake-up is one waking row.
  CHECK(r.cpus == 1);
  CHECK(r.sched_wakings == 2);
  CHECK(r.sched_switches > 0);
  // A text trace without cpu= puts every thread on CPU 0, and here two of them overlap.
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("CPU numbers are missing") != std::string::npos);
}

TEST_CASE("perfetto: the read-back finds what Perfetto would reject") {
  const Built b = build(kTimelineRules, kAskAndWait);
  const Timeline tl = build_timeline(b.trace, b.graph(), nullptr);
  perfetto::protos::Trace t;
  REQUIRE(t.ParseFromString(perfetto_trace(b.trace, tl, nullptr)));

  SUBCASE("garbage") {
    CHECK_FALSE(read_back_perfetto("\xff\xff\xff").problems.empty());
  }
  SUBCASE("a timestamp going back") {
    int last = -1;
    for (int i = 0; i < t.packet_size(); ++i)
      if (t.packet(i).has_track_event()) last = i;
    REQUIRE(last > 0);
    t.mutable_packet(last)->set_timestamp(1);
    CHECK_FALSE(read_back_perfetto(t.SerializeAsString()).problems.empty());
  }
  SUBCASE("a flow with one end") {
    for (auto& p : *t.mutable_packet())
      if (p.has_track_event() && p.track_event().terminating_flow_ids_size() > 0) {
        p.mutable_track_event()->clear_terminating_flow_ids();
        break;
      }
    CHECK_FALSE(read_back_perfetto(t.SerializeAsString()).problems.empty());
  }
  SUBCASE("an event on a track never described") {
    for (auto& p : *t.mutable_packet())
      if (p.has_track_event()) {
        p.mutable_track_event()->set_track_uuid(42);
        break;
      }
    CHECK_FALSE(read_back_perfetto(t.SerializeAsString()).problems.empty());
  }
  SUBCASE("a slice never ended") {
    for (int i = t.packet_size() - 1; i >= 0; --i)
      if (t.packet(i).has_track_event() &&
          t.packet(i).track_event().type() == perfetto::protos::TrackEvent::TYPE_SLICE_END) {
        t.mutable_packet()->DeleteSubrange(i, 1);
        break;
      }
    CHECK_FALSE(read_back_perfetto(t.SerializeAsString()).problems.empty());
  }
}

}  // namespace
}  // namespace cw::engine
