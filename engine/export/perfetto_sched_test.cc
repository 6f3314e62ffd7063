#include "engine/export/perfetto_sched.h"

#include <doctest/doctest.h>

#include <map>

#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using Bundle = perfetto::protos::FtraceEventBundle;

// The bundles by CPU, timestamps made absolute again.
struct Columns {
  std::vector<uint64_t> ts;
  std::vector<int64_t> state;
  std::vector<int32_t> next;
  std::vector<std::string> comm;
  std::vector<uint64_t> wake_ts;
  std::vector<int32_t> wake_pid, wake_cpu;
};

std::map<uint32_t, Columns> sched_of(const Trace& trace, std::vector<std::string>* notes) {
  perfetto::protos::Trace out;
  add_compact_sched(trace, 7, out, notes);
  std::map<uint32_t, Columns> by_cpu;
  for (const auto& p : out.packet()) {
    REQUIRE(p.trusted_packet_sequence_id() == 7);
    const auto& c = p.ftrace_events().compact_sched();
    Columns& col = by_cpu[p.ftrace_events().cpu()];
    uint64_t t = 0;
    for (int i = 0; i < c.switch_timestamp_size(); ++i) {
      t += c.switch_timestamp(i);
      col.ts.push_back(t);
      col.state.push_back(c.switch_prev_state(i));
      col.next.push_back(c.switch_next_pid(i));
      col.comm.push_back(c.intern_table(int(c.switch_next_comm_index(i))));
    }
    t = 0;
    for (int i = 0; i < c.waking_timestamp_size(); ++i) {
      t += c.waking_timestamp(i);
      col.wake_ts.push_back(t);
      col.wake_pid.push_back(c.waking_pid(i));
      col.wake_cpu.push_back(c.waking_target_cpu(i));
    }
  }
  return by_cpu;
}

TEST_CASE("compact_sched: switches per CPU, idle between, wake-ups with the CPU woken onto") {
  // Thread 1 runs on CPU 0 and sleeps; thread 2 runs on CPU 1, wakes 1 and leaves CPU 1
  // preempted; 1 gets CPU 1, then 3 comes onto CPU 0 from idle.
  const Trace trace = testing::load_trace(R"(
process 1 comm=p
thread 1 pid=1 comm=one
thread 2 pid=1 comm=two
thread 3 pid=1 comm=three
10ns 1 switch_out state=S cpu=0
20ns 2 wakeup target=1 cpu=1
30ns 2 switch_out state=R cpu=1
30ns 1 switch_in cpu=1
40ns 3 switch_in cpu=0
50ns 1 switch_out state=D cpu=1
)");
  std::vector<std::string> notes;
  auto cpus = sched_of(trace, &notes);
  CHECK(notes.empty());
  REQUIRE(cpus.size() == 2);
  const Columns& c0 = cpus[0];
  // Its first switch tells Perfetto who was on the CPU; then 1 leaves for idle; 3 comes.
  CHECK(c0.ts == std::vector<uint64_t>{10, 10, 40});
  CHECK(c0.next == std::vector<int32_t>{1, 0, 3});
  CHECK(c0.state == std::vector<int64_t>{0, 0x1, 0});
  CHECK(c0.comm == std::vector<std::string>{"one", "", "three"});
  const Columns& c1 = cpus[1];
  CHECK(c1.ts == std::vector<uint64_t>{30, 30, 50});
  CHECK(c1.next == std::vector<int32_t>{2, 1, 0});
  CHECK(c1.state == std::vector<int64_t>{0, 0, 0x2});
  CHECK(c1.wake_ts == std::vector<uint64_t>{20});
  CHECK(c1.wake_pid == std::vector<int32_t>{1});
  CHECK(c1.wake_cpu == std::vector<int32_t>{1});
}

TEST_CASE("compact_sched: two threads on one CPU at once are said, not hidden") {
  // No cpu= anywhere: everything on CPU 0, where 1 and 2 overlap.
  const Trace trace = testing::load_trace(R"(
thread 1 pid=1 comm=one
thread 2 pid=2 comm=two
10ns 1 switch_in
20ns 2 switch_in
30ns 1 switch_out state=Q
)");
  std::vector<std::string> notes;
  sched_of(trace, &notes);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].starts_with("2 context switches found another recorded thread still on the CPU"));
  CHECK(notes[1] ==
        "1 switch_out event had a task state with no kernel code ('Q'); written as S (sleeping)");
}

}  // namespace
}  // namespace cw::engine
