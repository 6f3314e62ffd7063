#include "engine/pack_tests.h"

#include <doctest/doctest.h>

#include "rules/loader.h"

namespace cw::engine {
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

}  // namespace
}  // namespace cw::engine
