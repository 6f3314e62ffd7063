#include "engine/latency/rank.h"

#include <doctest/doctest.h>

#include "engine/latency/latency_test_support.h"

namespace cw::latency {
namespace {

using testing::app_trace;
using testing::kFigure3;

constexpr int64_t ms = 1'000'000;

// "cost: f1(own,distance) f2(...)" with times in ms.
std::string show(const RankedPath& p) {
  std::string s = std::to_string(p.cost / ms) + ":";
  for (const auto& f : p.frames)
    s += " " + f.function + "(" + std::to_string(f.cost / ms) + "," + std::to_string(f.distance) +
         ")";
  if (p.presence != Presence::Both) s += " " + std::string(presence_name(p.presence));
  return s;
}

std::vector<std::string> show(const std::vector<RankedPath>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(show(p));
  return out;
}

TEST_CASE("Figure 3 ranked: aggressive costs put B's context first, its D marked 0") {
  const Profile p = infer(app_trace(kFigure3), {});
  // Own aggressive times: A 3 - (2 + 1) = 0, B 2 - 2 = 0, D 2, C 1 - 1 = 0, D' 1.
  CHECK(show(rank_paths(p.cct, {Mode::Aggressive, 10, 0})) ==
        std::vector<std::string>{"2: [app](0,3) A(0,2) B(0,1) D(2,0)",
                                 "1: [app](0,3) A(0,2) C(0,1) D(1,0)"});
  // Conservative: A 3 - 2 = 1, B 0, D 1, C 1, D' 0. A tie, broken by name (B before C).
  CHECK(show(rank_paths(p.cct, {Mode::Conservative, 10, 0})) ==
        std::vector<std::string>{"2: [app](0,1) A(1,0) B(0,1) D(1,2)",
                                 "2: [app](0,1) A(1,0) C(1,1) D(0,2)"});
  CHECK(rank_paths(p.cct, {Mode::Aggressive, 1, 0}).size() == 1);
  // A noise threshold of 2 ms leaves out the 1 ms context.
  CHECK(rank_paths(p.cct, {Mode::Aggressive, 10, 2 * ms}).size() == 1);
}

TEST_CASE("differential ranking: the context that slowed down comes first; new and vanished") {
  const Profile base = infer(app_trace(kFigure3), {});
  // The slow run: D under C now runs 6 ms, and a context A;E appears; B's D is gone.
  const Profile slow = infer(app_trace("1ms 11 syscall_enter name=read stack=A;C;D\n"
                                       "7ms 11 syscall_enter name=read stack=A;C;D\n"
                                       "8ms 11 syscall_enter name=read stack=A;E\n"
                                       "9ms 11 syscall_enter name=read stack=A;E\n"
                                       "10ms 11 syscall_enter name=read stack=A\n"),
                             {});
  const auto ranked = diff_rank_paths(base.cct, slow.cct, {Mode::Conservative, 10, 0});
  // Slow, conservative own: D' 6, C 0, E 1, A 9 - 7 = 2; base: A 1, C 1, D' 0.
  CHECK(show(ranked) == std::vector<std::string>{
                            "6: [app](0,3) A(1,2) C(-1,1) D(6,0)",
                            "3: [app](0,1) A(2,0) E(1,1) new",
                            "-2: [app](0,1) A(-1,0) B(0,1) D(-1,2) vanished",
                        });
  REQUIRE(ranked.size() == 3);
  CHECK(ranked[0].frames[3].own == uint64_t(6 * ms));
  CHECK(ranked[0].frames[3].base_own == 0);
  CHECK(ranked[0].frames[1].base_own == uint64_t(1 * ms));
}

TEST_CASE("folded output: one line per context with own time, for flame-graph tools") {
  const Profile p = infer(app_trace(kFigure3), {});
  CHECK(folded(p.cct, Mode::Aggressive) ==
        "[app];A;B;D 2000000\n"
        "[app];A;C;D 1000000\n");
  CHECK(folded(p.cct, Mode::Conservative) ==
        "[app];A 1000000\n"
        "[app];A;B;D 1000000\n"
        "[app];A;C 1000000\n");
}

}  // namespace
}  // namespace cw::latency
