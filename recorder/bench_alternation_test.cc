#include "recorder/bench_alternation.h"

#include <doctest/doctest.h>

namespace cw {

TEST_CASE("bench alternation: all against none by default") {
  std::string why;
  auto a = parse_bench_alternation("4", &why);
  REQUIRE(a);
  CHECK(a->period_ns == 4'000'000'000ull);
  REQUIRE(a->states.size() == 2);
  CHECK(a->states[0].name == "all");
  CHECK(a->states[0].scheduler);
  CHECK(a->states[0].sockets);
  CHECK(a->states[1].name == "none");
  CHECK_FALSE(a->states[1].scheduler);
  CHECK_FALSE(a->states[1].sockets);
}

TEST_CASE("bench alternation: states named") {
  std::string why;
  auto a = parse_bench_alternation("2.5:all,scheduler,sockets,none", &why);
  REQUIRE(a);
  CHECK(a->period_ns == 2'500'000'000ull);
  REQUIRE(a->states.size() == 4);
  CHECK(a->states[1].scheduler);
  CHECK_FALSE(a->states[1].sockets);
  CHECK_FALSE(a->states[2].scheduler);
  CHECK(a->states[2].sockets);
}

TEST_CASE("bench alternation: what is wrong is said") {
  std::string why;
  CHECK_FALSE(parse_bench_alternation("", &why));
  CHECK(why.find("number of seconds") != std::string::npos);
  CHECK_FALSE(parse_bench_alternation("0.1", &why));
  CHECK_FALSE(parse_bench_alternation("4s", &why));
  CHECK_FALSE(parse_bench_alternation("4:all,some", &why));
  CHECK(why == "unknown state 'some' in the alternation (all, scheduler, sockets, none)");
  CHECK_FALSE(parse_bench_alternation("4:all", &why));
  CHECK(why == "the alternation needs two states or more");
  CHECK_FALSE(parse_bench_alternation("4:all,", &why));
}

}  // namespace cw
