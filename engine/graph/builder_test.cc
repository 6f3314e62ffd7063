#include "engine/graph/builder.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <memory>

#include "base/varint.h"
#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::build;
using testing::Built;
using testing::cuts;
using testing::edges;
using testing::segments;
using Strings = std::vector<std::string>;

const char* const kWakeupLink =
    "link wakeup { from wakeup to switch_in join from.target == to.tid pick next }\n";
const char* const kStreamLink =
    "link stream { from send to recv join from.object == to.object pick overlap range offset, "
    "len }\n";

const char* const kThreeThreads =
    "process 100 comm=app\n"
    "thread 101 pid=100 comm=a\n"
    "thread 102 pid=100 comm=b\n"
    "thread 103 pid=100 comm=c\n";

const char* const kClientServer =
    "process 10 comm=client1\n"
    "process 20 comm=server\n"
    "process 30 comm=client2\n"
    "thread 11 pid=10 comm=client1\n"
    "thread 21 pid=20 comm=server\n"
    "thread 31 pid=30 comm=client2\n";

TEST_CASE("pick next: every pending cause pairs with the first later effect of its key") {
  auto b = build(std::string(kWakeupLink) + "edge w { link wakeup strength weak }\n",
                 std::string(kThreeThreads) +
                     "1000 101 wakeup target=103\n"
                     "2000 102 wakeup target=103\n"
                     "3000 103 switch_in\n"
                     "4000 103 switch_in\n"
                     "5000 101 wakeup target=102\n");
  CHECK(edges(b, 101, 103) == Strings{"wakeup weak t/w 1000->3000"});
  CHECK(edges(b, 102, 103) == Strings{"wakeup weak t/w 2000->3000"});
  CHECK(edges(b, 101, 102).empty());  // no later switch_in of 102
  CHECK(b.result.stats.candidates == 2);
}

TEST_CASE("pick latest: each effect pairs with the latest earlier cause of its key") {
  auto b = build(
      "link timer { from timer_arm to timer_fire join from.timer == to.timer pick latest }\n"
      "edge t { link timer strength strong }\n",
      std::string(kThreeThreads) +
          "1000 101 timer_arm timer=7\n"
          "2000 101 timer_arm timer=7\n"
          "3000 102 timer_fire timer=7\n"
          "4000 102 timer_fire timer=7\n"
          "5000 102 timer_fire timer=8\n");
  CHECK(edges(b, 101, 102) ==
        Strings{"timer strong t/t 2000->3000", "timer strong t/t 2000->4000"});
}

TEST_CASE("pick overlap: a write read in two pieces and two writes read in one") {
  auto b = build(std::string(kStreamLink) + "edge s { link stream strength strong }\n",
                 std::string(kClientServer) +
                     "1000 11 send object=5 offset=0 len=8\n"
                     "2000 21 recv object=5 offset=0 len=4\n"
                     "3000 21 recv object=5 offset=4 len=4\n"
                     "4000 11 send object=5 offset=8 len=4\n"
                     "5000 11 send object=5 offset=12 len=4\n"
                     "6000 21 recv object=5 offset=8 len=8\n"
                     "7000 21 recv object=6 offset=0 len=8\n");
  CHECK(edges(b, 11, 21) == Strings{"stream strong t/s 1000->2000", "stream strong t/s 1000->3000",
                                    "stream strong t/s 4000->6000",
                                    "stream strong t/s 5000->6000"});
  CHECK(b.result.stats.candidates == 4);
}

TEST_CASE("a link's where and within drop candidates") {
  auto b = build(
      "link wakeup { from wakeup to switch_in join from.target == to.tid pick next\n"
      "  where to.cpu == 1 within 1500ns }\n"
      "edge w { link wakeup strength weak }\n",
      std::string(kThreeThreads) +
          "1000 101 wakeup target=103\n"
          "2000 103 switch_in cpu=1\n"
          "3000 101 wakeup target=103\n"
          "6000 103 switch_in cpu=1\n"
          "7000 101 wakeup target=103\n"
          "8000 103 switch_in cpu=0\n");
  CHECK(edges(b, 101, 103) == Strings{"wakeup weak t/w 1000->2000"});
  CHECK(b.result.stats.candidates == 1);
}

TEST_CASE("split before and after: the cut remembers its rule and its neighbour edge") {
  auto b = build(
      "split wait { at syscall_enter where name == \"read\" cut before neighbour none }\n"
      "split done { at syscall_exit where name == \"write\" cut after neighbour weak }\n",
      std::string(kThreeThreads) +
          "1000 101 switch_in\n"
          "2000 101 syscall_enter name=read\n"
          "3000 101 syscall_exit name=read\n"
          "4000 101 syscall_enter name=write\n"
          "5000 101 syscall_exit name=write\n"
          "6000 101 switch_out\n"
          "7000 101 syscall_enter name=read\n"
          "1000 102 syscall_enter name=read\n"
          "2000 102 syscall_exit name=write\n");
  CHECK(cuts(b, 101) == Strings{"2000 t/wait", "5000 t/done", "7000 t/wait"});
  const Graph& g = b.graph();
  const auto* t = g.thread_segments(101);
  REQUIRE(t);
  const Segment& second = g.segments[t->begin + 1];
  CHECK(second.start_ns == 2000);
  CHECK(second.end_ns == 6000);
  CHECK(b.trace.events[second.last].ts == 5000);
  CHECK(g.segments[t->begin + 2].start_ns == 6000);
  CHECK(edges(b, 101, 101) == Strings{"split weak t/done 5000->6000"});
  // A thread's first event already starts a segment; nothing follows its last one.
  CHECK(segments(b, 102) == 1);
  CHECK(b.result.stats.cuts == 3);
  CHECK(b.result.counts.splits == std::vector<uint64_t>{2, 1});
}

TEST_CASE("peers split: consecutive messages with disjoint peer processes are cut apart") {
  std::string trace = std::string(kClientServer) +
                      "1000 11 send object=1 offset=0 len=4\n"
                      "2000 21 recv object=1 offset=0 len=4\n"
                      "3000 11 send object=1 offset=4 len=4\n"
                      "4000 21 recv object=1 offset=4 len=4\n"
                      "5000 31 send object=2 offset=0 len=4\n"
                      "6000 21 recv object=2 offset=0 len=4\n"
                      "7000 21 send object=3 offset=0 len=4\n"
                      "8000 31 recv object=3 offset=0 len=4\n";
  std::string rules = std::string(kStreamLink) + "edge s { link stream strength strong }\n";
  auto without = build(rules, trace);
  CHECK(segments(without, 21) == 1);
  CHECK(without.result.stats.over_connections == 1);
  CHECK(without.result.stats.segment_over_connections == 1);

  auto b = build(rules + "split p { peers stream neighbour weak }\n", trace);
  CHECK(cuts(b, 21) == Strings{"6000 t/p"});
  CHECK(segments(b, 11) == 1);
  CHECK(segments(b, 31) == 1);
  CHECK(edges(b, 21, 21) == Strings{"split weak t/p 4000->6000"});
  // Each segment now serves one peer, but the weak neighbour edge may be wrong: the two
  // halves are still one request tied to both clients.
  CHECK(b.result.stats.segment_over_connections == 0);
  CHECK(b.result.stats.over_connections == 1);

  auto separate = build(rules + "split p { peers stream neighbour none }\n", trace);
  CHECK(separate.result.stats.over_connections == 0);
}

TEST_CASE("peers split: a cut of the thread's own between the two messages stands for it") {
  const std::string messages = std::string(kClientServer) +
                               "1000 11 send object=1 offset=0 len=4\n"
                               "2000 21 recv object=1 offset=0 len=4\n"
                               "3000 11 send object=1 offset=4 len=4\n"
                               "4000 21 recv object=1 offset=4 len=4\n"
                               "5000 31 send object=2 offset=0 len=4\n";
  const std::string rest =
      "6000 21 recv object=2 offset=0 len=4\n"
      "7000 21 send object=3 offset=0 len=4\n"
      "8000 31 recv object=3 offset=0 len=4\n";
  const std::string rules = std::string(kStreamLink) + "edge s { link stream strength strong }\n" +
                            "split p { peers stream neighbour weak }\n";
  // Between the end of the last message from client1 and the first from client2.
  auto between =
      build(rules + "split own { at syscall_enter where name == \"poll\" neighbour none }\n",
            messages + "5500 21 syscall_enter name=poll\n" + rest);
  CHECK(cuts(between, 21) == Strings{"5500 t/own"});
  // At the first message from client2: one cut, the thread's own.
  auto at =
      build(rules + "split own { at recv where object == 2 neighbour none }\n", messages + rest);
  CHECK(cuts(at, 21) == Strings{"6000 t/own"});
  // Two peers rules cut at the same event: once, by the first.
  auto twice = build(rules + "split q { peers stream neighbour none }\n", messages + rest);
  CHECK(cuts(twice, 21) == Strings{"6000 t/p"});
  CHECK(segments(twice, 21) == 2);
  // Another thread's events are not this thread's cuts: 31 sends and receives one each.
  CHECK(segments(between, 31) == 1);
}

TEST_CASE("batch: each item inside the loop starts a segment; consecutive items are neighbours") {
  auto b =
      build("batch serve { within call where fn == \"serve_loop\" item recv neighbour weak }\n",
            std::string(kClientServer) +
                "1000 21 call_enter fn=serve_loop\n"
                "2000 21 recv object=1 offset=0 len=8\n"
                "3000 21 recv object=2 offset=0 len=8\n"
                "4000 21 call_exit fn=serve_loop\n"
                "5000 21 recv object=1 offset=8 len=8\n"
                "6000 21 call_enter fn=serve_loop\n"
                "6500 21 call_enter fn=handle\n"
                "7000 21 recv object=2 offset=8 len=8\n"
                "7500 21 call_exit fn=handle\n"
                "8000 21 call_exit fn=serve_loop\n"
                "9000 21 call_enter fn=other_loop\n"
                "9500 21 recv object=2 offset=16 len=8\n");
  // Not outside the loop (5000), not in another loop (9500); inside nested calls (7000).
  CHECK(cuts(b, 21) == Strings{"2000 t/serve", "3000 t/serve", "7000 t/serve"});
  // The first item of a loop has no item before it.
  CHECK(edges(b, 21, 21) == Strings{"split weak t/serve 2000->3000"});
  CHECK(b.result.counts.batches == std::vector<uint64_t>{3});
}

TEST_CASE("over-connections drop when a batch rule cuts a two-client server loop") {
  std::string trace = std::string(kClientServer) +
                      "1000 11 send object=1 offset=0 len=8\n"
                      "1100 31 send object=2 offset=0 len=8\n"
                      "2000 21 call_enter fn=serve_loop\n"
                      "3000 21 recv object=1 offset=0 len=8\n"
                      "4000 21 recv object=2 offset=0 len=8\n"
                      "5000 21 call_exit fn=serve_loop\n";
  std::string rules = std::string(kStreamLink) + "edge s { link stream strength strong }\n";
  CHECK(build(rules, trace).result.stats.over_connections == 1);
  auto b =
      build(rules + "batch serve { within call where fn == \"serve_loop\" item recv }\n", trace);
  CHECK(b.result.stats.over_connections == 0);
  CHECK(edges(b, 21, 21).empty());  // neighbour none by default
}

TEST_CASE("over-connections left to count later are the build's own once filled") {
  std::string trace = std::string(kClientServer) +
                      "1000 11 send object=1 offset=0 len=8\n"
                      "1100 31 send object=2 offset=0 len=8\n"
                      "3000 21 recv object=1 offset=0 len=8\n"
                      "4000 21 recv object=2 offset=0 len=8\n";
  const auto b =
      build(std::string(kStreamLink) + "edge s { link stream strength strong }\n", trace);
  REQUIRE(b.result.over_connections_counted);
  REQUIRE(b.result.stats.over_connections == 1);
  BuildOptions later;
  later.count_over_connections = false;
  BuildResult r = build_graph(b.trace, b.rules, later);
  CHECK_FALSE(r.over_connections_counted);
  CHECK(r.stats.over_connections == 0);
  fill_over_connections(r);
  CHECK(r.over_connections_counted);
  CHECK(testing::describe(r) == testing::describe(b.result));
}

TEST_CASE("edge rules: higher priority first, then file order; the first match decides") {
  auto b = build(std::string(kWakeupLink) +
                     "edge fallback { link wakeup strength weak }\n"
                     "edge first { link wakeup where from.tid == 102 strength weak kind first "
                     "priority 1 }\n"
                     "edge second { link wakeup where from.tid == 102 strength strong kind second "
                     "priority 1 }\n"
                     "edge low { link wakeup where from.tid == 101 strength weak kind low "
                     "priority 3 }\n"
                     "edge high { link wakeup where from.tid == 101 strength strong kind high "
                     "priority 5 }\n",
                 std::string(kThreeThreads) +
                     "1000 101 wakeup target=103\n"
                     "2000 103 switch_in\n"
                     "3000 102 wakeup target=103\n"
                     "4000 103 switch_in\n"
                     "5000 103 wakeup target=101\n"
                     "6000 101 switch_in\n");
  CHECK(edges(b, 101, 103) == Strings{"high strong t/high 1000->2000"});
  CHECK(edges(b, 102, 103) == Strings{"first weak t/first 3000->4000"});
  // Without `kind` the edge is named after its link.
  CHECK(edges(b, 103, 101) == Strings{"wakeup weak t/fallback 5000->6000"});
  // RuleSet::edges is in evaluation order: high, low, first, second, fallback.
  CHECK(b.result.counts.edges == std::vector<uint64_t>{1, 0, 1, 0, 1});
}

TEST_CASE("weak edges are pruned or boosted; strong edges are final") {
  auto b = build(std::string(kWakeupLink) +
                     "edge w { link wakeup strength weak }\n"
                     "edge s { link wakeup where from.tid == 104 strength strong priority 1 }\n"
                     "edge irq { link wakeup where from.irq strength prune }\n"
                     "edge shared { link wakeup where shared_symbols(from.stack, to.stack) > 0 "
                     "strength boost }\n",
                 "process 100 comm=app\n"
                 "thread 101 pid=100 comm=a\n"
                 "thread 102 pid=100 comm=b\n"
                 "thread 103 pid=100 comm=c\n"
                 "thread 104 pid=100 comm=d\n"
                 "1000 101 irq_enter irq=3\n"
                 "1100 101 wakeup target=110\n"
                 "1200 101 irq_exit irq=3\n"
                 "1300 110 switch_in\n"
                 "2000 111 syscall_enter name=futex stack=main;other\n"
                 "2100 102 wakeup target=111 stack=main;work\n"
                 "2200 111 switch_in\n"
                 "3000 103 wakeup target=112 stack=x\n"
                 "3100 112 switch_in stack=y\n"
                 "4000 104 irq_enter irq=3\n"
                 "4100 104 wakeup target=113\n"
                 "4200 113 switch_in\n");
  CHECK(edges(b, 101, 110).empty());
  CHECK(edges(b, 102, 111) == Strings{"wakeup boosted t/w 2100->2200 +t/shared"});
  CHECK(edges(b, 103, 112) == Strings{"wakeup weak t/w 3000->3100"});
  CHECK(edges(b, 104, 113) == Strings{"wakeup strong t/s 4100->4200"});
  CHECK(b.result.stats.pruned == 1);
  CHECK(b.result.stats.boosted == 1);
  CHECK(b.result.counts.pruned == std::vector<uint64_t>{0, 0, 1, 0});
  CHECK(b.result.counts.boosted == std::vector<uint64_t>{0, 0, 0, 1});
}

TEST_CASE("a candidate no strong or weak rule classifies makes no edge") {
  auto b = build(std::string(kWakeupLink) +
                     "edge only102 { link wakeup where from.tid == 102 strength strong }\n",
                 std::string(kThreeThreads) +
                     "1000 101 wakeup target=103\n"
                     "2000 103 switch_in\n");
  CHECK(b.graph().edges.empty());
  CHECK(b.result.stats.candidates == 1);
  CHECK(b.result.stats.unclassified == 1);
}

const char* const kFlagTrace =
    "process 100 comm=app\n"
    "thread 101 pid=100 comm=a\n"
    "thread 102 pid=100 comm=b\n"
    "thread 103 pid=100 comm=c\n"
    "thread 104 pid=100 comm=d\n"
    "1000 101 flag_write flag=ready value=1\n"
    "2000 102 flag_read flag=ready value=0\n"
    "3000 102 flag_read flag=ready value=1\n"
    "4000 102 flag_read flag=ready value=1\n"
    "5000 103 flag_read flag=ready value=1\n"
    "6000 101 flag_read flag=ready value=1\n"
    "7000 104 flag_read flag=other value=1\n"
    "8000 101 flag_write addr=0x1000 value=1\n"
    "8100 102 flag_read addr=0x1000 value=1\n"
    "9000 101 flag_write addr=0x1000 value=2\n"
    "9100 103 flag_read addr=0x1000 value=2\n";

TEST_CASE("a declared flag joins a setting write to the first read on each thread that sees it") {
  auto b = build(
      "flag ready { symbol \"ready\" }\n"
      "flag fixed { address 0x1000 set value == 2 strength weak }\n",
      kFlagTrace);
  CHECK(edges(b, 101, 102) == Strings{"flag strong t/ready 1000->3000"});
  CHECK(edges(b, 101, 103) ==
        Strings{"flag strong t/ready 1000->5000", "flag weak t/fixed 9000->9100"});
  CHECK(edges(b, 101, 101).empty());
  CHECK(edges(b, 101, 104).empty());
  CHECK(b.result.stats.flag_edges == 3);
  CHECK(b.result.stats.data_flags_used == 2);
  CHECK(b.result.counts.flags == std::vector<uint64_t>{2, 1});
}

TEST_CASE("without a flag declaration, flag events make no edges") {
  auto b = build("", kFlagTrace);
  CHECK(b.graph().edges.empty());
  CHECK(b.result.stats.flag_edges == 0);
  CHECK(b.result.stats.data_flags_used == 0);
}

TEST_CASE("a Lua predicate classifies edges") {
  auto b =
      build(std::string(kWakeupLink) +
                "lua [[\n"
                "function even(n) return n % 2 == 0 end\n"
                "]]\n"
                "edge even { link wakeup where lua.even(from.tid) strength strong kind even }\n"
                "edge other { link wakeup strength weak priority -1 }\n",
            std::string(kThreeThreads) +
                "1000 101 wakeup target=103\n"
                "2000 102 wakeup target=103\n"
                "3000 103 switch_in\n");
  CHECK(edges(b, 101, 103) == Strings{"wakeup weak t/other 1000->3000"});
  CHECK(edges(b, 102, 103) == Strings{"even strong t/even 2000->3000"});
}

TEST_CASE("an edge rule's cost, constant or from a Lua hook, is the edge's search cost") {
  auto b = build(std::string(kWakeupLink) +
                     "lua [[\n"
                     "function by_waker(tid) return tid - 100 end\n"
                     "]]\n"
                     "edge hooked { link wakeup where from.tid == 102 strength weak cost "
                     "lua.by_waker(from.tid) }\n"
                     "edge fixed { link wakeup where from.tid == 101 strength strong cost 7 }\n"
                     "edge plain { link wakeup strength weak priority -1 }\n",
                 std::string(kThreeThreads) +
                     "1000 101 wakeup target=103\n"
                     "1500 103 switch_in\n"
                     "2000 102 wakeup target=103\n"
                     "2500 103 switch_in\n"
                     "3000 103 wakeup target=101\n"
                     "3500 101 switch_in\n");
  std::vector<int> costs;
  for (const Edge& e : b.graph().edges)
    if (e.rule.kind == RuleKind::Edge) costs.push_back(e.cost);
  CHECK(costs == std::vector<int>{7, 2, Edge::kDefaultCost});
}

TEST_CASE("a cost outside 0..254 is an error at the rule") {
  auto rules = testing::load_rules(std::string(kWakeupLink) +
                                   "edge e { link wakeup strength weak cost 0 - 1 }\n");
  Trace trace = testing::load_trace(std::string(kThreeThreads) +
                                    "1000 101 wakeup target=103\n"
                                    "2000 103 switch_in\n");
  std::string message;
  try {
    build_graph(trace, rules);
  } catch (const DiagnosticError& e) {
    message = e.diagnostic.render();
  }
  CHECK(message.find("edge t/e: cost must be an integer from 0 to 254, got -1") !=
        std::string::npos);
}

TEST_CASE("a trace without events makes an empty graph") {
  auto b = build(std::string(kWakeupLink) + "edge w { link wakeup strength weak }\n",
                 "process 100 comm=app\nthread 101 pid=100 comm=a\n");
  CHECK(b.graph().segments.empty());
  CHECK(b.graph().edges.empty());
}

TEST_CASE("with two threads classifying, the error is the first candidate's") {
  // Three candidates, each with a cost out of range (the waker's tid minus 1000): the
  // first thread classifies the first, the second the others; a single thread would stop
  // at the first, so both must report it.
  auto rules = testing::load_rules(std::string(kWakeupLink) +
                                   "edge e { link wakeup strength weak cost from.tid - 1000 }\n");
  Trace trace = testing::load_trace(std::string(kThreeThreads) +
                                    "1000 101 wakeup target=103\n"
                                    "1500 103 switch_in\n"
                                    "2000 102 wakeup target=103\n"
                                    "2500 103 switch_in\n"
                                    "3000 103 wakeup target=101\n"
                                    "3500 101 switch_in\n");
  for (uint64_t from : {uint64_t{0}, ~uint64_t{0}}) {
    BuildOptions options;
    options.parallel_from = from;
    std::string message;
    try {
      build_graph(trace, rules, options);
    } catch (const DiagnosticError& e) {
      message = e.diagnostic.render();
    }
    CHECK(message.find("cost must be an integer from 0 to 254, got -899") != std::string::npos);
  }
}

TEST_CASE("a failing Lua hook stops the build with its message") {
  auto rules =
      testing::load_rules(std::string(kWakeupLink) +
                          "lua [[\n"
                          "function boom(n) error(\"kaboom \" .. n) end\n"
                          "]]\n"
                          "edge e { link wakeup where lua.boom(from.tid) strength strong }\n");
  Trace trace = testing::load_trace(std::string(kThreeThreads) +
                                    "1000 101 wakeup target=103\n"
                                    "2000 103 switch_in\n");
  std::string message;
  try {
    build_graph(trace, rules);
  } catch (const rules::LuaError& e) {
    message = e.what();
  }
  CHECK(message == "t.cw:4: error: lua hook 'boom' (pack t, rule t/e) failed: kaboom 101");
}

TEST_CASE("progress is reported per phase up to its total") {
  auto rules =
      testing::load_rules(std::string(kWakeupLink) + "edge w { link wakeup strength weak }\n");
  Trace trace = testing::load_trace(std::string(kThreeThreads) +
                                    "1000 101 wakeup target=103\n"
                                    "2000 103 switch_in\n");
  std::vector<std::string> finished;
  BuildOptions options;
  options.progress = [&](std::string_view phase, uint64_t done, uint64_t total) {
    if (done == total) finished.emplace_back(phase);
  };
  build_graph(trace, rules, options);
  CHECK(finished == Strings{"events", "links", "segments", "edges", "graph"});
}

}  // namespace
}  // namespace cw::engine

namespace cw::engine {
namespace {

// Links, edge rules, a flag and a peers split, and the cut rules an edit adds, changes or
// removes (the peers cut at 6000 is hidden when another rule cuts there too).
const char* const kReuseTrace =
    "process 10 comm=client1\n"
    "process 20 comm=server\n"
    "process 30 comm=client2\n"
    "thread 11 pid=10 comm=client1\n"
    "thread 21 pid=20 comm=server\n"
    "thread 31 pid=30 comm=client2\n"
    "1000 11 send object=1 offset=0 len=4\n"
    "1200 21 call_enter fn=serve_loop\n"
    "1500 11 flag_write flag=ready value=1\n"
    "2000 21 recv object=1 offset=0 len=4\n"
    "2500 21 flag_read flag=ready value=1\n"
    "3000 11 send object=1 offset=4 len=4\n"
    "4000 21 recv object=1 offset=4 len=4\n"
    "5000 31 send object=2 offset=0 len=4\n"
    "5500 31 flag_read flag=ready value=1\n"
    "6000 21 recv object=2 offset=0 len=4\n"
    "6500 21 call_exit fn=serve_loop\n"
    "7000 21 send object=3 offset=0 len=4\n"
    "8000 31 recv object=3 offset=0 len=4\n";

std::string reuse_rules(const std::string& cut_rules) {
  return std::string(kStreamLink) +
         "edge s { link stream strength weak where from.object != 3 }\n"
         "edge b { link stream strength boost where from.object == 1 cost 7 }\n"
         "edge t { link stream strength strong }\n"
         "flag ready { symbol \"ready\" }\n"
         "split p { peers stream neighbour weak }\n" +
         cut_rules;
}

// A build's cut rule matches as text (equal texts are equal lists).
std::string describe_matches(const CutMatchSet& m) {
  std::string out;
  for (const CutMatches& c : m.splits) {
    out += c.known ? "split:" : "unknown:";
    for (const SplitMatch& x : c.split_list()) out += fmt::format(" {}@{}", x.event, x.at);
    out += '\n';
  }
  for (const CutMatches& c : m.batches) {
    out += c.known ? "batch:" : "unknown:";
    for (const BatchMatch& x : c.batch_list())
      out += fmt::format(" {}@{}/{}/{}", x.event, x.at, x.loop, x.key);
    out += '\n';
  }
  return out;
}

// The matches a whole build of `b` records; a rebuild that scans its threads in two shares
// records the same.
CutMatchSet recorded_matches(const Built& b) {
  BuildOptions whole;
  whole.record_matches = true;
  whole.parallel_from = ~uint64_t{0};
  CutMatchSet recorded = build_graph(b.trace, b.rules, whole).matches;
  BuildResult taken = b.result;
  BuildOptions shares;
  shares.reuse = &taken;
  shares.record_matches = true;
  shares.parallel_from = 0;
  CHECK(describe_matches(build_graph(b.trace, b.rules, shares).matches) ==
        describe_matches(recorded));
  return recorded;
}

// Matches given to a rebuild: all of `m`'s but those of the rule named `fresh`.
KnownCutMatches known_but(const CutMatchSet& m, const rules::RuleSet& rules,
                          const std::string& fresh) {
  KnownCutMatches known;
  for (size_t s = 0; s < m.splits.size(); ++s)
    known.splits.push_back(rules.splits[s].origin.local == fresh ? nullptr : &m.splits[s]);
  for (size_t b = 0; b < m.batches.size(); ++b)
    known.batches.push_back(rules.batches[b].origin.local == fresh ? nullptr : &m.batches[b]);
  return known;
}

// Each thread's events of a trace, as the diagnosis's thread index lists them.
struct ThreadLists {
  explicit ThreadLists(const Trace& trace) {
    std::map<Tid, std::vector<uint32_t>> by_tid;
    for (uint32_t i = 0; i < trace.events.size(); ++i) by_tid[trace.events[i].tid].push_back(i);
    at.push_back(0);
    for (const auto& [tid, list] : by_tid) {
      tids.push_back(tid);
      events.insert(events.end(), list.begin(), list.end());
      at.push_back(static_cast<uint32_t>(events.size()));
    }
    lists = {tids, events, at};
  }
  std::vector<Tid> tids;
  std::vector<uint32_t> events, at;
  ThreadEventLists lists;
};

// A rebuild of `whole`'s cuts from `prior`'s graph, given `known` matches: equal to the
// whole build with a scan in one and in two shares, with and without each thread's events
// (the segments then made from the reused graph's). Returns whether it replayed.
bool rebuild_equals(const Built& prior, const Built& whole, const KnownCutMatches* known) {
  bool all_replayed = true;
  const ThreadLists lists(whole.trace);
  const EventNames names = EventNames::of(whole.trace);
  for (uint64_t parallel_from : {uint64_t{0}, ~uint64_t{0}})
    for (const ThreadEventLists* thread_events :
         {static_cast<const ThreadEventLists*>(nullptr), &lists.lists}) {
      CAPTURE(parallel_from);
      CAPTURE(thread_events != nullptr);
      BuildResult taken = prior.result;  // the build takes its edges
      BuildOptions options;
      options.reuse = &taken;
      options.parallel_from = parallel_from;
      options.known_matches = known;
      options.record_matches = true;
      options.thread_events = thread_events;
      // A new rule evaluated at every event of its kind, or (with the thread lists, to keep
      // the combinations few) at the events the trace's lists by name select.
      if (thread_events) options.event_names = [&names] { return &names; };
      const BuildResult rebuilt = build_graph(whole.trace, whole.rules, options);
      CHECK(testing::describe(rebuilt) == testing::describe(whole.result));
      // (Not when a cut rule calls a Lua hook: the graph is built whole.)
      CHECK(rebuilt.segments_from_reused ==
            (thread_events != nullptr && !whole.rules.cut_rules_call_lua()));
      // The same cuts: every thread keeps its segments.
      if (thread_events && testing::describe(prior.result) == testing::describe(whole.result))
        CHECK(rebuilt.threads_kept == whole.result.graph.threads.size());
      all_replayed &= rebuilt.cuts_replayed;
    }
  return all_replayed;
}

TEST_CASE("a rebuild of the cuts only, reusing another cut rules' graph, equals a whole build") {
  const std::vector<std::string> edits = {
      "",
      "split r { at recv where object == 2 neighbour none }\n",  // where the peers cut is
      "split r { at recv where object == 1 neighbour weak loop }\n",
      "split r { at send cut after neighbour strong }\n",
      "batch serve { within call where fn == \"serve_loop\" item recv neighbour weak }\n",
      "split r { at recv where object == 2 neighbour none }\n"
      "batch serve { within call where fn == \"serve_loop\" item recv neighbour none }\n",
  };
  for (const std::string& before : edits)
    for (const std::string& after : edits) {
      CAPTURE(before);
      CAPTURE(after);
      const auto prior = build(reuse_rules(before), kReuseTrace);
      const auto whole = build(reuse_rules(after), kReuseTrace);
      CHECK_FALSE(rebuild_equals(prior, whole, nullptr));
      // Every cut rule's matches known: the cuts replayed from them.
      const CutMatchSet matches = recorded_matches(whole);
      const KnownCutMatches known = known_but(matches, whole.rules, "");
      CHECK(rebuild_equals(prior, whole, &known));
    }
  // The edit at the peers cut hides it, and removing the edit shows it again.
  const auto hidden = build(reuse_rules(edits[1]), kReuseTrace);
  CHECK(cuts(hidden, 21) == Strings{"6000 t/r"});
  CHECK(hidden.result.peer_cuts.size() == 1);
}

TEST_CASE(
    "a rebuild keeps the reused graph's edges in their order, wherever its neighbour edges are") {
  // The reused edges are taken in parts on every CPU, each dropping the neighbour edges
  // it holds: with the neighbour edges first, the first part drops all it has and the
  // second's must move up behind what it kept.
  const auto prior = build(reuse_rules(""), kReuseTrace);
  BuildResult moved = prior.result;
  auto& edges = moved.graph.edges;
  std::stable_partition(edges.begin(), edges.end(),
                        [](const Edge& e) { return e.rule.kind == RuleKind::Split; });
  auto rule_edges = [](const std::vector<Edge>& list) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const Edge& e : list)
      if (e.rule.kind == RuleKind::Edge) out.emplace_back(e.from_event, e.to_event);
    return out;
  };
  const auto expected = rule_edges(edges);
  REQUIRE(!expected.empty());
  REQUIRE(edges.front().rule.kind == RuleKind::Split);
  const auto after = build(reuse_rules("split r { at send neighbour weak }\n"), kReuseTrace);
  for (uint64_t parallel_from : {uint64_t{0}, ~uint64_t{0}}) {
    CAPTURE(parallel_from);
    BuildResult taken = moved;
    BuildOptions options;
    options.reuse = &taken;
    options.parallel_from = parallel_from;
    const BuildResult rebuilt = build_graph(after.trace, after.rules, options);
    CHECK(rule_edges(rebuilt.graph.edges) == expected);
  }
}

TEST_CASE("a rebuild of the cuts takes the reused graph's edges") {
  const auto prior = build(reuse_rules(""), kReuseTrace);
  BuildResult marked = prior.result;
  REQUIRE(!marked.graph.edges.empty());
  // A mark only the reused graph has: the rebuild's first edge carries it.
  marked.graph.edges[0].cost = 42;
  const auto after = build(reuse_rules("split r { at send neighbour weak }\n"), kReuseTrace);
  BuildOptions options;
  options.reuse = &marked;
  const BuildResult rebuilt = build_graph(after.trace, after.rules, options);
  REQUIRE(!rebuilt.graph.edges.empty());
  CHECK(rebuilt.graph.edges[0].cost == 42);
  CHECK(after.result.graph.edges[0].cost != 42);

  // Unless a cut rule calls a Lua hook: then the graph is built whole.
  const auto with_lua = build(reuse_rules("lua [[ function any(x) return false end ]]\n"
                                          "split l { at send where lua.any(tid) }\n"),
                              kReuseTrace);
  BuildResult marked_lua = with_lua.result;
  marked_lua.graph.edges[0].cost = 42;
  options.reuse = &marked_lua;
  CHECK(build_graph(with_lua.trace, with_lua.rules, options).graph.edges[0].cost != 42);

  // A graph of another trace is refused, not used.
  const auto other = build(reuse_rules(""), std::string(kClientServer) +
                                                "1000 11 send object=1 offset=0 len=4\n"
                                                "2000 21 recv object=1 offset=0 len=4\n");
  BuildResult taken = prior.result;
  options.reuse = &taken;
  CHECK_THROWS_AS(build_graph(other.trace, other.rules, options), std::invalid_argument);
}

}  // namespace
}  // namespace cw::engine

namespace cw::engine {
namespace {

// A random trace of servers and clients: threads that wait in loop calls, read and write
// messages, block and are woken, with calls that nest a `recv` or `send` inside them.
std::string random_cut_trace(uint32_t seed) {
  testing::Random next(seed);
  const char* const calls[] = {"recvmsg",   "read",  "poll",    "epoll_wait", "futex",
                               "nanosleep", "write", "sendmsg", "wait4"};
  std::string out;
  const uint32_t processes = 2 + static_cast<uint32_t>(next(3));
  std::vector<uint32_t> tids;
  for (uint32_t p = 0; p < processes; ++p) {
    const uint32_t pid = 100 * (p + 1);
    out += fmt::format("process {} comm=p{}\n", pid, p);
    for (uint32_t t = 0; t < 1 + next(3); ++t) {
      out += fmt::format("thread {} pid={} comm=t{}\n", pid + t, pid, t);
      tids.push_back(pid + t);
    }
  }
  uint64_t ts = 1000;
  uint64_t offset = 0;
  for (uint32_t i = 0; i < 600; ++i) {
    const uint32_t tid = tids[next(tids.size())];
    const char* call = calls[next(std::size(calls))];
    const uint64_t fd = 3 + next(3);
    out += fmt::format("{} {} syscall_enter name={} fd={} count={}\n", ts += 10, tid, call, fd,
                       next(2));
    switch (next(4)) {
      case 0:
        out += fmt::format("{} {} switch_out state={}\n", ts += 10, tid, next(3) ? "S" : "R");
        out += fmt::format("{} {} switch_in\n", ts += 10, tid);
        break;
      case 1:
        out += fmt::format("{} {} recv object=1 offset={} len=4 peer=1 fd={}\n", ts += 10, tid,
                           offset, fd);
        break;
      case 2:
        out += fmt::format("{} {} send object=1 offset={} len=4 peer=1 fd={}\n", ts += 10, tid,
                           offset += 4, fd);
        break;
      default: {
        // On whose behalf: none, a thread of the trace, or one it lacks.
        const uint64_t cause = next(3) == 0 ? 0 : next(4) == 0 ? 999 : tids[next(tids.size())];
        out += fmt::format("{} {} wakeup target={} cause={}\n", ts += 10, tid,
                           tids[next(tids.size())], cause);
      }
    }
    out += fmt::format("{} {} syscall_exit name={} ret=0\n", ts += 10, tid, call);
  }
  return out;
}

// The standard packs' kinds of cut, spelled out: a loop wait (`loop`), a wait's entry, a
// blocking read cut at its call's entry (`cut syscall`), an event loop's requests (`batch
// … within loop per fd cut syscall`), disjoint peers.
std::string cut_rules(const std::string& edit,
                      const std::string& wakeup_edge = "edge w { link wakeup strength weak }\n") {
  return std::string(kStreamLink) + kWakeupLink + "edge s { link stream strength strong }\n" +
         wakeup_edge +
         "split loop.wait { at syscall_enter where name in [\"poll\", \"epoll_wait\"] "
         "neighbour weak loop }\n"
         "split wait.entry { at syscall_enter where name in [\"futex\", \"nanosleep\"] "
         "neighbour weak }\n"
         "split data.wait { at switch_out where state != \"R\" and syscall.name in "
         "[\"recvmsg\", \"read\"] cut syscall neighbour weak }\n"
         "batch loop.request { within loop item recv per fd cut syscall neighbour weak }\n"
         "split peers.disjoint { peers stream neighbour weak }\n" +
         edit;
}

// A cut edit: the rule it adds, and whether a rebuild can evaluate that rule alone (it cuts
// at its event and reads only the event's fields).
struct CutEdit {
  std::string text, rule;
  bool alone;
};

const std::vector<CutEdit>& cut_edits() {
  static const std::vector<CutEdit> edits = {
      {"", "", true},
      {"split idle { at syscall_enter where name == \"recvmsg\" neighbour weak loop }\n", "idle",
       true},
      {"split idle { at syscall_enter where name == \"recvmsg\" and fd != 4 neighbour weak loop "
       "}\n",
       "idle", true},
      {"split w4 { at switch_out where state != \"R\" and syscall.name == \"wait4\" cut syscall "
       "neighbour weak }\n",
       "w4", false},
      {"split after { at syscall_exit where name == \"write\" cut after neighbour strong }\n",
       "after", false},
      {"split first { at syscall_enter where name == \"read\" priority -1 neighbour none }\n",
       "first", true},
      {"batch each { within loop item send cut syscall neighbour weak }\n", "each", false},
      // The event's own attributes: its thread, process, time, CPU and kind are the same
      // however it is reached; its stack is not (without one, the open span's stands).
      {"split mine { at syscall_enter where name == \"recvmsg\" and (tid == 101 or pid == 300) "
       "neighbour weak loop }\n",
       "mine", true},
      {"split named { at syscall_enter where thread.comm != \"t1\" and process.comm != \"p0\" "
       "and not thread.kernel and kind == \"syscall_enter\" and cpu >= 0 and ts % 3 == 0 "
       "neighbour weak }\n",
       "named", true},
      {"split stacked { at syscall_enter where stack matches \"*recv*\" neighbour weak }\n",
       "stacked", false},
  };
  return edits;
}

// On random traces of `seeds`, from a graph of the packs with each cut edit to every other:
// a rebuild of the cuts equals a whole build, with every rule's matches known or all but
// the edit's (the rule evaluated alone, or the threads scanned when it cannot be).
// `packs` makes the packs of an edit's text.
void check_every_cut_edit(uint32_t seeds, const std::function<std::string(std::string)>& packs) {
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    const std::string trace = random_cut_trace(seed);
    for (const CutEdit& before : cut_edits()) {
      const auto prior = build(packs(before.text), trace);
      for (const CutEdit& after : cut_edits()) {
        CAPTURE(seed);
        CAPTURE(before.text);
        CAPTURE(after.text);
        const auto whole = build(packs(after.text), trace);
        CHECK_FALSE(rebuild_equals(prior, whole, nullptr));
        const CutMatchSet matches = recorded_matches(whole);
        const KnownCutMatches all = known_but(matches, whole.rules, "");
        CHECK(rebuild_equals(prior, whole, &all));
        const KnownCutMatches but_new = known_but(matches, whole.rules, after.rule);
        CHECK(rebuild_equals(prior, whole, &but_new) == after.alone);
      }
    }
  }
}

TEST_CASE("random traces: a rebuild of the cuts after each cut edit equals a whole build") {
  check_every_cut_edit(6, [](const std::string& edit) { return cut_rules(edit); });
}

TEST_CASE("random traces: edges that leave another thread's segment are rebuilt there too") {
  // `from_thread`: the edge leaves the segment the cause thread was in at the wake-up's
  // time (found by time on the new segments), or the waker's own (through the old one).
  check_every_cut_edit(3, [](const std::string& edit) {
    return cut_rules(edit,
                     "edge w { link wakeup strength weak }\n"
                     "edge c { link wakeup where from.cause != 0 from_thread cause strength strong "
                     "priority 5 }\n");
  });
}

// A hook that keeps state: what it returns depends on every call made before it.
constexpr const char* kCountingHooks =
    "lua [[\n"
    "calls = 0\n"
    "function every_third(x) calls = calls + 1 return calls % 3 ~= 0 end\n"
    "ticks = 0\n"
    "function tick(x) ticks = ticks + 1 return false end\n"
    "function ticked(x) return ticks > 0 end\n"
    "]]\n";

TEST_CASE("Lua hooks called by edge rules: a rebuild of the cuts equals a whole build") {
  // The edge rule's hook counts its calls: the rebuild's edges are the whole build's only
  // if the hook is called in the same order whatever the cut rules are.
  check_every_cut_edit(2, [](const std::string& edit) {
    return cut_rules(edit,
                     "edge w { link wakeup where lua.every_third(from.tid) strength weak }\n") +
           kCountingHooks;
  });
}

// `names`'s lists with the list of (kind, name) holding `events` instead, and `total`
// events in all.
EventNames with_list(const EventNames& names, KindId kind, const std::string& name,
                     const std::vector<uint32_t>& events, uint64_t total) {
  auto bytes = std::make_shared<std::string>();
  std::vector<EventNames::List> lists;
  for (EventNames::List l : names.lists()) {
    const uint64_t at = bytes->size();
    if (l.kind == kind && l.name == name) {
      int64_t last = -1;
      for (uint32_t e : events) {
        put_varint(*bytes, static_cast<uint64_t>(e - last - 1));
        last = e;
      }
      l.count = events.size();
    } else {
      bytes->append(names.bytes().substr(l.at, l.size));
    }
    l.at = at;
    l.size = bytes->size() - at;
    lists.push_back(l);
  }
  const std::string_view view = *bytes;
  return EventNames(std::move(lists), view, std::move(bytes), total);
}

// The events where a build of `trace` with the cut edit `edit` finds its new rule's
// matches: by a whole build, or by a rebuild from `prior` given every other rule's matches
// and `lists`.
std::vector<uint32_t> new_rule_matches(const std::string& trace, const CutEdit& edit,
                                       const EventNames* lists) {
  const auto prior = build(cut_rules(""), trace);
  const auto whole = build(cut_rules(edit.text), trace);
  const CutMatchSet matches = recorded_matches(whole);
  size_t rule = 0;
  while (whole.rules.splits[rule].origin.local != edit.rule) ++rule;
  const CutMatches* found = &matches.splits[rule];
  BuildResult rebuilt;
  if (lists) {
    const KnownCutMatches known = known_but(matches, whole.rules, edit.rule);
    BuildResult taken = prior.result;
    BuildOptions options;
    options.reuse = &taken;
    options.known_matches = &known;
    options.record_matches = true;
    options.event_names = [lists] { return lists; };
    rebuilt = build_graph(whole.trace, whole.rules, options);
    CHECK(rebuilt.cuts_replayed);
    found = &rebuilt.matches.splits[rule];
  }
  std::vector<uint32_t> events;
  for (const SplitMatch& m : found->split_list()) events.push_back(m.event);
  return events;
}

TEST_CASE("a new rule is evaluated at the events the lists by kind and name select") {
  const std::string trace = random_cut_trace(1);
  const auto b = build("", trace);
  const uint64_t n = b.trace.events.size();
  const KindId enter = b.trace.schema.find("syscall_enter");
  const EventNames names = EventNames::of(b.trace);
  const std::vector<uint32_t> recvmsg = names.events(enter, {true, {"recvmsg"}});
  REQUIRE(recvmsg.size() > 2);
  REQUIRE(recvmsg.back() + 1 < n);

  // `name == "recvmsg"` alone: the list is the matches, no event read.
  const CutEdit& alone = cut_edits()[1];
  REQUIRE(alone.text.find("where name == \"recvmsg\" neighbour") != std::string::npos);
  CHECK(new_rule_matches(trace, alone, nullptr) == recvmsg);
  CHECK(new_rule_matches(trace, alone, &names) == recvmsg);
  std::vector<uint32_t> fewer = recvmsg;
  fewer.erase(fewer.begin() + 1);
  const EventNames short_lists = with_list(names, enter, "recvmsg", fewer, n - 1);
  CHECK(new_rule_matches(trace, alone, &short_lists) == fewer);

  // `name == "recvmsg" and fd != 4`: evaluated at the listed events alone.
  const CutEdit& narrowed = cut_edits()[2];
  REQUIRE(narrowed.text.find("and fd != 4") != std::string::npos);
  const std::vector<uint32_t> expected = new_rule_matches(trace, narrowed, nullptr);
  REQUIRE(expected.size() > 1);
  CHECK(expected.size() < recvmsg.size());
  CHECK(new_rule_matches(trace, narrowed, &names) == expected);
  std::vector<uint32_t> without = recvmsg;
  without.erase(std::find(without.begin(), without.end(), expected[0]));
  std::vector<uint32_t> expected_without(expected.begin() + 1, expected.end());
  const EventNames lacking = with_list(names, enter, "recvmsg", without, n - 1);
  CHECK(new_rule_matches(trace, narrowed, &lacking) == expected_without);
  // Lists that name an event of another kind (another trace's, or damaged), or of another
  // name: the rule is evaluated at every event of its kind.
  std::vector<uint32_t> wrong = recvmsg;
  wrong[1] = recvmsg[1] + 1;  // the call's next event, never its entry
  REQUIRE(b.trace.events[wrong[1]].kind != enter);
  const EventNames wrong_kind = with_list(names, enter, "recvmsg", wrong, n);
  CHECK(new_rule_matches(trace, narrowed, &wrong_kind) == expected);
  std::vector<uint32_t> renamed = recvmsg;
  renamed[1] = names.events(enter, {true, {"read"}}).at(0);
  std::sort(renamed.begin(), renamed.end());
  const EventNames wrong_name = with_list(names, enter, "recvmsg", renamed, n);
  CHECK(new_rule_matches(trace, narrowed, &wrong_name) == expected);
}

TEST_CASE("a new rule with a test that may fail before its name test fails as a whole build") {
  // 100 / (ts - T) fails at the one event at T, a `read` entry: so a whole build fails,
  // and a rebuild that evaluated the rule at the recvmsg entries alone would not. (Two
  // guards: name_selector takes no name test after a conjunct that may fail, and a
  // `where` whose division may fail is walked as a tree, which no rebuild evaluates alone.)
  const std::string trace = random_cut_trace(1);
  const Trace t = testing::load_trace(trace);
  const KindId enter = t.schema.find("syscall_enter");
  const EventNames names = EventNames::of(t);
  const uint32_t read = names.events(enter, {true, {"read"}}).at(0);
  const std::string edit = fmt::format(
      "split f {{ at syscall_enter where 100 / (ts - {}) > 1 and name == \"recvmsg\" "
      "neighbour weak }}\n",
      t.events[read].ts);
  const rules::RuleSet rules = testing::load_rules(cut_rules(edit));
  CHECK_THROWS_AS(build_graph(t, rules), DiagnosticError);
  const auto prior = build(cut_rules(""), trace);
  const CutMatchSet matches = recorded_matches(prior);
  KnownCutMatches known;
  for (const rules::SplitRule& r : rules.splits) {
    const CutMatches* m = nullptr;
    for (size_t s = 0; s < prior.rules.splits.size(); ++s)
      if (prior.rules.splits[s].origin.local == r.origin.local) m = &matches.splits[s];
    known.splits.push_back(m);
  }
  for (const CutMatches& b : matches.batches) known.batches.push_back(&b);
  BuildResult taken = prior.result;
  BuildOptions options;
  options.reuse = &taken;
  options.known_matches = &known;
  options.event_names = [&names] { return &names; };
  CHECK_THROWS_AS(build_graph(t, rules, options), DiagnosticError);
}

TEST_CASE("matches that place a cut on another thread are refused, not replayed") {
  const std::string trace = random_cut_trace(1);
  const auto prior = build(cut_rules(""), trace);
  const auto whole = build(cut_rules(""), trace);
  CutMatchSet matches = recorded_matches(whole);
  // data.wait cuts at its call's entry, an event of the blocked thread's before the match.
  size_t rule = 0;
  while (whole.rules.splits[rule].origin.local != "data.wait") ++rule;
  std::vector<SplitMatch> list = matches.splits[rule].split_list();
  REQUIRE(!list.empty());
  const Tid own = whole.trace.events[list[0].event].tid;
  uint32_t other = 0;
  while (whole.trace.events[other].tid == own) ++other;
  for (const bool foreign : {false, true}) {
    CAPTURE(foreign);
    std::vector<SplitMatch> changed = list;
    if (foreign) changed[0].at = other;
    matches.splits[rule] = CutMatches::of(changed);
    const KnownCutMatches known = known_but(matches, whole.rules, "");
    BuildResult taken = prior.result;
    BuildOptions options;
    options.reuse = &taken;
    options.known_matches = &known;
    if (foreign)
      CHECK_THROWS_AS(build_graph(whole.trace, whole.rules, options), std::invalid_argument);
    else
      CHECK(build_graph(whole.trace, whole.rules, options).cuts_replayed);
  }
}

TEST_CASE("a cut rule that calls a Lua hook: the graph is built whole, no matches kept") {
  // The edge rule's hook sees whether the cut rule's hook ran before it.
  const std::string edge = "edge w { link wakeup where lua.ticked(from.tid) strength strong }\n";
  const std::string trace = random_cut_trace(1);
  const auto prior = build(cut_rules("", edge) + kCountingHooks, trace);
  const auto whole =
      build(cut_rules("split t { at syscall_enter where lua.tick(tid) neighbour none }\n", edge) +
                kCountingHooks,
            trace);
  // The cut rule's calls changed the edges: a rebuild that took the prior's would differ.
  REQUIRE(prior.result.graph.edges.size() != whole.result.graph.edges.size());
  CHECK_FALSE(rebuild_equals(prior, whole, nullptr));
  BuildOptions record;
  record.record_matches = true;
  const CutMatchSet none = build_graph(whole.trace, whole.rules, record).matches;
  CHECK(none.splits.empty());
  CHECK(none.batches.empty());
}

}  // namespace
}  // namespace cw::engine
