#include "engine/export/graph_report.h"

#include <doctest/doctest.h>

#include <sstream>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

const char* const kRules =
    "link wakeup { from wakeup to switch_in join from.target == to.tid }\n"
    "edge w { link wakeup strength weak }\n"
    "edge s { link wakeup where from.tid == 102 strength strong kind futex priority 1 }\n"
    "edge p { link wakeup where from.irq strength prune }\n"
    "edge b { link wakeup where to.cpu == 1 strength boost }\n"
    "split wait { at syscall_enter cut before }\n"
    "flag ready { symbol \"ready\" }\n";

const char* const kTrace =
    "process 100 comm=app\n"
    "process 200 comm=other\n"
    "thread 101 pid=100 comm=main\n"
    "thread 102 pid=200 comm=helper\n"
    "lost cpu=0 count=5 at=1s\n"
    "1000 101 switch_in\n"
    "2000 101 syscall_enter name=futex\n"
    "3000 102 wakeup target=101\n"
    "4000 101 switch_in cpu=1\n"
    "5000 101 wakeup target=102\n"
    "6000 102 switch_in cpu=1\n"
    "7000 101 flag_write flag=ready value=1\n"
    "8000 102 flag_read flag=ready value=1\n";

TEST_CASE("the recorder's notes in the trace are listed by graph --json and the summary") {
  auto b = testing::build(kRules, std::string(kTrace) +
                                      "9000 101 marker text=\"causeway: note: flags: probes\"\n"
                                      "9500 101 marker text=\"checkpoint\"\n");
  CHECK(graph_json(b.trace, b.result)["trace"]["notes"] == nlohmann::json{"flags: probes"});
  CHECK(text_summary(b.trace, b.result).find("note: recording: flags: probes\n") !=
        std::string::npos);
}

TEST_CASE("graph --json has exactly the documented keys and counts") {
  auto b = testing::build(kRules, kTrace);
  nlohmann::json j = graph_json(b.trace, b.result);
  nlohmann::json expected = {
      {"trace",
       {{"events", 8},
        {"processes", 2},
        {"threads", 2},
        {"lost_events", 5},
        {"lost_per_cpu", {{"0", 5}}},
        {"losses",
         {{"kernel_buffer", 5},
          {"hook_log", 0},
          {"switches_unreported", 0},
          {"maps", 0},
          {"watchpoints_silent", 0}}},
        {"notes", nlohmann::json::array()}}},
      {"graph",
       {{"vertices", 3},
        {"edges", 4},
        {"edges_by_strength", {{"strong", 2}, {"weak", 1}, {"boosted", 1}}},
        {"edges_by_kind",
         {{"futex", {{"strong", 1}, {"weak", 0}, {"boosted", 0}}},
          {"wakeup", {{"strong", 0}, {"weak", 0}, {"boosted", 1}}},
          {"split", {{"strong", 0}, {"weak", 1}, {"boosted", 0}}},
          {"flag", {{"strong", 1}, {"weak", 0}, {"boosted", 0}}}}}}},
      {"rules",
       {{"splits", {{"t/wait", 1}}},
        {"edges", {{"t/s", 1}, {"t/w", 1}}},
        {"pruned", {{"t/p", 0}}},
        {"boosted", {{"t/b", 1}}},
        {"flags", {{"t/ready", 1}}}}},
      {"stats",
       {{"candidates", 2},
        {"unclassified", 0},
        {"pruned", 0},
        {"boosted", 1},
        {"cuts", 1},
        {"over_connections", 0},
        {"segment_over_connections", 0},
        {"flag_edges", 1},
        {"data_flags_used", 1}}},
  };
  CHECK(j.dump(1) == expected.dump(1));
}

TEST_CASE("DOT labels segments with comm, tid and time and styles edges by strength") {
  auto b = testing::build(kRules, kTrace);
  std::ostringstream out;
  write_dot(out, b.trace, b.graph());
  CHECK(out.str() ==
        "digraph causeway {\n"
        "  node [shape=box];\n"
        "  s0 [label=\"main 101 [1000,2000)\"];\n"
        "  s1 [label=\"main 101 [2000,7000)\"];\n"
        "  s2 [label=\"helper 102 [3000,8000)\"];\n"
        "  s2 -> s1 [label=\"futex\", style=solid];\n"
        "  s1 -> s2 [label=\"wakeup\", style=bold];\n"
        "  s0 -> s1 [label=\"split\", style=dashed];\n"
        "  s1 -> s2 [label=\"flag\", style=solid];\n"
        "}\n");
}

TEST_CASE("the text summary gives sizes, strengths, kinds and statistics") {
  auto b = testing::build(kRules, kTrace);
  CHECK(text_summary(b.trace, b.result) ==
        "trace: 8 events, 2 processes, 2 threads, 5 lost events\n"
        "recording lost: 5 events in the kernel buffer (cpu 0: 5)\n"
        "graph: 3 segments, 4 edges (2 strong, 1 weak, 1 boosted)\n"
        "edges by kind: flag 1 futex 1 split 1 wakeup 1\n"
        "rules: 2 candidates, 0 unclassified, 0 pruned, 1 boosted, 1 cuts, 1 flag edges from 1 "
        "data flags\n"
        "over-connections: 0 (requests), 0 (segments)\n");
}

TEST_CASE("the text summary and the JSON count a renamed process and thread once") {
  // The text form declares an id once; a recorder appends a renamed one again.
  auto b = testing::build(kRules, kTrace);
  b.trace.processes.push_back(b.trace.processes[0]);
  b.trace.threads.push_back(b.trace.threads[0]);
  REQUIRE(b.trace.processes.size() == 3);
  nlohmann::json j = graph_json(b.trace, b.result);
  CHECK(j["trace"]["processes"] == 2);
  CHECK(j["trace"]["threads"] == 2);
  const std::string text = text_summary(b.trace, b.result);
  CHECK(text.substr(0, text.find('\n')) ==
        "trace: 8 events, 2 processes, 2 threads, 5 lost events");
}

}  // namespace
}  // namespace cw::engine
