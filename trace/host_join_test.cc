// Joining two hosts' traces: the clock offset from the messages both recorded, ids that
// collide renumbered, objects kept apart unless a message proved them shared.
#include "trace/host_join.h"

#include <doctest/doctest.h>

#include "base/source.h"
#include "trace/text_format.h"

namespace cw {
namespace {

Trace text(const std::string& body) {
  return parse_text_trace(make_source("t.trace", "causeway-trace 1\n" + body));
}

// Host A: a client (tid 100) sends a request (flow 0xf1, bytes 1000..1009) at 10 ms and
// reads the 20-byte reply (flow 0xf2) at 20 ms; it also waits on a futex at 0x1000.
const char* const kClient = R"(
process 100 comm=client
thread 100 pid=100 comm=client
10ms 100 syscall_enter name=sendto fd=3
10100us 100 send object=0xf1 offset=1000 len=10 fd=3
10200us 100 syscall_exit name=sendto ret=10
11ms 100 syscall_enter name=recvfrom fd=3
20ms 100 recv object=0xf2 offset=5000 len=20 fd=3
20ms 100 syscall_exit name=recvfrom ret=20
21ms 100 syscall_enter name=futex resource=0x1000 op=wait
)";

// Host B, its clock 5 s ahead of A's: the server (also tid 100) receives the request at
// A's 12 ms and starts its reply at A's 19 ms; it waits on a futex at 0x1000 of its own.
const char* const kServer = R"(
process 100 comm=server
thread 100 pid=100 comm=server
5011ms 100 syscall_enter name=recvfrom fd=4
5012ms 100 recv object=0xf1 offset=1000 len=10 fd=4
5012ms 100 syscall_exit name=recvfrom ret=10
5013ms 100 timer_arm timer=0x77 expires_ns=5500000000 interval_ns=0
5019ms 100 syscall_enter name=sendto fd=4
5019500us 100 send object=0xf2 offset=5000 len=20 fd=4
5019600us 100 syscall_exit name=sendto ret=20
5030ms 100 syscall_enter name=futex resource=0x1000 op=wait
)";

TEST_CASE("the messages both hosts recorded bound the clock offset from both sides") {
  const ClockAlignment a = align_clocks(text(kClient), text(kServer));
  CHECK(a.to_other == 1);
  CHECK(a.to_base == 1);
  CHECK(a.bounded());
  CHECK_FALSE(a.inconsistent());
  // A's send began at 10 ms, B received at 5012 ms; B's send began at 5019 ms, A received
  // at 20 ms: the offset is in [-5002 ms, -4999 ms].
  CHECK(a.low_ns == -5'002'000'000);
  CHECK(a.high_ns == -4'999'000'000);
  CHECK(a.offset_ns == -5'000'500'000);
  CHECK(a.shared_objects == std::unordered_set<uint64_t>{0xf1, 0xf2});
}

TEST_CASE("joined, the server's events stand on the client's clock, apart from its ids") {
  JoinedTrace j = join_traces({text(kClient), text(kServer)}, {}, {"a.cwt", "b.cwt"});
  const Trace& t = j.trace;
  CHECK(j.raised_ns == 0);
  CHECK(j.renumbered[1] == 1);  // tid 100 was the client's
  REQUIRE(t.threads.size() == 2);
  const Tid server = t.threads[1].tid;
  CHECK(server == (1u << 22));
  CHECK(t.strings.get(t.threads[1].comm) == "server");
  CHECK(t.pid_of(server) == server);
  // In time order on A's clock: the server's receive falls between A's send and reply.
  std::vector<std::string> order;
  const KindId recv = t.schema.find("recv"), send = t.schema.find("send");
  for (const Event& e : t.events)
    if (e.kind == recv || e.kind == send)
      order.push_back(std::string(t.strings.get(t.thread(e.tid)->comm)) + " " +
                      t.schema.kind(e.kind).name + " " + std::to_string(e.ts));
  CHECK(order == std::vector<std::string>{"client send 10100000", "server recv 11500000",
                                          "server send 19000000", "client recv 20000000"});
  // The flows both named stay shared; the futex words (each host's own 0x1000) do not.
  const KindId enter = t.schema.find("syscall_enter");
  const int resource = t.schema.field_index(enter, "resource");
  std::vector<uint64_t> futexes;
  for (const Event& e : t.events)
    if (e.kind == enter && t.value(e, resource) != 0) futexes.push_back(t.value(e, resource));
  REQUIRE(futexes.size() == 2);
  CHECK(futexes[0] != futexes[1]);
  for (const Event& e : t.events)
    if (e.kind == recv) CHECK((t.value(e, 0) == 0xf1 || t.value(e, 0) == 0xf2));
  // A time a field holds moves with the clock.
  const KindId arm = t.schema.find("timer_arm");
  for (const Event& e : t.events)
    if (e.kind == arm) CHECK(t.value(e, t.schema.field_index(arm, "expires_ns")) == 499'500'000);
}

TEST_CASE(
    "a trace that exchanged no message with the first is refused unless its offset is given") {
  const char* const kAlone = R"(
process 7 comm=alone
thread 7 pid=7 comm=alone
1ms 7 syscall_enter name=read fd=0
)";
  CHECK_THROWS_WITH_AS(join_traces({text(kClient), text(kAlone)}, {}, {"a.cwt", "c.cwt"}),
                       "a.cwt and c.cwt exchanged no TCP message that both recorded: nothing "
                       "aligns their clocks",
                       std::invalid_argument);
  JoinedTrace j = join_traces({text(kClient), text(kAlone)}, {0, 2'000'000});
  CHECK(j.trace.events.size() == 8);
  CHECK(j.clocks[1].offset_ns == 2'000'000);
}

TEST_CASE("shifting a clock below 0 raises every trace alike") {
  // B's clock 5 s ahead and A's events early: shifted back, none falls below 0.
  JoinedTrace j = join_traces({text(kClient), text(kServer)}, {0, -5'020'000'000});
  CHECK(j.raised_ns == 9'000'000);
  CHECK(j.trace.events.front().ts == 0);
}

}  // namespace
}  // namespace cw
