#include "eval/pack_tests.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rules/loader.h"
#include "trace/binary_format.h"
#include "trace/text_format.h"

namespace cw::eval {
namespace {

rules::RuleSet load(const std::string& text) {
  auto r = rules::load_sources({make_source("p.cw", text)});
  REQUIRE_MESSAGE(r.ok(), r.render());
  return std::move(r.rules);
}

const char* const kPack =
    "pack p { version \"0.1.0\" }\n"
    "link wakeup { from wakeup to switch_in join from.target == to.tid }\n"
    "edge wakeup.default { link wakeup strength weak kind wakeup }\n"
    "split wait { at syscall_enter where name == \"futex\" neighbour none }\n"
    "test \"passes\" {\n"
    "  trace [[\n"
    "    causeway-trace 1\n"
    "    process 100 comm=app\n"
    "    thread 101 pid=100 comm=a\n"
    "    thread 102 pid=100 comm=b\n"
    "    1ms 101 switch_in\n"
    "    1.5ms 101 syscall_enter name=futex\n"
    "    2ms 102 wakeup target=101\n"
    "    3ms 101 switch_in\n"
    "  ]]\n"
    "  expect edge 102 -> 101 kind wakeup strength weak rule wakeup.default at 3ms\n"
    "  expect edge 102 -> 101 rule p/wakeup.default\n"
    "  expect no edge 101 -> 102\n"
    "  expect split 101 at 1.5ms rule wait\n"
    "  expect no split 102\n"
    "  expect segments 101 == 2\n"
    "  expect stat candidates == 1\n"
    "}\n"
    "test \"fails\" {\n"
    "  trace [[\n"
    "    causeway-trace 1\n"
    "    process 100 comm=app\n"
    "    thread 101 pid=100 comm=a\n"
    "    thread 102 pid=100 comm=b\n"
    "    1ms 101 switch_in\n"
    "    2ms 102 wakeup target=101\n"
    "    3ms 101 switch_in\n"
    "  ]]\n"
    "  expect edge 102 -> 101 kind futex strength strong\n"
    "  expect no edge 102 -> 101 kind wakeup\n"
    "  expect split 101 rule wait\n"
    "  expect segments 101 > 1\n"
    "  expect stat over_connections == 1\n"
    "}\n";

TEST_CASE("pack tests pass and fail with diagnostics at the expectation") {
  auto results = run_pack_tests(load(kPack), {});
  REQUIRE(results.size() == 2);
  CHECK(results[0].passed());
  CHECK(render_pack_tests(results) ==
        "PASS p \"passes\"\n"
        "FAIL p \"fails\"\n"
        "p.cw:34:3: error: expectation failed: expected edge 102 -> 101 kind futex strength "
        "strong\n"
        "    expect edge 102 -> 101 kind futex strength strong\n"
        "    ^~~~~~\n"
        "hint: found: 102 -> 101 wakeup weak (p/wakeup.default) at 3000000ns\n"
        "p.cw:35:3: error: expectation failed: expected no edge 102 -> 101 kind wakeup but found "
        "one\n"
        "    expect no edge 102 -> 101 kind wakeup\n"
        "    ^~~~~~\n"
        "hint: found: 102 -> 101 wakeup weak (p/wakeup.default) at 3000000ns\n"
        "p.cw:36:3: error: expectation failed: expected split 101 rule wait\n"
        "    expect split 101 rule wait\n"
        "    ^~~~~~\n"
        "hint: found: no splits on thread 101\n"
        "p.cw:37:3: error: expectation failed: expected segments 101 > 1\n"
        "    expect segments 101 > 1\n"
        "    ^~~~~~\n"
        "hint: found: 1 segments\n"
        "p.cw:38:3: error: expectation failed: expected stat over_connections == 1\n"
        "    expect stat over_connections == 1\n"
        "    ^~~~~~\n"
        "hint: found: 0\n"
        "1 passed, 1 failed\n");
}

TEST_CASE("a test's broken trace fails it with the trace error at its place in the pack") {
  auto results = run_pack_tests(load("pack p { version \"0.1.0\" }\n"
                                     "test \"broken\" {\n"
                                     "  trace [[\n"
                                     "causeway-trace 1\n"
                                     "1ms 101 swich_in\n"
                                     "]]\n"
                                     "}\n"),
                                {"p"});
  REQUIRE(results.size() == 1);
  REQUIRE(results[0].failures.size() == 1);
  const Diagnostic& d = results[0].failures[0];
  CHECK(d.loc.line == 5);
  CHECK(d.render().starts_with("p.cw:5:"));
}

TEST_CASE("only the named packs' tests run, each with its pack and what it requires") {
  auto r = rules::load_sources(
      {make_source("base.cw",
                   "pack base { version \"0.1.0\" }\n"
                   "link wakeup { from wakeup to switch_in join from.target == to.tid }\n"
                   "edge any { link wakeup strength weak }\n"),
       make_source("other.cw",
                   "pack other { version \"0.1.0\" requires base }\n"
                   "edge strong { link wakeup strength strong priority 1 }\n"),
       make_source("mine.cw",
                   "pack mine { version \"0.1.0\" requires base }\n"
                   "test \"sees base, not other\" {\n"
                   "  trace [[\n"
                   "causeway-trace 1\n"
                   "1ms 102 wakeup target=101\n"
                   "2ms 101 switch_in\n"
                   "]]\n"
                   "  expect edge 102 -> 101 strength weak rule base/any\n"
                   "}\n")});
  REQUIRE_MESSAGE(r.ok(), r.render());
  auto results = run_pack_tests(r.rules, {"mine"});
  CHECK(render_pack_tests(results) == "PASS mine \"sees base, not other\"\n1 passed, 0 failed\n");
  CHECK(run_pack_tests(r.rules, {"base"}).empty());
}

// A reader blocked a second in `read` until another process sends it the bytes.
const char* const kDiagnosisPack =
    "pack d { version \"0.1.0\" }\n"
    "link stream { from send to recv join from.object == to.object pick overlap range offset, "
    "len }\n"
    "edge message { link stream strength strong kind message }\n"
    "link wakeup { from wakeup to switch_in join from.target == to.tid }\n"
    "edge wakeup.default { link wakeup strength weak kind wakeup }\n"
    "split wait { at syscall_enter where name == \"read\" neighbour none }\n";

const char* const kLongRead =
    "causeway-trace 1\n"
    "process 100 comm=reader\n"
    "thread 100 pid=100 comm=reader\n"
    "process 200 comm=writer\n"
    "thread 200 pid=200 comm=writer\n"
    "1ms 100 switch_in\n"
    "2ms 100 syscall_enter name=read fd=3\n"
    "2ms 100 switch_out state=S\n"
    "3ms 200 switch_in\n"
    "1001ms 200 syscall_enter name=sendto fd=4\n"
    "1001ms 200 send object=1 offset=0 len=8 peer=100\n"
    "1001ms 200 wakeup target=100\n"
    "1001ms 200 syscall_exit name=sendto ret=8\n"
    "1002ms 100 switch_in\n"
    "1002ms 100 recv object=1 offset=0 len=8 peer=200\n"
    "1002ms 100 syscall_exit name=read ret=8\n"
    "1003ms 100 exit code=0\n";

std::string test_block(const std::string& name, const std::string& body) {
  return "test \"" + name + "\" {\n  trace [[\n" + kLongRead + "]]\n" + body + "}\n";
}

// Lines of `actual` against `expected`; an expected line ending in '*' is a prefix (the rest
// is the diagnosis's own wording, engine/diagnosis/diagnose.cc).
void check_lines(const std::string& actual, const std::vector<std::string>& expected) {
  std::vector<std::string> lines;
  for (size_t b = 0, e; b < actual.size(); b = e + 1) {
    e = actual.find('\n', b);
    if (e == std::string::npos) e = actual.size();
    lines.push_back(actual.substr(b, e - b));
  }
  CAPTURE(actual);
  REQUIRE(lines.size() == expected.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (expected[i].ends_with('*'))
      CHECK(lines[i].starts_with(expected[i].substr(0, expected[i].size() - 1)));
    else
      CHECK(lines[i] == expected[i]);
  }
}

TEST_CASE("diagnosis expectations: the hang and the questions asked") {
  auto results = run_pack_tests(load(std::string(kDiagnosisPack) +
                                     test_block("auto finds the long read",
                                                "  expect hang 100 kind LongWait\n"
                                                "  expect root_cause 200 kind LongRunning\n"
                                                "  expect questions == 1\n") +
                                     test_block("the hang named by thread and time",
                                                "  hang \"100@0.5\"\n"
                                                "  expect hang 100 kind LongWait\n") +
                                     test_block("the hang named by the thread's name",
                                                "  hang \"writer\"\n"
                                                "  expect hang 200 kind LongRunning\n")),
                                {});
  CHECK(render_pack_tests(results) ==
        "PASS d \"auto finds the long read\"\n"
        "PASS d \"the hang named by thread and time\"\n"
        "PASS d \"the hang named by the thread's name\"\n"
        "3 passed, 0 failed\n");
}

TEST_CASE("failed diagnosis expectations say what the diagnosis found") {
  auto results =
      run_pack_tests(load(std::string(kDiagnosisPack) +
                          test_block("wrong",
                                     "  expect hang 200\n  expect hang 100 kind LongRunning\n"
                                     "  expect root_cause 100 kind LongRunning\n"
                                     "  expect questions > 3\n") +
                          test_block("no such thread", "  hang \"999@0.5\"\n  expect hang 999\n")),
                     {});
  REQUIRE(results.size() == 2);
  check_lines(render_pack_tests(results),
              {"FAIL d \"wrong\"",
               "p.cw:27:3: error: expectation failed: expected hang 200",
               "    expect hang 200",
               "    ^~~~~~",
               "hint: found: hang 100 kind LongWait from 2000000ns to 1003000000ns (auto: *",
               "p.cw:28:3: error: expectation failed: expected hang 100 kind LongRunning",
               "    expect hang 100 kind LongRunning",
               "    ^~~~~~",
               "hint: found: hang 100 kind LongWait from 2000000ns to 1003000000ns (auto: *",
               "p.cw:29:3: error: expectation failed: expected root_cause 100 kind LongRunning",
               "    expect root_cause 100 kind LongRunning",
               "    ^~~~~~",
               "hint: found: root_cause 200 kind LongRunning: ran 998.0 ms on a CPU *",
               "p.cw:30:3: error: expectation failed: expected questions > 3",
               "    expect questions > 3",
               "    ^~~~~~",
               "hint: found: 1 questions not answered by a rule, 0 answered by one",
               "hint: recurse question: writer 200 ran 998.0 ms on a CPU *",
               "FAIL d \"no such thread\"",
               "p.cw:53:3: error: expectation failed: the diagnosis found no hang: *",
               "    expect hang 999",
               "    ^~~~~~",
               "0 passed, 2 failed"});
}

TEST_CASE("a test's trace file is read from the pack's folder, binary or text") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("cw-pack-tests-{}", getpid());
  fs::create_directories(dir / "traces");
  write_trace(parse_text_trace(make_source("long-read.txt", kLongRead)),
              (dir / "traces" / "long-read.cwt").string());
  {
    std::ofstream text(dir / "traces" / "long-read.txt");
    text << kLongRead;
  }
  const std::string pack = (dir / "pack.cw").string();
  auto r = rules::load_sources({make_source(
      pack, std::string(kDiagnosisPack) +
                "test binary {\n  trace file \"traces/long-read.cwt\"\n"
                "  expect hang 100 kind LongWait\n  expect segments 100 == 2\n}\n"
                "test text {\n  trace file \"traces/long-read.txt\"\n  expect hang 100\n}\n"
                "test missing {\n  trace file \"traces/nope.cwt\"\n  expect hang 100\n}\n")});
  REQUIRE_MESSAGE(r.ok(), r.render());
  const std::string out = render_pack_tests(run_pack_tests(r.rules, {}));
  fs::remove_all(dir);
  CHECK(out == fmt::format("PASS d \"binary\"\n"
                           "PASS d \"text\"\n"
                           "FAIL d \"missing\"\n"
                           "{0}:17:14: error: cannot read the test's trace: {1}/traces/nope.cwt: "
                           "cannot read: No such file or directory\n"
                           "    trace file \"traces/nope.cwt\"\n"
                           "               ^~~~~~~~~~~~~~~~~\n"
                           "2 passed, 1 failed\n",
                           pack, dir.string()));
}

}  // namespace
}  // namespace cw::eval
