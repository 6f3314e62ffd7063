// The graph entry: decoded equal to what was encoded, evicted least recently used first,
// and a miss when an index it holds leaves its table.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/cache/cache.h"
#include "engine/cache/test_support.h"

namespace fs = std::filesystem;
using namespace cw;
using namespace cw::engine;
using namespace cw::cache::testing;

namespace {

void check_equal(const BuildResult& a, const BuildResult& b) {
  REQUIRE(a.graph.segments.size() == b.graph.segments.size());
  for (size_t i = 0; i < a.graph.segments.size(); ++i) {
    const Segment &x = a.graph.segments[i], &y = b.graph.segments[i];
    CHECK(x.tid == y.tid);
    CHECK(x.pid == y.pid);
    CHECK(x.first == y.first);
    CHECK(x.last == y.last);
    CHECK(x.start_ns == y.start_ns);
    CHECK(x.end_ns == y.end_ns);
    CHECK(x.cut_rule == y.cut_rule);
  }
  REQUIRE(a.graph.edges.size() == b.graph.edges.size());
  for (size_t i = 0; i < a.graph.edges.size(); ++i) {
    const Edge &x = a.graph.edges[i], &y = b.graph.edges[i];
    CHECK(x.from == y.from);
    CHECK(x.to == y.to);
    CHECK(x.from_event == y.from_event);
    CHECK(x.to_event == y.to_event);
    CHECK(x.rule == y.rule);
    CHECK(x.boost_rule == y.boost_rule);
    CHECK(x.link == y.link);
    CHECK(x.kind == y.kind);
    CHECK(x.strength == y.strength);
    CHECK(x.cost == y.cost);
  }
  CHECK(a.graph.kinds == b.graph.kinds);
  const RuleNames &n = a.graph.rule_names, &m = b.graph.rule_names;
  for (const dsl::RuleKindInfo& kind : dsl::kRuleKinds) {
    CAPTURE(kind.keyword);
    CHECK(n.of(kind.kind) == m.of(kind.kind));
  }
  CHECK(n.split_cuts_after == m.split_cuts_after);
  CHECK(n.split_loops == m.split_loops);
  CHECK(n.edge_strengths == m.edge_strengths);
  CHECK(n.edge_ends_polling == m.edge_ends_polling);
  CHECK(n.edge_requests == m.edge_requests);
  REQUIRE(a.graph.threads.size() == b.graph.threads.size());
  for (size_t i = 0; i < a.graph.threads.size(); ++i) {
    CHECK(a.graph.threads[i].tid == b.graph.threads[i].tid);
    CHECK(a.graph.threads[i].begin == b.graph.threads[i].begin);
    CHECK(a.graph.threads[i].end == b.graph.threads[i].end);
  }
  CHECK(std::memcmp(&a.stats, &b.stats, sizeof a.stats) == 0);
  CHECK(a.counts.splits == b.counts.splits);
  CHECK(a.counts.batches == b.counts.batches);
  CHECK(a.counts.edges == b.counts.edges);
  CHECK(a.counts.pruned == b.counts.pruned);
  CHECK(a.counts.boosted == b.counts.boosted);
  CHECK(a.counts.flags == b.counts.flags);
  // The csr answers the same adjacency.
  CHECK(num_vertices(a.graph.csr) == num_vertices(b.graph.csr));
  CHECK(num_edges(a.graph.csr) == num_edges(b.graph.csr));
  CHECK(a.graph.csr.m_forward.m_rowstart == b.graph.csr.m_forward.m_rowstart);
  CHECK(a.graph.csr.m_forward.m_column == b.graph.csr.m_forward.m_column);
  CHECK(a.graph.csr.m_backward.m_column == b.graph.csr.m_backward.m_column);
}

}  // namespace

TEST_CASE("a graph entry decodes to the graph it was made from") {
  auto b = sample();
  REQUIRE(b.graph().edges.size() >= 2);
  REQUIRE(b.graph().segments.size() >= 3);
  check_equal(b.result, cache::decode_graph(cache::encode_graph(b.result), b.trace, b.rules));

  TempDir dir;
  REQUIRE(cache::save_graph(dir.f, kKey, b.result));
  std::string why = "unset";
  auto loaded = cache::load_graph(dir.f, kKey, b.trace, b.rules, &why);
  REQUIRE(loaded);
  check_equal(b.result, *loaded);
  CHECK(loaded->over_connections_counted);

  // A graph whose over-connections were left to count later is not saved with zeros.
  engine::BuildOptions later;
  later.count_over_connections = false;
  const engine::BuildResult uncounted = engine::build_graph(b.trace, b.rules, later);
  CHECK_THROWS_AS(cache::save_graph(dir.f, kKey, uncounted), std::logic_error);
}

TEST_CASE("a graph's neighbour edges are kept as a byte per segment and made again in place") {
  auto b = sample();
  const std::vector<Edge>& edges = b.graph().edges;
  auto is_neighbour = [](const Edge& e) { return e.rule.kind == RuleKind::Split; };
  const auto neighbours = std::count_if(edges.begin(), edges.end(), is_neighbour);
  REQUIRE(neighbours > 0);
  const std::string payload = cache::encode_graph(b.result);
  // Smaller by the edges but for the count and one byte per segment.
  BuildResult unusual = b.result;
  auto first = std::find_if(unusual.graph.edges.begin(), unusual.graph.edges.end(), is_neighbour);
  first->to_event = first->from_event;  // no longer the edge a load would make
  const std::string whole = cache::encode_graph(unusual);
  CHECK(whole.size() - payload.size() ==
        static_cast<size_t>(neighbours) * sizeof(Edge) - b.graph().segments.size());
  // Made again in their place; an unusual run is kept as it is.
  check_equal(b.result, cache::decode_graph(payload, b.trace, b.rules));
  check_equal(unusual, cache::decode_graph(whole, b.trace, b.rules));
  // For a rebuild of the cuts: the other edges, in order.
  const BuildResult reuse = cache::decode_graph(payload, b.trace, b.rules, true);
  REQUIRE(reuse.graph.edges.size() == edges.size() - static_cast<size_t>(neighbours));
  for (size_t i = 0, j = 0; i < edges.size(); ++i)
    if (!is_neighbour(edges[i])) CHECK(reuse.graph.edges[j++].to_event == edges[i].to_event);
  // Bytes that name no edge a graph can have (as many edges as before: one byte moved).
  const size_t at = 8 + b.graph().segments.size() * sizeof(Segment) + 8;  // segment 0's byte
  auto damaged = [&](size_t segment, char byte) {
    std::string p = payload;
    for (size_t s = 0; s < b.graph().segments.size(); ++s)
      if (p[at + s] != 0) {
        p[at + s] = 0;
        break;
      }
    p[at + segment] = byte;
    return p;
  };
  CHECK_THROWS_WITH_AS(cache::decode_graph(damaged(0, 1), b.trace, b.rules),
                       "a neighbour edge across threads", cache::CorruptEntry);
  CHECK_THROWS_WITH_AS(cache::decode_graph(damaged(1, 3), b.trace, b.rules),
                       "a neighbour edge of unknown strength", cache::CorruptEntry);
  const uint32_t second = b.graph().threads[1].begin;  // another thread's first segment
  CHECK_THROWS_WITH_AS(cache::decode_graph(damaged(second, 1), b.trace, b.rules),
                       "a neighbour edge across threads", cache::CorruptEntry);
}

TEST_CASE("neighbour edges are made again in the builder's order: threads by first event") {
  // Thread 102 begins first: its neighbour edges come before 101's, whose segments come
  // first in the graph (its threads are in tid order).
  auto b = testing::build(
      "split cut { at syscall_enter where name == \"read\" cut before neighbour strong }\n",
      "process 100 comm=app\nthread 101 pid=100 comm=a\nthread 102 pid=100 comm=b\n"
      "500 102 switch_in\n1000 101 switch_in\n2000 102 syscall_enter name=read\n"
      "3000 101 syscall_enter name=read\n4000 102 syscall_enter name=read\n"
      "5000 101 syscall_enter name=read\n");
  const std::vector<Edge>& edges = b.graph().edges;
  REQUIRE(edges.size() == 4);
  REQUIRE(edges.front().to > edges.back().to);
  const std::string payload = cache::encode_graph(b.result);
  BuildResult unusual = b.result;
  unusual.graph.edges[0].to_event = unusual.graph.edges[0].from_event;
  CHECK(cache::encode_graph(unusual).size() - payload.size() ==  // no edge kept as it is
        4 * sizeof(Edge) - b.graph().segments.size());
  check_equal(b.result, cache::decode_graph(payload, b.trace, b.rules));
}

TEST_CASE("graph entries beyond the limit are evicted least recently used first") {
  auto b = sample();
  TempDir dir;
  std::vector<cache::Key> keys;
  for (uint64_t i = 0; i < cache::kGraphEntries; ++i) {
    keys.push_back(cache::Key{i, 0, 0, 0});
    REQUIRE(cache::save_graph(dir.f, keys.back(), b.result));
    usleep(5000);  // distinct modification times
  }
  // The oldest is used again: the second oldest goes when one more is saved.
  REQUIRE(cache::load_graph(dir.f, keys[0], b.trace, b.rules));
  usleep(5000);
  REQUIRE(cache::save_graph(dir.f, cache::Key{100, 0, 0, 0}, b.result));
  CHECK(cache::load_graph(dir.f, keys[0], b.trace, b.rules));
  CHECK_FALSE(cache::load_graph(dir.f, keys[1], b.trace, b.rules));
  for (size_t i = 2; i < keys.size(); ++i)
    CHECK(cache::load_graph(dir.f, keys[i], b.trace, b.rules));
  size_t files = 0;
  for (auto& e : fs::directory_iterator(dir.path)) files += e.path().extension() == ".cwg";
  CHECK(files == cache::kGraphEntries);

  // A killed run's temporary file goes after a day, a younger one stays.
  const std::string old_tmp = dir.path + "/" + cache::graph_entry_name(keys[0]) + ".tmp-1-1",
                    new_tmp = dir.path + "/" + cache::graph_entry_name(keys[2]) + ".tmp-2-2";
  write_all(old_tmp, "x");
  write_all(new_tmp, "x");
  fs::last_write_time(old_tmp, fs::file_time_type::clock::now() - std::chrono::hours(25));
  REQUIRE(cache::save_graph(dir.f, cache::Key{101, 0, 0, 0}, b.result));
  CHECK_FALSE(fs::exists(old_tmp));
  CHECK(fs::exists(new_tmp));
}

TEST_CASE("a graph entry whose indexes leave their tables is a miss, checksum or not") {
  auto b = sample();
  const BuildResult& good = b.result;
  REQUIRE(good.graph.edges.size() >= 2);
  const auto events = static_cast<uint32_t>(b.trace.events.size());
  auto decode = [&](const BuildResult& r, bool for_reuse = false) {
    return cache::decode_graph(cache::encode_graph(r), b.trace, b.rules, for_reuse);
  };
  CHECK_NOTHROW(decode(good));
  CHECK_NOTHROW(decode(good, true));
  auto bad = [&](const char* what, auto change) {
    INFO(what);
    BuildResult r = good;
    change(r);
    CHECK_THROWS_AS(decode(r), cache::CorruptEntry);
  };
  bad("segment past the events", [&](BuildResult& r) { r.graph.segments[0].last = events; });
  bad("segment ends before it starts", [&](BuildResult& r) {
    std::swap(r.graph.segments[0].first, r.graph.segments[0].last);
    r.graph.segments[0].first += 1;
  });
  bad("segment of another thread's events", [&](BuildResult& r) { r.graph.segments[0].tid = 102; });
  bad("segment cut by no rule", [&](BuildResult& r) {
    r.graph.segments[1].cut_rule = {RuleKind::Split, 7};
  });
  bad("segment cut by a rule kind that does not exist",
      [&](BuildResult& r) { r.graph.segments[1].cut_rule.kind = static_cast<RuleKind>(9); });
  bad("edge past the segments", [&](BuildResult& r) {
    r.graph.edges[0].to = static_cast<uint32_t>(r.graph.segments.size());
  });
  bad("edge evidence past the events",
      [&](BuildResult& r) { r.graph.edges[0].from_event = events; });
  bad("edge of no rule", [&](BuildResult& r) { r.graph.edges[0].rule.index = 1000; });
  bad("edge of no link", [&](BuildResult& r) { r.graph.edges[0].link = 1000; });
  bad("edge boosted by no rule", [&](BuildResult& r) { r.graph.edges[0].boost_rule = 1000; });
  bad("edge of no strength",
      [&](BuildResult& r) { r.graph.edges[0].strength = static_cast<Strength>(3); });
  bad("thread table past the segments", [&](BuildResult& r) {
    r.graph.threads.back().end = static_cast<uint32_t>(r.graph.segments.size() + 1);
  });
  bad("a segment in no thread's run", [&](BuildResult& r) { r.graph.threads.back().end -= 1; });
  bad("a segment in two threads' runs",
      [&](BuildResult& r) { r.graph.threads[1].begin = r.graph.threads[0].begin; });
  bad("thread table out of order",
      [&](BuildResult& r) { std::swap(r.graph.threads[0], r.graph.threads[1]); });
  bad("rule counts shorter than the rules", [&](BuildResult& r) { r.counts.edges.clear(); });
  bad("rule tables that disagree", [&](BuildResult& r) { r.graph.rule_names.split_loops.clear(); });
  bad("a rule strength that does not exist", [&](BuildResult& r) {
    r.graph.rule_names.edge_strengths[0] = static_cast<rules::Strength>(9);
  });
  bad("peers cut past the events", [&](BuildResult& r) {
    r.peer_cuts.push_back({0, events, 0, rules::Neighbour::None});
  });
  bad("more flag edges than edges",
      [&](BuildResult& r) { r.stats.flag_edges = uint64_t{1} << 60; });
  // The graph of other packs (more edge rules than these): its counts do not fit them.
  auto other = testing::build(
      "link wakeup { from wakeup to switch_in join from.target == to.tid pick next }\n"
      "edge w { link wakeup strength strong }\n"
      "edge v { link wakeup strength weak where from.target == 1 }\n"
      "split cut { at syscall_enter where name == \"read\" cut before neighbour weak }\n",
      "process 100 comm=app\nthread 101 pid=100 comm=a\n1000 101 syscall_enter name=read\n");
  CHECK_THROWS_AS(decode(other.result), cache::CorruptEntry);
  // Through the cache: the entry is written with a valid checksum, and still a miss.
  TempDir dir;
  BuildResult crafted = good;
  crafted.graph.edges[1].to_event = 0x7fffffff;
  REQUIRE(cache::save_graph(dir.f, kKey, crafted));
  std::string why;
  CHECK_FALSE(cache::load_graph(dir.f, kKey, b.trace, b.rules, &why));
  CHECK(why == "an edge names events the trace does not have");
}
