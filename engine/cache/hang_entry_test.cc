// The hang entries: keyed by their request, gone with their graph, and a miss when they
// name segments, events or strings the graph and trace do not have.
#include <doctest/doctest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"
#include "engine/diagnosis/diagnose.h"

using namespace cw;
using namespace cw::engine;
using namespace cw::cache::testing;

TEST_CASE(
    "a hang entry: its request is part of its key, it decodes whole, it goes with its graph") {
  auto b = sample();
  TempDir dir;
  const cache::Key graph{9, 1, 2, 3};
  SymptomRequest automatic;
  SymptomRequest at = automatic;
  at.mode = SymptomRequest::Mode::ThreadAt;
  at.tid = 101;
  at.at_ns = 4000;
  SymptomRequest shorter = automatic;
  shorter.min_hang_ns = 1;
  SymptomRequest named = automatic;
  named.thread_name = "a";
  const std::vector<SymptomRequest> requests = {automatic, at, shorter, named};
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t j = i + 1; j < requests.size(); ++j)
      CHECK_FALSE(cache::hang_key(graph, requests[i]) == cache::hang_key(graph, requests[j]));

  FoundHang found;
  Hang h;
  h.tid = 101;
  h.pid = 100;
  h.start_ns = 1000;
  h.end_ns = 5000;
  h.kind = HangKind::RepeatedYield;
  h.segment = 1;
  h.first_segment = 0;
  h.last_segment = 1;
  h.chosen_by = "auto: the longest";
  h.profile.blocked_ns = 77;
  h.profile.longest_block_call = 3;
  h.profile.by_name = {{4, 2}, {1, 1}};
  found.hang = h;
  // The candidate threads' ranks ride along: one with a stretch, one without.
  ThreadRank with;
  with.tid = 101;
  with.segments = 3;
  with.cuts = 0xfeedface;
  with.has_stretch = true;
  with.candidate.hang = h;
  with.candidate.score_ns = 4000;
  with.candidate.by_design = "a timed sleep";
  with.candidate.woken_by = 7;
  ThreadRank without;
  without.tid = 102;
  without.segments = 1;
  found.ranks = {with, without};
  REQUIRE(cache::save_hang(dir.f, graph, automatic, found));
  auto back = cache::load_hang(dir.f, graph, automatic, b.trace, b.graph());
  REQUIRE(back);
  REQUIRE(back->hang);
  CHECK(cache::encode_found_hang(*back) == cache::encode_found_hang(found));
  REQUIRE(back->ranks.size() == 2);
  CHECK(back->ranks[0].candidate.by_design == "a timed sleep");
  CHECK_FALSE(back->ranks[1].has_stretch);
  // For another graph of the same edges only the ranks are read: its hang's segments are
  // not that graph's to check.
  auto ranks = cache::load_thread_ranks(dir.f, graph, automatic, b.trace);
  REQUIRE(ranks);
  CHECK(ranks->size() == 2);
  CHECK(ranks->at(0).cuts == 0xfeedface);
  CHECK(back->hang->chosen_by == "auto: the longest");
  CHECK(back->hang->profile.by_name.size() == 2);
  CHECK_FALSE(cache::load_hang(dir.f, graph, at, b.trace, b.graph()));  // another request: no entry
  FoundHang none;
  none.why = "nothing longer than 500 ms";
  none.no_hang = true;
  REQUIRE(cache::save_hang(dir.f, graph, shorter, none));
  back = cache::load_hang(dir.f, graph, shorter, b.trace, b.graph());
  REQUIRE(back);
  CHECK_FALSE(back->hang);
  CHECK(back->no_hang);
  CHECK(back->why == none.why);
  CHECK_THROWS_AS(
      cache::decode_found_hang(cache::encode_found_hang(found) + "x", b.trace, b.graph()),
      cache::CorruptEntry);

  // Its graph evicted, the hang entries go too.
  REQUIRE(cache::save_graph(dir.f, graph, b.result));
  usleep(5000);
  for (uint64_t i = 0; i < cache::kGraphEntries; ++i) {
    REQUIRE(cache::save_graph(dir.f, cache::Key{200 + i, 0, 0, 0}, b.result));
    usleep(5000);
  }
  CHECK_FALSE(cache::load_graph(dir.f, graph, b.trace, b.rules));
  CHECK_FALSE(cache::load_hang(dir.f, graph, automatic, b.trace, b.graph()));
  CHECK_FALSE(cache::load_hang(dir.f, graph, shorter, b.trace, b.graph()));
}

TEST_CASE("a hang entry whose segment is out of range is a miss, not a crash of the diagnosis") {
  auto b = sample();
  TempDir dir;
  const cache::Key graph{9, 1, 2, 3};
  SymptomRequest automatic;
  FoundHang found;
  Hang h;
  h.tid = 101;
  h.pid = 100;
  h.start_ns = 1000;
  h.end_ns = 5000;
  h.kind = HangKind::LongWait;
  h.segment = 0x7fffffff;  // far past the graph's segments
  h.first_segment = 0;
  h.last_segment = 1;
  h.chosen_by = "auto: crafted";
  h.profile.longest_block_ns = 1000;
  h.profile.longest_block_start = 2000;
  found.hang = h;
  // Written through the public API: its checksum holds.
  REQUIRE(cache::save_hang(dir.f, graph, automatic, found));
  std::string why;
  auto back = cache::load_hang(dir.f, graph, automatic, b.trace, b.graph(), &why);
  if (back) {
    // What the command line does with a hang from the cache: diagnose from it.
    DiagnoseOptions options;
    options.symptom = automatic;
    options.known_hang = &*back;
    (void)diagnose(b.trace, b.result, b.rules, options);
  }
  CHECK_FALSE(back);
  CHECK(why.find("segment") != std::string::npos);
}

TEST_CASE("a hang entry naming events, strings or segments the trace and graph lack is a miss") {
  auto b = sample();
  FoundHang found;
  Hang h;
  h.tid = 101;
  h.pid = 100;
  h.kind = HangKind::LongWait;
  h.segment = 1;
  h.first_segment = 0;
  h.last_segment = 1;
  h.profile.longest_block_call = 3;
  h.profile.longest_block_exit = kNoIndex;
  h.profile.by_name = {{4, 1}};
  found.hang = h;
  auto decode = [&](const FoundHang& f) {
    return cache::decode_found_hang(cache::encode_found_hang(f), b.trace, b.graph());
  };
  CHECK_NOTHROW(decode(found));
  auto bad = [&](auto change) {
    FoundHang f = found;
    change(*f.hang);
    CHECK_THROWS_AS(decode(f), cache::CorruptEntry);
  };
  bad([](Hang& x) { x.first_segment = 2; });  // after its hang segment
  bad([](Hang& x) { x.last_segment = kNoIndex; });
  bad([](Hang& x) { x.segment = x.last_segment = 2; });  // thread 102's segment
  bad([&](Hang& x) {
    x.profile.longest_block_call = static_cast<uint32_t>(b.trace.events.size());
  });
  bad([](Hang& x) { x.profile.longest_block_exit = 0x7fffffff; });
  bad([&](Hang& x) {
    x.profile.by_name.push_back({static_cast<StrId>(b.trace.strings.size()), 1});
  });
  // A rank's candidate is checked against the trace too, and ranks come in thread order.
  auto bad_rank = [&](auto change) {
    FoundHang f = found;
    ThreadRank r;
    r.tid = 101;
    r.segments = 2;
    r.has_stretch = true;
    r.candidate.hang = h;
    f.ranks = {r};
    CHECK_NOTHROW(decode(f));
    change(f.ranks);
    CHECK_THROWS_AS(decode(f), cache::CorruptEntry);
  };
  bad_rank([&](std::vector<ThreadRank>& r) {
    r[0].candidate.hang.profile.longest_block_call = static_cast<uint32_t>(b.trace.events.size());
  });
  bad_rank([](std::vector<ThreadRank>& r) { r.push_back(r[0]); });  // the same thread twice
}
