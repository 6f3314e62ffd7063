// How the builder applies rules that choose between other rules' events: `disable`, split
// priorities, `cut SPAN` (a cut made at a block, placed at the call's entry) and a link's
// from_where/to_where with a join on a span's field.
#include <doctest/doctest.h>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::build;
using testing::cuts;
using testing::edges;
using Strings = std::vector<std::string>;

const char* const kThread =
    "process 100 comm=app\n"
    "thread 101 pid=100 comm=a\n";

// A stdlib-like pack "base" and a user pack that requires it; built on `trace`.
testing::Built build_two(const std::string& user_body, const std::string& trace) {
  auto base = make_source("base.cw",
                          "pack base { version \"1.0.0\" }\n"
                          "split wait.entry { at syscall_enter where name == \"read\" }\n");
  auto user = make_source("user.cw", "pack user { version \"1.0.0\" requires base }\n" + user_body);
  auto r = rules::load_sources({base, user});
  REQUIRE_MESSAGE(r.ok(), r.render());
  testing::Built b{testing::load_trace(trace), std::move(r.rules), {}};
  b.result = build_graph(b.trace, b.rules);
  return b;
}

const std::string kRead = std::string(kThread) +
                          "1000 101 syscall_enter name=getpid\n"
                          "2000 101 syscall_enter name=read fd=3\n";

}  // namespace

TEST_CASE("a user split with priority names the cut a stdlib split also makes") {
  auto b =
      build_two("split idle { at syscall_enter where name == \"read\" loop priority 5 }\n", kRead);
  CHECK(cuts(b, 101) == Strings{"2000 user/idle"});
  const Graph& g = b.graph();
  CHECK(g.segments[g.thread_segments(101)->begin + 1].cut_rule.kind == RuleKind::Split);
  // Without the priority, the stdlib rule, loaded first, names it.
  auto plain = build_two("split idle { at syscall_enter where name == \"read\" loop }\n", kRead);
  CHECK(cuts(plain, 101) == Strings{"2000 base/wait.entry"});
}

TEST_CASE("a disabled rule makes no cuts; the rule that disabled it does") {
  auto b = build_two(
      "disable base/wait.entry\n"
      "split idle { at syscall_enter where name == \"read\" and fd == 4 loop }\n",
      kRead);
  CHECK(cuts(b, 101).empty());
}

TEST_CASE("cut SPAN: a call is cut at its entry only once it blocks inside") {
  auto b = build(
      "split wait { at switch_out where state != \"R\" and syscall.name == \"read\" cut syscall "
      "}\n",
      std::string(kThread) +
          "1000 101 syscall_enter name=getpid\n"
          "1500 101 syscall_exit name=getpid\n"
          "2000 101 syscall_enter name=read fd=3\n"  // finds its data: no cut
          "2500 101 syscall_exit name=read ret=4\n"
          "3000 101 syscall_enter name=read fd=3\n"  // preempted, not blocked: no cut
          "3100 101 switch_out state=R\n"
          "3200 101 switch_in\n"
          "3500 101 syscall_exit name=read ret=4\n"
          "4000 101 syscall_enter name=read fd=3\n"  // blocks twice: one cut at its entry
          "4100 101 switch_out state=S\n"
          "4200 101 switch_in\n"
          "4300 101 switch_out state=S\n"
          "4400 101 switch_in\n"
          "4500 101 syscall_exit name=read ret=4\n");
  CHECK(cuts(b, 101) == Strings{"4000 t/wait"});
}

TEST_CASE("a link's from_where and to_where choose its ends before pairing; joins reach spans") {
  // A release pairs with the next successful acquire of the same resource: the failed
  // acquire between them is not an effect, so `pick next` does not stop at it.
  auto b = build(
      "link release {\n"
      "  from syscall_enter\n"
      "  from_where name == \"unlock\"\n"
      "  to syscall_exit\n"
      "  to_where ret == 0 and syscall.name == \"lock\"\n"
      "  join from.resource == to.syscall.resource\n"
      "  pick next\n"
      "}\n"
      "edge e { link release strength strong kind lock }\n",
      "process 100 comm=app\n"
      "thread 101 pid=100 comm=a\n"
      "thread 102 pid=100 comm=b\n"
      "1000 102 syscall_enter name=unlock resource=7\n"
      "1100 102 syscall_exit name=unlock ret=0\n"
      "2000 101 syscall_enter name=lock resource=8\n"  // another resource
      "2100 101 syscall_exit name=lock ret=0\n"
      "3000 101 syscall_enter name=lock resource=7\n"  // fails
      "3100 101 syscall_exit name=lock ret=-11\n"
      "4000 101 syscall_enter name=lock resource=7\n"
      "4100 101 syscall_exit name=lock ret=0\n");
  CHECK(edges(b, 102, 101) == Strings{"lock strong t/e 1000->4100"});
}

}  // namespace cw::engine
