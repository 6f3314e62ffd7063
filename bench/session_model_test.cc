#include "bench/session_model.h"

#include <doctest/doctest.h>

#include <map>
#include <string>

namespace cw::bench {
namespace {

// Runs a session of about `events` events into one in-memory trace.
Trace generate(uint64_t events, uint64_t seed) {
  Trace trace;
  EventQueue queue;
  SessionShape shape;
  shape.events = events;
  shape.seed = seed;
  SessionModel model(shape, trace, queue);
  while (trace.events.size() < events) {
    queue.drain_before(model.next_episode_time(), trace, events - trace.events.size());
    if (trace.events.size() < events) model.run_next_episode();
  }
  trace.rebuild_indexes();
  return trace;
}

std::string kind_name(const Trace& t, const Event& e) {
  return t.schema.kind(e.kind).name;
}

uint64_t field(const Trace& t, const Event& e, const char* name) {
  return t.value(e, t.schema.field_index(e.kind, name));
}

TEST_CASE("a session of 60 000 events is sorted by time and has the seed's population") {
  const Trace t = generate(60'000, 7);
  CHECK(t.events.size() == 60'000);
  for (size_t i = 1; i < t.events.size(); ++i) REQUIRE(t.events[i - 1].ts <= t.events[i].ts);
  CHECK(t.threads.size() >= 670);
  CHECK(t.threads.size() <= 679);
  CHECK(t.processes.size() <= 126);
}

TEST_CASE("the same seed gives the same events and another seed different ones") {
  const Trace a = generate(20'000, 3), b = generate(20'000, 3), c = generate(20'000, 4);
  REQUIRE(a.events.size() == b.events.size());
  bool same = a.values == b.values;
  for (size_t i = 0; same && i < a.events.size(); ++i)
    same = a.events[i].ts == b.events[i].ts && a.events[i].tid == b.events[i].tid &&
           a.events[i].kind == b.events[i].kind;
  CHECK(same);
  CHECK(a.values != c.values);
}

TEST_CASE("threads are woken only while switched out, and only switch in after switching out") {
  const Trace t = generate(100'000, 11);
  std::map<Tid, bool> on_cpu;  // unknown until a thread's first switch event
  size_t wakeups = 0;
  for (const Event& e : t.events) {
    const std::string k = kind_name(t, e);
    if (k == "switch_in") {
      auto it = on_cpu.find(e.tid);
      if (it != on_cpu.end()) REQUIRE_MESSAGE(!it->second, "tid " << e.tid << " at " << e.ts);
      on_cpu[e.tid] = true;
    } else if (k == "switch_out") {
      on_cpu[e.tid] = false;
    } else if (k == "wakeup" || k == "wakeup_new") {
      const Tid target = static_cast<Tid>(field(t, e, "target"));
      auto it = on_cpu.find(target);
      if (it != on_cpu.end())
        REQUIRE_MESSAGE(!it->second, "woke running " << target << " at " << e.ts);
      ++wakeups;
    }
  }
  CHECK(wakeups > 5'000);
}

TEST_CASE("every received byte range was sent before on the same stream") {
  const Trace t = generate(100'000, 5);
  std::map<uint64_t, uint64_t> sent_up_to;  // object -> end of the bytes sent so far
  size_t received = 0;
  for (const Event& e : t.events) {
    const std::string k = kind_name(t, e);
    const bool send = k == "send";
    if (!send && k != "recv") continue;
    const uint64_t object = field(t, e, "object");
    const uint64_t end = field(t, e, "offset") + field(t, e, "len");
    if (send) {
      CHECK(field(t, e, "offset") == sent_up_to[object]);  // streams are written in order
      sent_up_to[object] = end;
    } else {
      REQUIRE_MESSAGE(end <= sent_up_to[object], "recv at " << e.ts << " of unsent bytes");
      ++received;
    }
  }
  CHECK(received > 2'000);
}

TEST_CASE("system calls exit in the order they entered, by name") {
  const Trace t = generate(100'000, 9);
  std::map<Tid, std::string> open;  // the thread's open syscall, "" when none
  const KindId enter = t.schema.find("syscall_enter"), exit = t.schema.find("syscall_exit");
  for (const Event& e : t.events) {
    if (e.kind != enter && e.kind != exit) continue;
    const std::string name(t.strings.get(static_cast<StrId>(field(t, e, "name"))));
    if (e.kind == enter) {
      REQUIRE_MESSAGE(open[e.tid].empty(), "tid " << e.tid << " nests " << name << " at " << e.ts);
      open[e.tid] = name;
    } else {
      // The first exit of a thread may close a call entered before the recording began.
      if (!open[e.tid].empty())
        REQUIRE_MESSAGE(open[e.tid] == name, "tid " << e.tid << " at " << e.ts);
      open[e.tid].clear();
    }
  }
}

}  // namespace
}  // namespace cw::bench
