#include "engine/diagnosis/debug_report.h"

#include <doctest/doctest.h>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

// A client blocked in read, answered late by a server that ran 200 ms first.
const char* const kRules =
    "link stream { from send to recv join from.object == to.object pick next }\n"
    "edge message { link stream strength strong kind message }\n"
    "split wait { at syscall_enter where name == \"read\" cut before }\n";

const char* const kTrace =
    "process 810 comm=cw-client exe=/usr/bin/cw-client\n"
    "thread 811 pid=810 comm=cw-client\n"
    "process 812 comm=cw-server exe=/usr/bin/cw-server\n"
    "thread 813 pid=812 comm=cw-srv-worker\n"
    "1000000000 811 syscall_enter name=read fd=3 stack=main;ask;read\n"
    "1000000000 811 switch_out state=S\n"
    "1100000000 813 switch_in\n"
    "1300000000 813 syscall_enter name=sendto fd=5 stack=main;serve;0x401234\n"
    "1300000000 813 send object=7 offset=0 len=64 peer=810 fd=5\n"
    "1300001000 811 switch_in\n"
    "1300001000 811 recv object=7 offset=0 len=64 peer=812 fd=3\n"
    "1300002000 811 syscall_exit name=read ret=64\n";

uint32_t first_segment(const Graph& g, Tid tid) {
  return g.thread_segments(tid)->begin;
}

uint32_t event_at(const Trace& t, Tid tid, std::string_view kind) {
  for (uint32_t i = 0; i < t.events.size(); ++i)
    if (t.events[i].tid == tid && t.schema.kind(t.events[i].kind).name == kind) return i;
  FAIL("no such event");
  return 0;
}

Diagnosis long_wait(const testing::Built& b) {
  const Graph& g = b.graph();
  REQUIRE(g.edges.size() == 1);
  Diagnosis d;
  d.hang.tid = 811;
  d.hang.pid = 810;
  d.hang.start_ns = 1000000000;
  d.hang.end_ns = 1300002000;
  d.hang.kind = HangKind::LongWait;
  d.hang.segment = first_segment(g, 811);
  d.hang.chosen_by = "auto: the longest stretch of a main thread";
  RootCause rc;
  rc.segment = first_segment(g, 813);
  rc.kind = HangKind::LongRunning;
  rc.what = "ran 200.0 ms on a CPU before its send";
  rc.stack = b.trace.events[event_at(b.trace, 813, "syscall_enter")].stack;
  rc.depth = 1;
  d.root_causes.push_back(rc);
  d.path = {{first_segment(g, 813), 0}, {first_segment(g, 811), kNoIndex}};
  Query q;
  q.question.kind = QuestionKind::Edge;
  q.question.subject = first_segment(g, 811);
  q.question.text = "What made cw-client 811 run at 1.000 s? Several events could have.";
  q.question.options.push_back({"cw-srv-worker 813 send -> recv (message, strong)", "", 1, 0});
  Option stop;
  stop.label = "stop here";
  stop.stop = true;
  q.question.options.push_back(stop);
  q.answer = {0, AnswerSource::Auto, {}};
  d.queries.push_back(q);
  Query r = q;
  r.question.kind = QuestionKind::Recurse;
  r.question.text = "cw-srv-worker 813 ran long itself: diagnose it too?";
  r.question.options = {{"yes", "", 0, kNoIndex, kNoIndex, false}, stop};
  r.answer = {1, AnswerSource::Rule, "answers.x/q2"};
  d.queries.push_back(r);
  d.notes.push_back("the culprit was not diagnosed further");
  measure_for_reports(b.trace, b.graph(), d);
  return d;
}

TEST_CASE("debug text: root cause first, then the hang, the path, the questions, the notes") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = long_wait(b);
  CHECK(debug_text(b.trace, b.graph(), d) ==
        "root cause: process cw-server 812, thread cw-srv-worker 813\n"
        "  when: 0.100000 s to 0.300000 s (200.0 ms)\n"
        "  kind: LongRunning (what the hang waited for)\n"
        "  what: ran 200.0 ms on a CPU before its send\n"
        "  costliest functions: unknown (1 stack while it ran; timing a function takes two in "
        "the same context)\n"
        "  stack:\n"
        "    0x401234\n"
        "    serve\n"
        "    main\n"
        "\n"
        "hang: LongWait of thread cw-client 811 (process cw-client 810)\n"
        "  when: 0.000000 s to 0.300002 s (300.0 ms)\n"
        "  found by: auto: the longest stretch of a main thread\n"
        "\n"
        "causal path, from the root cause to the hang:\n"
        "    0.300000 s  cw-srv-worker 813     send(fd: 5<object 7>, len: 64, peer: 810)  "
        "--message, strong-->\n"
        "    0.300001 s  cw-client 811         recv(fd: 3<object 7>, len: 64, peer: 812)  (the "
        "hang)\n"
        "\n"
        "questions: 1 asked, 1 answered by rules\n"
        "  1. [edge] What made cw-client 811 run at 1.000 s? Several events could have.\n"
        "     -> cw-srv-worker 813 send -> recv (message, strong) (AUTOMATIC: the "
        "best-scored of 2 options, nobody was asked)\n"
        "  2. [recurse] cw-srv-worker 813 ran long itself: diagnose it too?\n"
        "     -> stop here (by rule answers.x/q2)\n"
        "  1 of 2 choices were made automatically; answer them in a terminal, or with "
        "--answers FILE.\n"
        "\n"
        "notes:\n"
        "  - the culprit was not diagnosed further\n"
        "\n"
        "recording lost: nothing\n");
}

TEST_CASE("a busy root cause names its costliest functions, from the stacks of its stretch") {
  // The worker makes system calls while it computes: their stacks time its functions.
  const std::string trace = std::string(kTrace).replace(
      std::string(kTrace).find("1300000000 813 syscall_enter name=sendto"), 0,
      "1150000000 813 syscall_enter name=getpid stack=main;serve;compute;hash\n"
      "1150000000 813 syscall_exit name=getpid ret=1\n"
      "1250000000 813 syscall_enter name=getpid stack=main;serve;compute;hash\n"
      "1250000000 813 syscall_exit name=getpid ret=1\n"
      "1280000000 813 syscall_enter name=getpid stack=main;serve;compute\n"
      "1280000000 813 syscall_exit name=getpid ret=1\n");
  auto b = testing::build(kRules, trace);
  Diagnosis d = long_wait(b);
  const std::string text = debug_text(b.trace, b.graph(), d);
  // hash: 1.15 to 1.25 s; compute: 1.15 to 1.28 s less hash's 100 ms; serve: 1.15 to
  // 1.3 s (its sendto) less compute's 130 ms. Four stacks, three repeated by an exit.
  CHECK(text.find("  costliest functions (from its 7 stacks, as `causeway latency`): hash 100.0 "
                  "ms, compute 30.0 ms, serve 20.0 ms\n") != std::string::npos);
  const auto j = debug_json(b.trace, b.graph(), d);
  CHECK(j["root_causes"][0]["costliest_functions"] ==
        nlohmann::json::parse(R"([{"function":"hash","own_ns":100000000},
                                  {"function":"compute","own_ns":30000000},
                                  {"function":"serve","own_ns":20000000}])"));
}

TEST_CASE("debug --json has exactly the documented keys") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = long_wait(b);
  nlohmann::json expected = {
      {"hang",
       {{"pid", 810},
        {"tid", 811},
        {"comm", "cw-client"},
        {"kind", "LongWait"},
        {"start_ns", 1000000000},
        {"end_ns", 1300002000},
        {"stack", nlohmann::json::array()},
        {"stack_frames", nlohmann::json::array()}}},
      {"root_causes",
       {{{"pid", 812},
         {"tid", 813},
         {"comm", "cw-srv-worker"},
         {"kind", "LongRunning"},
         {"start_ns", 1100000000},
         {"end_ns", 1300000000},
         {"what", "ran 200.0 ms on a CPU before its send"},
         {"stack", {"0x401234", "serve", "main"}},
         {"stack_frames",
          nlohmann::json::parse(R"([{"name":"0x401234"},{"name":"serve","function":"serve"},
                                    {"name":"main","function":"main"}])")},
         {"costliest_functions", nlohmann::json::array()}}}},
      {"path",
       {{{"pid", 812},
         {"tid", 813},
         {"comm", "cw-srv-worker"},
         {"start_ns", 1100000000},
         {"end_ns", 1300000000},
         {"edge_kind", "message"},
         {"strength", "strong"}},
        {{"pid", 810},
         {"tid", 811},
         {"comm", "cw-client"},
         {"start_ns", 1000000000},
         {"end_ns", 1300002000},
         {"edge_kind", nullptr},
         {"strength", nullptr}}}},
      {"queries",
       {{{"question", "What made cw-client 811 run at 1.000 s? Several events could have."},
         {"kind", "edge"},
         {"options", {"cw-srv-worker 813 send -> recv (message, strong)", "stop here"}},
         {"chosen", "cw-srv-worker 813 send -> recv (message, strong)"},
         {"source", "auto"}},
        {{"question", "cw-srv-worker 813 ran long itself: diagnose it too?"},
         {"kind", "recurse"},
         {"options", {"yes", "stop here"}},
         {"chosen", "stop here"},
         {"source", "rule"},
         {"rule", "answers.x/q2"}}}},
      {"notes", {"the culprit was not diagnosed further"}},
      {"losses",
       {{"kernel_buffer", 0},
        {"hook_log", 0},
        {"switches_unreported", 0},
        {"maps", 0},
        {"watchpoints_silent", 0}}}};
  CHECK(debug_json(b.trace, b.graph(), d) == expected);
}

TEST_CASE("a baseline is reported with its path, in text and JSON") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = long_wait(b);
  d.baseline = first_segment(b.graph(), 813);
  d.baseline_path = {{first_segment(b.graph(), 813), kNoIndex}};
  std::string text = debug_text(b.trace, b.graph(), d);
  CHECK(text.find("\nbaseline: thread cw-srv-worker 813 at 0.100000 s (200.0 ms), a similar "
                  "segment; whose wait ended sooner: its wait lasted 0 ns, the hang's 300.0 ms\n"
                  "    0.100000 s  cw-srv-worker 813     switch_in()  (baseline)\n") !=
        std::string::npos);
  auto j = debug_json(b.trace, b.graph(), d);
  CHECK(j["baseline"]["tid"] == 813);
  CHECK(j["baseline"]["path"].size() == 1);
  CHECK(j["baseline"]["path"][0]["edge_kind"].is_null());
  CHECK_FALSE(j.contains("yield_loop"));
}

TEST_CASE("a yield loop without a flag says so and proposes a flag declaration") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d;
  d.hang.tid = 811;
  d.hang.pid = 810;
  d.hang.start_ns = 1000000000;
  d.hang.end_ns = 1300002000;
  d.hang.kind = HangKind::RepeatedYield;
  d.hang.segment = first_segment(b.graph(), 811);
  d.root_causes.push_back(
      {first_segment(b.graph(), 811), HangKind::RepeatedYield, "polled read 2 times", 0, 0});
  d.path = {{first_segment(b.graph(), 811), kNoIndex}};
  d.yield_without_flag = true;
  d.yield_loop.syscalls = {{b.trace.strings.find("read"), 2}};
  d.yield_loop.call_sites = {b.trace.events[0].stack};
  std::string text = debug_text(b.trace, b.graph(), d);
  CHECK(text.find("  stack: none recorded\n") != std::string::npos);
  CHECK(text.find("causal path, from the root cause to the hang:\n"
                  "    0.000000 s  cw-client 811         read(fd: 3)  (the "
                  "hang)\n") != std::string::npos);
  CHECK(text.find("\nno data flag explains this loop: cw-client 811 repeated system calls "
                  "for 300.0 ms and no recorded event says what it was waiting for.\n"
                  "  the loop's system calls:\n"
                  "    read x2\n"
                  "  called from:\n"
                  "    read <- ask <- main\n") != std::string::npos);
  CHECK(text.find("    flag SYMBOL {\n"
                  "      symbol \"SYMBOL\"\n"
                  "      binary \"/usr/bin/cw-client\"\n"
                  "      size 4\n"
                  "      set value != 0\n"
                  "    }\n") != std::string::npos);
  CHECK(text.find("`causeway flags suggest --pid 810`") != std::string::npos);
  CHECK(text.find("questions: 0 asked\n") != std::string::npos);
  CHECK(text.find("automatically") == std::string::npos);
  auto j = debug_json(b.trace, b.graph(), d);
  CHECK(j["yield_loop"] == nlohmann::json{{"syscalls", {{{"name", "read"}, {"count", 2}}}},
                                          {"call_sites", {{"read", "ask", "main"}}}});
  CHECK(j["root_causes"][0]["stack"] == nlohmann::json::array());
  CHECK(j["queries"] == nlohmann::json::array());
  CHECK(j["notes"] == nlohmann::json::array());
}

TEST_CASE("a baseline whose wait was no quicker is not said to have ended quickly") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = long_wait(b);
  d.baseline = first_segment(b.graph(), 811);  // blocked 300 ms in its read
  d.hang.profile.longest_block_ns = 100'000'000;
  measure_for_reports(b.trace, b.graph(), d);
  CHECK(d.baseline_longest_block_ns == 300'001'000);  // its read, as recorded
  const std::string text = debug_text(b.trace, b.graph(), d);
  CHECK(text.find("ended quickly") == std::string::npos);
  CHECK(text.find("a similar segment; whose wait did not end sooner (it ended with another "
                  "result): its wait lasted 300.0 ms, the hang's 100.0 ms\n") != std::string::npos);
}

TEST_CASE("no root cause and no path is one statement, not 'its own root cause'") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = long_wait(b);
  d.root_causes.clear();
  d.path.clear();
  std::string text = debug_text(b.trace, b.graph(), d);
  CHECK(text.find("root cause: none found") == 0);
  CHECK(text.find("its own root cause") == std::string::npos);
  CHECK(text.find("\ncausal path: none found\n") != std::string::npos);
  SUBCASE("the hang blamed itself: then it is its own root cause") {
    d.root_causes.push_back({first_segment(b.graph(), 811), HangKind::LongWait, "blocked", 0, 0});
    text = debug_text(b.trace, b.graph(), d);
    CHECK(text.find("none found") == std::string::npos);
    CHECK(text.find("\ncausal path: none (the hang is its own root cause)\n") != std::string::npos);
  }
}

TEST_CASE("a root cause's time is the range its description was measured over") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = long_wait(b);
  d.root_causes[0].start_ns = 1'000'000'000;  // e.g. the hang's stretch, longer than the
  d.root_causes[0].end_ns = 1'300'002'000;    // segment that stands for it
  CHECK(debug_text(b.trace, b.graph(), d)
            .starts_with("root cause: process cw-server 812, thread cw-srv-worker 813\n"
                         "  when: 0.000000 s to 0.300002 s (300.0 ms)\n"));
}

TEST_CASE("the hang shows where it blocked: the call and its stack") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = long_wait(b);
  d.hang.profile.longest_block_ns = 300'001'000;
  d.hang.profile.longest_block_start = 1'000'000'000;
  d.hang.profile.longest_block_call = event_at(b.trace, 811, "syscall_enter");
  const std::string text = debug_text(b.trace, b.graph(), d);
  CHECK(text.find("  found by: auto: the longest stretch of a main thread\n"
                  "  blocked: 300.0 ms from 0.000000 s in read(fd: 3)\n"
                  "  stack:\n"
                  "    read\n"
                  "    ask\n"
                  "    main\n") != std::string::npos);
  SUBCASE("a terminal shows the hang and the path so far before a question") {
    const std::string so_far = so_far_text(b.trace, b.graph(), d, true);
    CHECK(so_far.find("hang: LongWait of thread cw-client 811") == 0);
    CHECK(so_far.find("  blocked: 300.0 ms") != std::string::npos);
    CHECK(so_far.find("found so far:\n  cw-srv-worker 813 (process cw-server 812): ran 200.0 ms "
                      "on a CPU before its send\n") != std::string::npos);
    CHECK(so_far.find("causal path so far, to the hang:\n") != std::string::npos);
    CHECK(so_far_text(b.trace, b.graph(), d, false).find("hang: ") == std::string::npos);
  }
}

TEST_CASE("events read as calls: kernel addresses in hex, no peer=-1") {
  auto b = testing::build(kRules,
                          "thread 5 pid=5 comm=x\n"
                          "1 5 syscall_enter name=futex op=wait resource=18446612689066081280 "
                          "fd=-1\n"
                          "2 5 recv object=18446612689066081280 offset=8 len=4 peer=-1 fd=3\n"
                          "3 5 switch_out state=S\n");
  CHECK(describe_event(b.trace, 0) == "futex(object: 0xffff8881a0ff3c00, op: wait)");
  CHECK(describe_event(b.trace, 1) == "recv(fd: 3<object 0xffff8881a0ff3c00>, offset: 8, len: 4)");
  CHECK(describe_event(b.trace, 2) == "switch_out(state: S)");
}

TEST_CASE("stack frames below the first mappable page are unwinding junk and left out") {
  auto b = testing::build(kRules, "thread 5 pid=5 comm=x\n1 5 switch_in stack=0x0;main;0x1000\n");
  CHECK(stack_frames(b.trace, b.trace.events[0].stack) == std::vector<std::string>{"main"});
}

}  // namespace
}  // namespace cw::engine
