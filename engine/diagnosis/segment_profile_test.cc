#include "engine/diagnosis/segment_profile.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/diagnosis/symptom.h"
#include "engine/graph/test_support.h"

namespace cw::engine {
namespace {

using testing::load_trace;

template <class T>
std::vector<std::remove_const_t<T>> as_vector(std::span<T> list) {
  return {list.begin(), list.end()};
}

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kUs = 1'000;

const char* const kApp =
    "process 100 comm=app\n"
    "thread 101 pid=100 comm=main\n"
    "thread 102 pid=100 comm=worker\n";

// The index of the thread's event of this kind at this time.
uint32_t event_at(const Trace& t, Tid tid, uint64_t ts, std::string_view kind) {
  const KindId k = t.schema.find(kind);
  for (uint32_t i = 0; i < t.events.size(); ++i)
    if (t.events[i].tid == tid && t.events[i].ts == ts && t.events[i].kind == k) return i;
  FAIL("no " << kind << " of " << tid << " at " << ts);
  return kNoIndex;
}

// Main thread: 1 ms on CPU, then blocked 900 ms in a read, then 98.9 ms on CPU.
const std::string kBlockedRead = std::string(kApp) +
                                 "0 101 switch_in\n"
                                 "1ms 101 syscall_enter name=read fd=3\n"
                                 "1.1ms 101 switch_out state=S\n"
                                 "901.1ms 101 switch_in\n"
                                 "901.2ms 101 syscall_exit name=read ret=10\n"
                                 "902ms 101 syscall_enter name=write fd=1\n"
                                 "902.1ms 101 syscall_exit name=write ret=10\n"
                                 "1s 101 switch_out state=S\n";

TEST_CASE("a thread blocked 900 ms in a read: the block, its call and the call's return") {
  const Trace t = load_trace(kBlockedRead);
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 101, 0, 1000 * kMs);
  CHECK(p.start_ns == 0);
  CHECK(p.end_ns == 1000 * kMs);
  CHECK(p.blocked_ns == 900 * kMs);
  CHECK(p.on_cpu_ns == 100 * kMs);
  CHECK(p.runnable_ns == 0);
  CHECK(p.blocks == 1);
  CHECK(p.longest_block_ns == 900 * kMs);
  CHECK(p.longest_block_start == 1'100'000);
  CHECK(p.longest_block_call == event_at(t, 101, 1 * kMs, "syscall_enter"));
  CHECK(p.longest_block_exit == event_at(t, 101, 901'200'000, "syscall_exit"));
  CHECK(p.syscalls == 2);
  // No call entered between the read at 1 ms and the write at 902 ms.
  CHECK(p.longest_quiet_ns == 901 * kMs);
  CHECK(p.longest_gap_ns == 901 * kMs);
  const SegmentProfile none = profile_range(t, ev, 101, 0, 1 * kMs);  // no call at all
  CHECK(none.longest_quiet_ns == 1 * kMs);
  CHECK(none.longest_gap_ns == 0);
  // From the write at 902 ms to the end: quiet, but no gap between two calls.
  const SegmentProfile tail = profile_range(t, ev, 101, 901 * kMs, 1000 * kMs);
  CHECK(tail.longest_quiet_ns == 98 * kMs);
  CHECK(tail.longest_gap_ns == 0);
  CHECK(p.events == 7);  // the switch_out at 1 s is the range's end, outside it
  REQUIRE(p.by_name.size() == 2);
  // One call each: ordered by name id, and `read` was interned first.
  CHECK(t.strings.get(p.by_name[0].name) == "read");
  CHECK(t.strings.get(p.by_name[1].name) == "write");
  CHECK(p.by_name[0].count == 1);
}

TEST_CASE(
    "a read woken for nothing sleeps again in the same call: one wait, from its first sleep") {
  // The main thread blocks 300 ms in a read, is woken by a reader of the same stream draining
  // it, runs 20 us, finds nothing and sleeps 600 ms more in the same call. Its wait is the
  // call's 900 ms, and what ended it ended the second sleep.
  const Trace t = load_trace(std::string(kApp) +
                             "0 101 switch_in\n"
                             "1ms 101 syscall_enter name=read fd=3\n"
                             "1.1ms 101 switch_out state=S\n"
                             "301ms 101 switch_in\n"
                             "301.02ms 101 switch_out state=S\n"
                             "901.1ms 101 switch_in\n"
                             "901.2ms 101 syscall_exit name=read ret=10\n"
                             "910ms 101 syscall_enter name=read fd=3\n"
                             "910.1ms 101 switch_out state=S\n"
                             "950ms 101 switch_in\n"
                             "950.1ms 101 syscall_exit name=read ret=10\n"
                             "1s 101 switch_out state=S\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 101, 0, 1000 * kMs);
  CHECK(p.blocks == 3);
  CHECK(p.blocked_ns == 299'900'000 + 600'080'000 + 39'900'000);
  CHECK(p.longest_block_start == 1'100'000);
  CHECK(p.longest_block_last_start == 301'020'000);
  CHECK(p.longest_block_ns == 900 * kMs);
  CHECK(p.longest_block_call == event_at(t, 101, 1 * kMs, "syscall_enter"));
  CHECK(p.longest_block_exit == event_at(t, 101, 901'200'000, "syscall_exit"));

  SUBCASE("a sleep in state D on the way is the kernel's lock, not the wait going on") {
    const Trace d = load_trace(std::string(kApp) +
                               "0 101 switch_in\n"
                               "1ms 101 syscall_enter name=read fd=3\n"
                               "1.1ms 101 switch_out state=S\n"
                               "301ms 101 switch_in\n"
                               "301.02ms 101 switch_out state=D\n"
                               "302ms 101 switch_in\n"
                               "302.1ms 101 syscall_exit name=read ret=10\n");
    const ThreadEvents dev(d);
    const SegmentProfile q = profile_range(d, dev, 101, 0, 400 * kMs);
    CHECK(q.longest_block_start == 1'100'000);
    CHECK(q.longest_block_last_start == 1'100'000);
    CHECK(q.longest_block_ns == 299'900'000);
  }
}

TEST_CASE("a preempted thread is runnable until it gets a CPU again, not blocked") {
  const Trace t = load_trace(std::string(kApp) +
                             "0 101 switch_in\n"
                             "10ms 101 switch_out state=R\n"
                             "15ms 101 switch_in\n"
                             "20ms 101 switch_out state=S\n"
                             "30ms 101 switch_in\n"
                             "40ms 101 switch_out state=S\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 101, 0, 40 * kMs);
  CHECK(p.on_cpu_ns == 25 * kMs);
  CHECK(p.runnable_ns == 5 * kMs);
  CHECK(p.blocked_ns == 10 * kMs);
  CHECK(p.blocks == 1);
  CHECK(p.longest_block_start == 20 * kMs);
  CHECK(p.longest_block_call == kNoIndex);  // blocked outside any recorded call
  CHECK(p.longest_block_exit == kNoIndex);

  SUBCASE("a range starting while preempted counts runnable from its start") {
    const SegmentProfile q = profile_range(t, ev, 101, 12 * kMs, 17 * kMs);
    CHECK(q.runnable_ns == 3 * kMs);
    CHECK(q.on_cpu_ns == 2 * kMs);
    CHECK(q.blocked_ns == 0);
    CHECK(q.blocks == 0);
    CHECK(q.events == 1);
  }
}

TEST_CASE("a range starting while blocked counts the block from the range's start") {
  const Trace t = load_trace(kBlockedRead);
  const ThreadEvents ev(t);
  const uint32_t read = event_at(t, 101, 1 * kMs, "syscall_enter");
  const uint32_t read_exit = event_at(t, 101, 901'200'000, "syscall_exit");

  const SegmentProfile p = profile_range(t, ev, 101, 500 * kMs, 950 * kMs);
  CHECK(p.blocked_ns == 401'100'000);
  CHECK(p.on_cpu_ns == 48'900'000);
  CHECK(p.longest_block_start == 500 * kMs);
  CHECK(p.longest_block_call == read);
  CHECK(p.longest_block_exit == read_exit);
  CHECK(p.syscalls == 1);  // the write; the read was entered before the range

  SUBCASE("a range inside the block: no events, still the read and its later return") {
    const SegmentProfile q = profile_range(t, ev, 101, 500 * kMs, 600 * kMs);
    CHECK(q.blocked_ns == 100 * kMs);
    CHECK(q.on_cpu_ns == 0);
    CHECK(q.events == 0);
    CHECK(q.longest_block_call == read);
    CHECK(q.longest_block_exit == read_exit);
  }
  SUBCASE(
      "a range ending inside the block: the call has not returned in it, its exit is "
      "still found") {
    const SegmentProfile q = profile_range(t, ev, 101, 0, 300 * kMs);
    CHECK(q.blocked_ns == 298'900'000);
    CHECK(q.longest_block_call == read);
    CHECK(q.longest_block_exit == read_exit);
  }
}

TEST_CASE("a thread with no scheduler event before the range is running") {
  const Trace t = load_trace(std::string(kApp) +
                             "5ms 101 syscall_enter name=getpid\n"
                             "6ms 101 syscall_exit name=getpid\n"
                             "8ms 101 switch_out state=S\n"
                             "9ms 101 switch_in\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 101, 2 * kMs, 10 * kMs);
  CHECK(p.on_cpu_ns == 7 * kMs);
  CHECK(p.blocked_ns == 1 * kMs);
}

TEST_CASE("a thread that exited is neither blocked nor running afterwards") {
  // The worker runs 5 ms and exits (state X); the profile runs on for 2 s past it.
  const Trace t = load_trace(std::string(kApp) +
                             "0 102 switch_in\n"
                             "5ms 102 exit code=0\n"
                             "5ms 102 switch_out state=X\n"
                             "2s 101 switch_in\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 102, 0, 2000 * kMs);
  CHECK(p.on_cpu_ns == 5 * kMs);
  CHECK(p.blocked_ns == 0);
  CHECK(p.longest_block_ns == 0);
  CHECK(p.exited_ns == 5 * kMs);
  // A range that starts after the exit: nothing at all.
  const SegmentProfile after = profile_range(t, ev, 102, 10 * kMs, 2000 * kMs);
  CHECK(after.blocked_ns == 0);
  CHECK(after.on_cpu_ns == 0);
  CHECK(after.exited_ns == 5 * kMs);
}

TEST_CASE("a thread that exited, then was preempted on its way out, has exited") {
  // Its exit at 5 ms; put off the CPU (R) and back on before its last switch (X) at 7 ms.
  // A range from 6 ms finds it on the CPU by its switches, but it had ended at 5 ms.
  const Trace t = load_trace(std::string(kApp) +
                             "0 102 switch_in\n"
                             "4ms 102 syscall_enter name=getpid\n"
                             "4ms 102 syscall_exit name=getpid\n"
                             "5ms 102 exit code=0\n"
                             "5ms 102 switch_out state=R\n"
                             "6ms 102 switch_in\n"
                             "7ms 102 switch_out state=X\n"
                             "2s 101 switch_in\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 102, 6500 * kUs, 2000 * kMs);
  CHECK(p.exited_ns == 5 * kMs);
  CHECK(p.on_cpu_ns == 0);
  // Before its exit it is alive: a range from 4.5 ms sees the exit inside it.
  const SegmentProfile alive = profile_range(t, ev, 102, 4500 * kUs, 2000 * kMs);
  CHECK(alive.exited_ns == 5 * kMs);
  CHECK(alive.on_cpu_ns == 500 * kUs);
}

TEST_CASE("a missing switch event makes the time unknown, not runnable or running") {
  // Preempted at 10 ms; its switch_in was lost, so the switch_out at 50 ms comes while it
  // is off the CPU: 10..50 ms is unknown. Then a switch_in at 60 ms and another at 80 ms
  // with no switch_out between: 60..80 ms is unknown too.
  const Trace t = load_trace(std::string(kApp) +
                             "0 101 switch_in\n"
                             "10ms 101 switch_out state=R\n"
                             "50ms 101 switch_out state=S\n"
                             "60ms 101 switch_in\n"
                             "80ms 101 switch_in\n"
                             "100ms 101 switch_out state=S\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 101, 0, 100 * kMs);
  CHECK(p.runnable_ns == 0);
  CHECK(p.unknown_ns == 60 * kMs);
  CHECK(p.on_cpu_ns == 30 * kMs);
  CHECK(p.blocked_ns == 10 * kMs);
}

TEST_CASE("a switch_out the kernel never reported (state ?) leaves the state unknown") {
  // The recorder saw 101 get the CPU at 10 ms and, at 40 ms, another thread take that CPU
  // without 101's own switch away: it wrote switch_out state=? there. 101 gets a CPU again
  // at 90 ms. 40..90 ms is neither runnable nor blocked.
  const Trace t = load_trace(std::string(kApp) +
                             "0 101 switch_out state=S\n"
                             "10ms 101 switch_in\n"
                             "40ms 101 switch_out state=?\n"
                             "90ms 101 switch_in\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 101, 0, 100 * kMs);
  CHECK(p.unknown_ns == 50 * kMs);
  CHECK(p.runnable_ns == 0);
  CHECK(p.blocked_ns == 10 * kMs);
  CHECK(p.blocks == 1);
  CHECK(p.on_cpu_ns == 40 * kMs);
}

TEST_CASE("a system call whose switch went unreported counts as blocked in it") {
  // 101 enters a read at 10 ms on a CPU; at 20 ms another thread takes that CPU with no
  // switch of 101's reported (the recorder writes state ?); 101 gets a CPU again at 70 ms
  // and the read returns. As if the switch had been reported: blocked 60 ms in the read
  // from its entry, not 10 ms running and 50 ms unknown.
  const Trace t = load_trace(std::string(kApp) +
                             "0 101 switch_in\n"
                             "10ms 101 syscall_enter name=read fd=3\n"
                             "20ms 101 switch_out state=?\n"
                             "70ms 101 switch_in\n"
                             "71ms 101 syscall_exit name=read ret=1\n"
                             "80ms 101 switch_out state=S\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 101, 0, 80 * kMs);
  CHECK(p.blocked_ns == 60 * kMs);
  CHECK(p.blocks == 1);
  CHECK(p.longest_block_ns == 60 * kMs);
  CHECK(p.longest_block_start == 10 * kMs);
  CHECK(p.longest_block_call == event_at(t, 101, 10 * kMs, "syscall_enter"));
  CHECK(p.longest_block_exit == event_at(t, 101, 71 * kMs, "syscall_exit"));
  CHECK(p.on_cpu_ns == 20 * kMs);
  CHECK(p.unknown_ns == 0);

  SUBCASE("the switch_out missing altogether: a second switch_in") {
    const Trace u = load_trace(std::string(kApp) +
                               "0 101 switch_in\n"
                               "10ms 101 syscall_enter name=read fd=3\n"
                               "70ms 101 switch_in\n"
                               "71ms 101 syscall_exit name=read ret=1\n");
    const ThreadEvents ev2(u);
    const SegmentProfile q = profile_range(u, ev2, 101, 0, 80 * kMs);
    CHECK(q.blocked_ns == 60 * kMs);
    CHECK(q.longest_block_start == 10 * kMs);
    CHECK(q.on_cpu_ns == 20 * kMs);
    CHECK(q.unknown_ns == 0);
  }
  SUBCASE("a reported switch in the call: the call is told by it, as before") {
    const Trace u = load_trace(std::string(kApp) +
                               "0 101 switch_in\n"
                               "10ms 101 syscall_enter name=read fd=3\n"
                               "15ms 101 switch_out state=S\n"
                               "40ms 101 switch_in\n"
                               "50ms 101 switch_out state=?\n"
                               "70ms 101 switch_in\n"
                               "71ms 101 syscall_exit name=read ret=1\n");
    const ThreadEvents ev2(u);
    const SegmentProfile q = profile_range(u, ev2, 101, 0, 80 * kMs);
    CHECK(q.blocked_ns == 25 * kMs);
    CHECK(q.unknown_ns == 20 * kMs);
  }
}

TEST_CASE("a call whose switch went unreported, still open at the range's end, is blocked") {
  // The read of the case above, profiled over a range that ends at 50 ms, while 101 is
  // still off its CPU in it (the hang's window, which a timeout ended before the read
  // returned): its exit after the range says how it waited, with no reported switch in
  // between.
  const std::string head = std::string(kApp) +
                           "0 101 switch_in\n"
                           "10ms 101 syscall_enter name=read fd=3\n"
                           "20ms 101 switch_out state=?\n";
  const Trace t = load_trace(head +
                             "70ms 101 switch_in\n"
                             "71ms 101 syscall_exit name=read ret=1\n");
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 101, 0, 50 * kMs);
  CHECK(p.blocked_ns == 40 * kMs);
  CHECK(p.longest_block_start == 10 * kMs);
  CHECK(p.longest_block_call == event_at(t, 101, 10 * kMs, "syscall_enter"));
  CHECK(p.on_cpu_ns == 10 * kMs);
  CHECK(p.unknown_ns == 0);

  SUBCASE("the range begins inside the call, before the lost switch or after it") {
    // A step of a causal path that begins after the thread entered its wait: the call is
    // watched from the range's start.
    const SegmentProfile q = profile_range(t, ev, 101, 15 * kMs, 80 * kMs);
    CHECK(q.blocked_ns == 55 * kMs);
    CHECK(q.longest_block_start == 15 * kMs);
    CHECK(q.longest_block_call == event_at(t, 101, 10 * kMs, "syscall_enter"));
    CHECK(q.on_cpu_ns == 10 * kMs);  // after its exit at 71 ms
    CHECK(q.unknown_ns == 0);
    const SegmentProfile r = profile_range(t, ev, 101, 30 * kMs, 80 * kMs);
    CHECK(r.blocked_ns == 40 * kMs);
    CHECK(r.longest_block_start == 30 * kMs);
    CHECK(r.unknown_ns == 0);
    const SegmentProfile w = profile_range(t, ev, 101, 30 * kMs, 50 * kMs);
    CHECK(w.blocked_ns == 20 * kMs);
    CHECK(w.unknown_ns == 0);
  }
  SUBCASE("a switch of known state before the exit: unknown, as it was") {
    const Trace u = load_trace(head +
                               "60ms 101 switch_in\n"
                               "65ms 101 switch_out state=R\n"
                               "70ms 101 switch_in\n"
                               "71ms 101 syscall_exit name=read ret=1\n");
    const ThreadEvents ev2(u);
    const SegmentProfile q = profile_range(u, ev2, 101, 0, 50 * kMs);
    CHECK(q.blocked_ns == 0);
    CHECK(q.unknown_ns == 30 * kMs);
  }
  SUBCASE("the call never returns in the trace: unknown") {
    const Trace u = load_trace(head + "70ms 101 switch_in\n");
    const ThreadEvents ev2(u);
    const SegmentProfile q = profile_range(u, ev2, 101, 0, 50 * kMs);
    CHECK(q.blocked_ns == 0);
    CHECK(q.unknown_ns == 30 * kMs);
  }
}

// A logging loop recorded with held waits (record --min-wait): every 10 ms one fsync
// written in full (1.2 ms in state D), and 8 ms of waits too short to write, counted in a
// short_waits event (all of it in D). The thread never switches for the short ones.
std::string fsync_loop_with_short_waits() {
  std::string text = std::string(kApp) + "0 102 switch_in\n";
  for (int i = 0; i < 20; ++i) {
    const uint64_t at = i * 10 * kMs;
    text += std::to_string(at + 100 * kUs) + " 102 syscall_enter name=fsync fd=3\n";
    text += std::to_string(at + 110 * kUs) + " 102 switch_out state=D\n";
    text += std::to_string(at + 1310 * kUs) + " 102 switch_in\n";
    text += std::to_string(at + 1320 * kUs) + " 102 syscall_exit name=fsync ret=0\n";
    text += std::to_string(at + 9900 * kUs) +
            " 102 short_waits since=" + std::to_string(at + 1500 * kUs) +
            " count=40 total_ns=8000000 uninterruptible_ns=8000000 waker=0\n";
  }
  return text;
}

TEST_CASE("waits counted too short to write are blocked time, not time on a CPU") {
  const Trace t = load_trace(fsync_loop_with_short_waits());
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 102, 0, 200 * kMs);
  CHECK(p.blocked_ns == 20 * (1200 * kUs + 8 * kMs));
  CHECK(p.uninterruptible_ns == p.blocked_ns);
  CHECK(p.on_cpu_ns == 200 * kMs - p.blocked_ns);
  CHECK(p.blocks == 20 * 41);
  CHECK(p.longest_block_ns == 1200 * kUs);  // a short wait is never the longest block
  // Most of the loop's time is the disk's: it waits, it does not yield (the Argus paper's
  // kinds), as it would be with every wait written.
  CHECK(classify(p) == HangKind::LongWait);
  // A range that takes half of a summary's span takes half of its waits.
  const SegmentProfile half = profile_range(t, ev, 102, 5700 * kUs, 9900 * kUs + 1);
  CHECK(half.blocked_ns == 4 * kMs);
  CHECK(half.blocks == 20);
}

// A busy thread preempted often and briefly (record --min-wait holds preemptions as it
// holds waits): each 10 ms, 2 ms of short preemptions and 1 ms of short sleeps counted in
// one short_waits event, 30 waits of which 10 preemptions.
TEST_CASE("preemptions counted too short to write are runnable time, not blocks") {
  std::string text = std::string(kApp) + "0 102 switch_in\n";
  for (int i = 0; i < 10; ++i) {
    const uint64_t at = i * 10 * kMs;
    text += std::to_string(at + 9900 * kUs) +
            " 102 short_waits since=" + std::to_string(at + 100 * kUs) +
            " count=30 total_ns=3000000 uninterruptible_ns=0 waker=0 preempted=10 "
            "runnable_ns=2000000\n";
  }
  const Trace t = load_trace(text);
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 102, 0, 100 * kMs);
  CHECK(p.runnable_ns == 10 * 2 * kMs);
  CHECK(p.blocked_ns == 10 * 1 * kMs);
  CHECK(p.on_cpu_ns == 100 * kMs - 30 * kMs);
  CHECK(p.blocks == 10 * 20);
  CHECK(p.uninterruptible_ns == 0);
  // A summary that does not give them (written before preemptions were held: they read
  // as 0) counts every wait as slept, as before.
  std::string old = std::string(kApp) + "0 102 switch_in\n" +
                    "9900000 102 short_waits since=100000 count=30 total_ns=3000000 "
                    "uninterruptible_ns=0 waker=0\n";
  const Trace u = load_trace(old);
  const ThreadEvents ev2(u);
  const SegmentProfile q = profile_range(u, ev2, 102, 0, 10 * kMs);
  CHECK(q.runnable_ns == 0);
  CHECK(q.blocked_ns == 3 * kMs);
  CHECK(q.blocks == 30);
}

TEST_CASE("a syscall loop: calls counted by name, most frequent first") {
  std::string text = std::string(kApp) + "0 102 switch_in\n";
  for (int i = 0; i < 20; ++i) {
    const uint64_t ts = 1000 + i * 100;
    text += std::to_string(ts) + " 102 syscall_enter name=sched_yield\n";
    text += std::to_string(ts + 10) + " 102 syscall_exit name=sched_yield\n";
    if (i % 7 == 0) {
      text += std::to_string(ts + 20) + " 102 syscall_enter name=getpid\n";
      text += std::to_string(ts + 30) + " 102 syscall_exit name=getpid\n";
    }
  }
  text += "5000 102 flag_read flag=ready value=0\n";
  text += "6000 101 flag_write flag=ready value=1\n";  // another thread's: not counted
  text += "7000 102 flag_read flag=ready value=1\n";
  const Trace t = load_trace(text);
  const ThreadEvents ev(t);
  const SegmentProfile p = profile_range(t, ev, 102, 0, 10000);
  CHECK(p.syscalls == 23);
  REQUIRE(p.by_name.size() == 2);
  CHECK(t.strings.get(p.by_name[0].name) == "sched_yield");
  CHECK(p.by_name[0].count == 20);
  CHECK(t.strings.get(p.by_name[1].name) == "getpid");
  CHECK(p.by_name[1].count == 3);
  CHECK(p.flag_events == 2);
  CHECK(p.on_cpu_ns == 10000);
  CHECK(p.blocks == 0);
  CHECK(p.longest_block_call == kNoIndex);
}

TEST_CASE("ThreadEvents indexes only the requested threads, each in time order") {
  const Trace t = load_trace(std::string(kApp) +
                             "1 101 switch_in\n"
                             "2 102 switch_in\n"
                             "3 101 syscall_enter name=read\n"
                             "4 102 switch_out state=S\n"
                             "5 101 syscall_exit name=read\n");
  const ThreadEvents only(t, {102});
  CHECK(only.of(101).empty());
  CHECK(as_vector(only.of(102)) == std::vector<uint32_t>{1, 3});
  CHECK(as_vector(only.switches_of(102)) == std::vector<uint32_t>{1, 3});
  CHECK(only.syscalls_of(102).empty());

  const ThreadEvents all(t);
  CHECK(as_vector(all.tids()) == std::vector<Tid>{101, 102});
  CHECK(as_vector(all.of(101)) == std::vector<uint32_t>{0, 2, 4});
  CHECK(as_vector(all.syscalls_of(101)) == std::vector<uint32_t>{2, 4});
  CHECK(all.of(999).empty());
}

TEST_CASE(
    "profile_segment profiles a segment's time; the thread's last one counts its last "
    "event") {
  auto b = testing::build("split wait { at syscall_enter where name == \"read\" }\n", kBlockedRead);
  REQUIRE(testing::segments(b, 101) == 2);
  const ThreadEvents ev(b.trace);
  const auto* th = b.graph().thread_segments(101);
  const SegmentProfile first = profile_segment(b.trace, ev, b.graph(), th->begin);
  CHECK(first.start_ns == 0);
  CHECK(first.end_ns == 1 * kMs);
  CHECK(first.on_cpu_ns == 1 * kMs);
  CHECK(first.events == 1);

  const SegmentProfile second = profile_segment(b.trace, ev, b.graph(), th->begin + 1);
  CHECK(second.start_ns == 1 * kMs);
  CHECK(second.end_ns == 1000 * kMs);
  CHECK(second.blocked_ns == 900 * kMs);
  CHECK(second.events == 7);  // including the switch_out at 1 s
}

}  // namespace
}  // namespace cw::engine

namespace cw::engine {
namespace {

TEST_CASE("ThreadEvents on several CPUs: the same lists as on one, every event of every thread") {
  // 400 k events of 7 threads (one the thread table does not name), interleaved unevenly,
  // enough for several ranges of events.
  Trace t;
  for (Tid tid = 1; tid <= 6; ++tid) t.threads.push_back({tid * 10, 5, 0, false});
  t.rebuild_indexes();
  const KindId enter = t.schema.find("syscall_enter"), out = t.schema.find("switch_out"),
               marker = t.schema.find("marker");
  for (uint32_t i = 0; i < 400'000; ++i) {
    const Tid tid = (i * 7919u % 13u) < 6 ? (i * 7919u % 13u + 1) * 10 : 99;
    const KindId kind = i % 3 == 0 ? enter : i % 3 == 1 ? out : marker;
    t.add_event(i, tid, kind);
  }
  auto lists = [&](const char* threads) {
    setenv("CAUSEWAY_THREADS", threads, 1);
    const ThreadEvents ev(t);
    unsetenv("CAUSEWAY_THREADS");
    std::vector<std::vector<uint32_t>> out;
    for (Tid tid : ev.tids()) {
      out.push_back(as_vector(ev.of(tid)));
      out.push_back(as_vector(ev.switches_of(tid)));
      out.push_back(as_vector(ev.syscalls_of(tid)));
    }
    return std::pair{as_vector(ev.tids()), out};
  };
  const auto [tids, serial] = lists("1");
  CHECK(tids == std::vector<Tid>{10, 20, 30, 40, 50, 60, 99});
  size_t total = 0;
  for (size_t i = 0; i < serial.size(); i += 3) {
    total += serial[i].size();
    CHECK(std::is_sorted(serial[i].begin(), serial[i].end()));
  }
  CHECK(total == t.events.size());
  for (const char* threads : {"2", "3", "8"}) {
    const auto [p_tids, parallel] = lists(threads);
    CHECK(p_tids == tids);
    CHECK(parallel == serial);
  }
}

}  // namespace
}  // namespace cw::engine
