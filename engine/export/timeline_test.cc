#include "engine/export/timeline.h"

#include <doctest/doctest.h>

#include <set>

#include "engine/export/export_test_support.h"

namespace cw::engine {
namespace {

using testing::build;
using testing::Built;
using testing::diagnose_client;
using testing::kAskAndWait;
using testing::kTimelineRules;
using testing::slice_at;

TEST_CASE("timeline: a track per thread by process, a slice per segment, a flow per edge") {
  const Built b = build(kTimelineRules, kAskAndWait);
  const Graph& g = b.graph();
  const Timeline tl = build_timeline(b.trace, g, nullptr);

  REQUIRE(tl.processes.size() == 2);
  CHECK(tl.processes[0].name == "cw-client");
  CHECK(tl.processes[1].name == "cw-server");
  CHECK(tl.processes[1].tracks.size() == 2);
  REQUIRE(tl.tracks.size() == 3);
  CHECK(tl.tracks[tl.processes[1].tracks[1]].name == "cw-idle");
  CHECK(tl.slices.size() == g.segments.size());
  for (const TimelineTrack& t : tl.tracks)
    for (size_t k = 1; k < t.slices.size(); ++k)
      CHECK(tl.slices[t.slices[k - 1]].start_ns <= tl.slices[t.slices[k]].start_ns);

  // Every edge but a thread's own splits, each end inside its slice.
  size_t expected = 0;
  for (const Edge& e : g.edges)
    if (g.kind_name(e) != kSplitKind || g.segments[e.from].tid != g.segments[e.to].tid) ++expected;
  CHECK(expected > 0);
  CHECK(tl.flows.size() == expected);
  for (const TimelineFlow& f : tl.flows) {
    const TimelineSlice& a = tl.slices[f.from_slice];
    const TimelineSlice& z = tl.slices[f.to_slice];
    CHECK(a.segment == g.edges[f.edge].from);
    CHECK(z.segment == g.edges[f.edge].to);
    CHECK((a.start_ns <= f.from_ns && f.from_ns <= a.end_ns));
    CHECK((z.start_ns <= f.to_ns && f.to_ns <= z.end_ns));
    CHECK_FALSE(f.on_path);
  }

  // Named by what they did: the client's read blocked; the server computed.
  const TimelineSlice* wait = slice_at(tl, 100, 10'000'000);
  REQUIRE(wait);
  CHECK(wait->name == "blocked in read");
  CHECK(wait->detail.find("longest block 802.0 ms in read") != std::string::npos);
  const TimelineSlice* work = slice_at(tl, 200, 1'000'000);
  REQUIRE(work);
  CHECK(work->name == "in compute");
  // A segment that only led up to a call that cut it is named by that call.
  const TimelineSlice* ask = slice_at(tl, 100, 10'000'000, 10'000'000);
  REQUIRE(ask);
  CHECK(ask->name == "until read");
  // One with no call left and no stack: the calls it made.
  const TimelineSlice* tail = slice_at(tl, 200, 811'000'000, 811'000'000);
  REQUIRE(tail);
  CHECK(tail->name == "read, write");

  REQUIRE(tl.instants.size() == 1);
  CHECK(tl.instants[0].name == "answered");
  CHECK(tl.tracks[tl.instants[0].track].tid == 100);
  CHECK(tl.instants[0].ts == 812'000'000);
  CHECK(tl.start_ns == 1'000'000);
  CHECK(tl.end_ns == 813'000'000);
}

TEST_CASE("timeline: bytes read before the send's call returned still flow forward") {
  // cw-writer's write returns at 5.002 ms (its send is stamped then); cw-reader, on the
  // other CPU, had read the bytes at 5.001 ms.
  const Built b = build(kTimelineRules, R"(
process 100 comm=cw-writer
thread 100 pid=100 comm=cw-writer
process 200 comm=cw-reader
thread 200 pid=200 comm=cw-reader
1ms 200 syscall_enter name=read fd=4
1ms 200 switch_out state=S
5ms 100 syscall_enter name=write fd=3
5001us 200 switch_in
5001us 200 recv object=1 offset=0 len=8 peer=100 fd=4
5001us 200 syscall_exit name=read ret=8
5002us 100 send object=1 offset=0 len=8 peer=200 fd=3
5002us 100 syscall_exit name=write ret=8
9ms 200 syscall_enter name=read fd=4
)");
  const Timeline tl = build_timeline(b.trace, b.graph(), nullptr);
  size_t messages = 0;
  for (const TimelineFlow& f : tl.flows) {
    CHECK(f.from_ns <= f.to_ns);
    if (f.kind != "message") continue;
    ++messages;
    CHECK(f.from_ns == 5'001'000);
    CHECK(f.to_ns == 5'001'000);
  }
  CHECK(messages == 1);
}

TEST_CASE("timeline: the diagnosis's path, root cause and hang are marked") {
  const Built b = build(kTimelineRules, kAskAndWait);
  const Graph& g = b.graph();
  const Diagnosis d = diagnose_client(b);
  REQUIRE(!d.root_causes.empty());
  REQUIRE(d.path.size() >= 2);
  const Timeline tl = build_timeline(b.trace, g, &d);

  std::set<uint32_t> path_segments, path_edges;
  for (const PathStep& s : d.path) {
    path_segments.insert(s.segment);
    if (s.edge != kNoIndex) path_edges.insert(s.edge);
  }
  size_t marked = 0;
  for (const TimelineSlice& s : tl.slices) {
    CHECK(s.on_path == (path_segments.count(s.segment) > 0));
    CHECK(s.hang == (s.segment == d.hang.segment));
    marked += s.root_cause;
  }
  CHECK(marked == 1);
  const TimelineSlice* root = slice_at(tl, 200, 1'000'000);
  REQUIRE(root);
  CHECK(root->root_cause);
  size_t path_flows = 0;
  for (const TimelineFlow& f : tl.flows) {
    CHECK(f.on_path == (path_edges.count(f.edge) > 0));
    path_flows += f.on_path;
  }
  CHECK(path_flows == path_edges.size());
}

TEST_CASE("timeline: a command's process tree, and the threads the diagnosis names") {
  // cw-client (100) is the recorded command. Without a diagnosis only its own thread is
  // shown; with one, the server thread it waited for (200) too, not the idle one (201).
  const Built b = build(kTimelineRules, kAskAndWait);
  const Graph& g = b.graph();
  auto tids = [&](const TimelineScope& scope) {
    std::set<Tid> out;
    for (uint32_t s : scope.segments) out.insert(g.segments[s].tid);
    return out;
  };
  CHECK(tids(process_tree_scope(b.trace, g, nullptr, 100)) == std::set<Tid>{100});
  const Diagnosis d = diagnose_client(b);
  CHECK(tids(process_tree_scope(b.trace, g, &d, 100)) == std::set<Tid>{100, 200});
  const Timeline tl = build_timeline(b.trace, g, &d, process_tree_scope(b.trace, g, &d, 100));
  CHECK(tl.tracks.size() == 2);
}

TEST_CASE("timeline: the neighbourhood keeps the path and what touches it") {
  const Built b = build(kTimelineRules, kAskAndWait);
  const Graph& g = b.graph();
  const Diagnosis d = diagnose_client(b);
  const TimelineScope scope = neighbourhood(g, d);
  CHECK_FALSE(scope.all);
  CHECK(std::is_sorted(scope.segments.begin(), scope.segments.end()));
  for (const PathStep& s : d.path)
    CHECK(std::binary_search(scope.segments.begin(), scope.segments.end(), s.segment));
  for (uint32_t s : scope.segments) CHECK(g.segments[s].tid != 201);  // joined to nobody

  const Timeline tl = build_timeline(b.trace, g, &d, scope);
  CHECK(tl.slices.size() == scope.segments.size());
  for (const TimelineTrack& t : tl.tracks) CHECK(t.tid != 201);
  for (const TimelineFlow& f : tl.flows) {
    CHECK(std::binary_search(scope.segments.begin(), scope.segments.end(), g.edges[f.edge].from));
    CHECK(std::binary_search(scope.segments.begin(), scope.segments.end(), g.edges[f.edge].to));
  }
}

}  // namespace
}  // namespace cw::engine
