#include "instrument/plan.h"

#include <doctest/doctest.h>

#include "rules/loader.h"

namespace cw::instrument {
namespace {

rules::RuleSet load(const std::string& body) {
  auto r = rules::load_sources({make_source("p.cw", "pack p { version \"0.1.0\" }\n" + body)});
  REQUIRE_MESSAGE(r.ok(), r.render());
  return std::move(r.rules);
}

TEST_CASE("flags are planned with their qualified id, size and accesses") {
  InstrumentationPlan plan = plan_instrumentation(load(R"(
flag ready {
  symbol "ready_flag"
  binary "cw-prog-spin"
  size 4
  access write
}
flag fixed { address 0x601040  size 8 }
)"));
  REQUIRE(plan.flags.size() == 2);
  CHECK(plan.flags[0].id == "p/ready");
  CHECK(plan.flags[0].symbol == "ready_flag");
  CHECK(plan.flags[0].binary == "cw-prog-spin");
  CHECK(plan.flags[0].size == 4);
  CHECK(plan.flags[0].writes);
  CHECK_FALSE(plan.flags[0].reads);
  CHECK(plan.flags[0].where == "p.cw:3:6");
  CHECK(plan.flags[1].address == 0x601040);
  CHECK(plan.flags[1].size == 8);
  CHECK(plan.flags[1].reads);
  CHECK(plan.functions.empty());
  CHECK(plan.warnings.empty());
}

TEST_CASE("functions named by split and batch rules are planned once each") {
  InstrumentationPlan plan = plan_instrumentation(load(R"(
list handlers = ["handle_a", "handle_b"]
split request.begin { at call_enter where fn in handlers }
split request.end { at call_exit where fn == "handle_a" cut after }
batch server.items {
  within call where "serve_ready" == fn
  item recv
}
)"));
  REQUIRE(plan.functions.size() == 3);
  CHECK(plan.functions[0].name == "handle_a");
  CHECK(plan.functions[0].rules == std::vector<std::string>{"p/request.begin", "p/request.end"});
  CHECK(plan.functions[1].name == "handle_b");
  CHECK(plan.functions[2].name == "serve_ready");
  CHECK(plan.functions[2].rules == std::vector<std::string>{"p/server.items"});
  CHECK(plan.warnings.empty());
  CHECK(plan.flags.empty());
}

TEST_CASE("functions a link names on one side are planned too") {
  InstrumentationPlan plan = plan_instrumentation(load(R"(
link post {
  from call_enter
  from_where fn == "task_post"
  to call_enter
  to_where fn == "task_take"
  join from.pid == to.pid
  pick next
}
)"));
  REQUIRE(plan.functions.size() == 2);
  CHECK(plan.functions[0].name == "task_post");
  CHECK(plan.functions[1].name == "task_take");
  CHECK(plan.functions[1].rules == std::vector<std::string>{"p/post"});
}

TEST_CASE("call rules that name no function are reported, not probed") {
  InstrumentationPlan plan = plan_instrumentation(load(R"(
split every.call { at call_enter }
split by.pattern { at call_enter where fn matches "^handle_" }
)"));
  CHECK(plan.functions.empty());
  REQUIRE(plan.warnings.size() == 2);
  CHECK(plan.warnings[0] ==
        "p.cw:3:7: rule p/every.call names no function (add `where fn == \"NAME\"`); nothing is "
        "probed for it");
  CHECK(plan.warnings[1] ==
        "p.cw:4:40: rule p/by.pattern matches function names by pattern; the recorder probes "
        "only functions named with == or in");
}

TEST_CASE("rules about other events plan nothing") {
  InstrumentationPlan plan = plan_instrumentation(load(R"(
split wait { at syscall_enter where name == "read" }
)"));
  CHECK(plan.empty());
  CHECK(plan.warnings.empty());
}

}  // namespace
}  // namespace cw::instrument
