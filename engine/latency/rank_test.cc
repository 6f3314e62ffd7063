#include "engine/latency/rank.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

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
  // Slow, conservative own: D' 6, C 0, E 1, A 9 - 7 = 2; base: A 1, C 1, D' 0, B 0, D 1.
  // A;E's hot frame is A (2 ms against E's 1): A;E, and the base's A;B;D, which leaves the
  // slow run's contexts at A, are one row, shown as the slow run's A;E; the base's B;D
  // below A, not shown, cost 1 ms less in the slow run.
  CHECK(show(ranked) == std::vector<std::string>{
                            "6: [app](0,3) A(1,2) C(-1,1) D(6,0)",
                            "1: [app](0,1) A(1,0) E(1,1)",
                        });
  REQUIRE(ranked.size() == 2);
  CHECK(ranked[0].frames[3].own == uint64_t(6 * ms));
  CHECK(ranked[0].frames[3].base_own == 0);
  CHECK(ranked[0].frames[1].base_own == uint64_t(1 * ms));
  CHECK(ranked[0].merged == 1);
  CHECK(ranked[1].merged == 2);  // A;E (slow) and A;B;D (base)
  CHECK(ranked[1].below_cost == -1 * ms);

  // A context whose hot frame only one run has is new, or vanished.
  const Profile other = infer(app_trace("2ms 11 syscall_enter name=read stack=A;F\n"
                                        "9ms 11 syscall_enter name=read stack=A;F\n"),
                              {});
  const auto moved = diff_rank_paths(base.cct, other.cct, {Mode::Conservative, 10, 0});
  // A;F is new; the base's contexts leave the slow run's at A, above its hot frame F: each
  // is vanished, down to its own hot frame (D; C, with D' below it).
  CHECK(show(moved) == std::vector<std::string>{
                           "6: [app](0,2) A(-1,1) F(7,0) new",
                           "-2: [app](0,1) A(-1,0) B(0,1) D(-1,2) vanished",
                           "-2: [app](0,1) A(-1,0) C(-1,1) D(0,2) vanished",
                       });
}

// Samples land at different depths below the function that takes the time (which kernel
// or allocator frame was running): contexts that differ only there are the same context,
// in one row, neither new nor vanished.
TEST_CASE("differential ranking: contexts that differ only below the hot frame are one row") {
  const Profile base = infer(app_trace("1ms 11 syscall_enter name=read stack=main;work;x1\n"
                                       "3ms 11 syscall_enter name=read stack=main;work;x2\n"
                                       "4ms 11 syscall_enter name=read stack=main;work\n"),
                             {});
  const Profile slow = infer(app_trace("1ms 11 syscall_enter name=read stack=main;work;y1\n"
                                       "9ms 11 syscall_enter name=read stack=main;work;y2\n"
                                       "10ms 11 syscall_enter name=read stack=main;work;y3\n"
                                       "20ms 11 syscall_enter name=read stack=main;work\n"),
                             {});
  const auto ranked = diff_rank_paths(base.cct, slow.cct, {Mode::Conservative, 10, 0});
  REQUIRE(ranked.size() == 1);
  CHECK(ranked[0].presence == Presence::Both);
  REQUIRE(ranked[0].frames.size() == 4);  // [app];main;work and one of the y, shown
  CHECK(ranked[0].frames[2].function == "work");
  CHECK(ranked[0].costliest == 2);
  CHECK(ranked[0].merged == 5);  // x1, x2 (base), y1, y2, y3 (slow)
  // Every frame of either run is in the row: its cost is the runs' difference.
  auto own_sum = [](const Cct& cct) {
    int64_t sum = 0;
    for (NodeId v = 1; v < cct.node_count(); ++v)
      sum += static_cast<int64_t>(cct.node(v).own.get(Mode::Conservative));
    return sum;
  };
  CHECK(ranked[0].cost == own_sum(slow.cct) - own_sum(base.cct));
  CHECK(ranked[0].cost == 16 * ms);
}

// A server: thread 12 waits for work the whole run (one poll span from 0 to the end, in
// listen); thread 11 parses for `parse_ms`, then replies for 1 ms, and the run ends.
Trace server_run(int parse_ms) {
  return parse_text_trace(
      make_source("t.trace", fmt::format("causeway-trace 1\n"
                                         "process 10 comm=app\n"
                                         "thread 11 pid=10 comm=app\n"
                                         "thread 12 pid=10 comm=app\n"
                                         "0ms 12 syscall_enter name=poll stack=main;listen\n"
                                         "0ms 11 sample stack=main;parse\n"
                                         "{}ms 11 sample stack=main;parse\n"
                                         "{}ms 11 sample stack=main;reply\n"
                                         "{}ms 11 sample stack=main;reply\n"
                                         "{}ms 12 syscall_exit name=poll ret=1\n",
                                         parse_ms, parse_ms + 1, parse_ms + 2, parse_ms + 2)));
}

TEST_CASE(
    "normalised differential ranking: an idle wait that grows with the run is not a slowdown") {
  // The slow run is longer only because parse went from 1 ms to 11 ms; the listener
  // waited 3 ms in the base run and 13 ms in the slow one.
  const Profile base = infer(server_run(1), {});
  const Profile slow = infer(server_run(11), {});
  RankOptions o{Mode::Conservative, 10, 0};
  // Unscaled, the wait's growth (10 ms) ties with parse's (10 ms): a name decides.
  auto plain = diff_rank_paths(base.cct, slow.cct, o);
  REQUIRE(plain.size() == 3);
  CHECK(plain[0].cost == 10 * ms);
  CHECK(plain[1].cost == 10 * ms);
  // Scaled by the runs' totals (own times 6 ms and 26 ms), the listener's share did not
  // change, parse's grew: parse 11 - 1 x 26/6 = 6.67, less main's 1 - 26/6 = -3.33.
  o.normalize = true;
  CHECK(base_scale(base.cct, slow.cct, o.mode) == doctest::Approx(26.0 / 6.0));
  auto normalised = diff_rank_paths(base.cct, slow.cct, o);
  REQUIRE(normalised.size() == 3);
  CHECK(show(normalised) == std::vector<std::string>{"3: [app](0,2) main(-3,1) parse(6,0)",
                                                     "-3: [app](0,0) main(-3,1) listen(0,2)",
                                                     "-6: [app](0,0) main(-3,1) reply(-3,2)"});
  CHECK(normalised[0].frames.back().base_own == uint64_t(4'333'333));
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
