#include "trace/perf_script.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

#include "base/temp_dir.h"
#include "trace/binary_format.h"

namespace cw {
namespace {

Trace parse(const std::string& text, std::vector<std::string>* notes = nullptr) {
  return parse_perf_script(make_source("out.txt", text), notes);
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const DiagnosticError& e) {
    return e.what();
  }
  return "no error";
}

std::string kind_of(const Trace& t, const Event& e) {
  return t.schema.kind(e.kind).name;
}
uint64_t field(const Trace& t, const Event& e, std::string_view name) {
  const int i = t.schema.field_index(e.kind, name);
  REQUIRE(i >= 0);
  return t.value(e, i);
}
std::string str_field(const Trace& t, const Event& e, std::string_view name) {
  return std::string(t.strings.get(static_cast<StrId>(field(t, e, name))));
}
// The stack's frames, innermost first: the symbol, or 0xADDR when it has none.
std::vector<std::string> frames(const Trace& t, const Event& e) {
  std::vector<std::string> out;
  const Stack& s = t.stacks.at(e.stack);
  for (size_t i = 0; i < s.ips.size(); ++i) {
    const StrId sym = i < s.symbols.size() ? s.symbols[i] : 0;
    out.push_back(sym ? std::string(t.strings.get(sym)) : fmt::format("0x{:x}", s.ips[i]));
  }
  return out;
}

// `perf record -g -e cpu-clock -e sched:sched_switch ...` then `perf script` (perf 6.1),
// trimmed: a sample, a switch with its kernel frames, a thread whose name has a blank.
const char* const kSamples =
    "t 17550 11828.735917:    1001001              cpu-clock: \n"
    "\t            117f burn+0x36 (/tmp/pi/t)\n"
    "\t            11b6 fast_part+0xe (/tmp/pi/t)\n"
    "\t            11e9 main+0xd (/tmp/pi/t)\n"
    "\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\n"
    "t 17550 [000] 11828.738495:     sched:sched_switch: prev_comm=t prev_pid=17550 "
    "prev_prio=120 prev_state=S ==> next_comm=my worker next_pid=17551 next_prio=120\n"
    "\tffffffff821facd8 __schedule+0x618 ([kernel.kallsyms])\n"
    "\tffffffff821fb643 schedule+0x23 ([kernel.kallsyms])\n"
    "\t           cf545 clock_nanosleep@GLIBC_2.2.5+0x65 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\t    7fcc1f1668a8 [unknown] ([unknown])\n"
    "\t           27304 __libc_start_main_impl+0x84 (inlined)\n"
    "\n"
    "my worker 17551 [001] 11828.738500:    1001001              cpu-clock: \n"
    "\t            1200 std::vector<int, std::allocator<int> >::size() const+0x4 (/tmp/pi/t)\n"
    "\t            1300 work(void*)+0x10 (/memfd:jit (deleted))\n"
    "\n";

TEST_CASE(
    "samples and their call chains: threads, names with blanks, user frames innermost first") {
  Trace t = parse(kSamples);
  REQUIRE(t.events.size() == 4);  // sample, switch_out, switch_in, sample

  const Event& sample = t.events[0];
  CHECK(kind_of(t, sample) == "sample");
  CHECK(sample.tid == 17550);
  CHECK(sample.ts == 11828735917000ull);
  CHECK(str_field(t, sample, "event") == "cpu-clock");
  CHECK(field(t, sample, "period") == 1001001);
  CHECK(frames(t, sample) ==
        std::vector<std::string>{"burn", "fast_part", "main", "__libc_start_call_main"});
  CHECK(t.stacks[sample.stack].ips.front() == 0x117f);

  const Event& out = t.events[1];
  CHECK(kind_of(t, out) == "switch_out");
  CHECK(out.tid == 17550);
  CHECK(out.cpu == 0);
  CHECK(str_field(t, out, "state") == "S");
  // The kernel's frames are left out; the glibc version and the offset are not part of
  // the name; an unknown frame keeps its address; an inlined frame is a frame.
  CHECK(frames(t, out) ==
        std::vector<std::string>{"clock_nanosleep", "0x7fcc1f1668a8", "__libc_start_main_impl"});

  const Event& in = t.events[2];
  CHECK(kind_of(t, in) == "switch_in");
  CHECK(in.tid == 17551);
  CHECK(in.stack == 0);

  const Event& worker = t.events[3];
  CHECK(worker.cpu == 1);
  CHECK(frames(t, worker) ==
        std::vector<std::string>{"std::vector<int, std::allocator<int> >::size() const",
                                 "work(void*)"});

  REQUIRE(t.thread(17551) != nullptr);
  CHECK(t.strings.get(t.thread(17551)->comm) == "my worker");
  REQUIRE(t.thread(17550) != nullptr);
  CHECK(t.strings.get(t.thread(17550)->comm) == "t");
  // Without process ids, each thread is a process of its own.
  CHECK(t.pid_of(17551) == 17551);
  REQUIRE(t.process(17550) != nullptr);
  CHECK(t.strings.get(t.process(17550)->comm) == "t");
}

TEST_CASE("the same call chain is one stack") {
  const std::string chain = "\t1 a+0x1 (x)\n\t2 main+0x2 (x)\n\n";
  Trace t = parse("t 5 1.000001: 1 cpu-clock:\n" + chain +
                  "t 5 1.000002: 1 cpu-clock:\n\t9 a+0x9 (x)\n\t2 main+0x2 (x)\n\n" +
                  "t 5 1.000003: 1 cpu-clock:\n" + chain);
  REQUIRE(t.events.size() == 3);
  CHECK(t.events[0].stack == t.events[2].stack);
  CHECK(t.events[0].stack != t.events[1].stack);  // another address: another stack
  CHECK(t.stacks.size() == 3);
}

TEST_CASE("PID/TID and task events put threads in their processes") {
  Trace t = parse(
      "thr 18047 11870.714728: PERF_RECORD_COMM exec: thr:18047/18047\n"
      "thr 18047 [000] 11870.715705: sched:sched_process_fork: comm=thr pid=18047 "
      "child_comm=thr child_pid=18049\n"
      "thr 18047 11870.715701: PERF_RECORD_FORK(18047:18049):(18047:18047)\n"
      "my worker 18049 11870.727657: PERF_RECORD_COMM: my worker:18047/18049\n"
      "my worker 18049 11870.728636:    1001001 cpu-clock: \n"
      "\t1 worker+0x1 (/tmp/thr)\n"
      "\n"
      "thr 4000/4001 5.000000: 1001001 cpu-clock: \n"
      "\t1 other+0x1 (/tmp/other)\n");
  CHECK(t.pid_of(18049) == 18047);
  CHECK(t.pid_of(4001) == 4000);
  REQUIRE(t.process(18047) != nullptr);
  CHECK(t.strings.get(t.process(18047)->comm) == "thr");
  REQUIRE(t.events.size() == 3);
  const Event& fork = t.events[1];  // by time: after the sample at 5 s
  CHECK(kind_of(t, fork) == "fork");
  CHECK(field(t, fork, "child") == 18049);
  CHECK(field(t, fork, "child_pid") == 18047);
  CHECK(field(t, fork, "thread") == 1);
}

TEST_CASE("system calls: raw_syscalls by number, syscalls:sys_* by name, with fd and count") {
  Trace t = parse(
      "t 9 [000] 1.000000: raw_syscalls:sys_enter: NR 230 (1, 0, 7ffd10de22ec, 0, 0, 0)\n"
      "\t10 nanosleep_loop+0x4 (/t)\n"
      "\n"
      "t 9 [000] 1.500000:  raw_syscalls:sys_exit: NR 230 = -4\n"
      "\t10 nanosleep_loop+0x4 (/t)\n"
      "\n"
      "t 9 [000] 2.000000: raw_syscalls:sys_enter: NR 99999 (0, 0, 0, 0, 0, 0)\n"
      "\n"
      "t 9 [000] 3.000000: syscalls:sys_enter_read: fd: 0x00000003, buf: 0x7fff2c781e68, "
      "count: 0x00000340\n"
      "t 9 [000] 3.000002: syscalls:sys_exit_read: 0x340\n"
      "t 9 [000] 3.000003: syscalls:sys_enter_openat: dfd: 0xffffff9c, filename: 0x1, flags: "
      "0x0, mode: 0x0\n"
      "t 9 [000] 3.000004: syscalls:sys_enter_fstat: fd: 0xffffff9c, statbuf: 0x1\n");
  REQUIRE(t.events.size() == 7);
  CHECK(kind_of(t, t.events[0]) == "syscall_enter");
  CHECK(str_field(t, t.events[0], "name") == "clock_nanosleep");
  CHECK(static_cast<int64_t>(field(t, t.events[0], "fd")) == -1);
  CHECK(t.events[0].stack != 0);
  CHECK(kind_of(t, t.events[1]) == "syscall_exit");
  CHECK(str_field(t, t.events[1], "name") == "clock_nanosleep");
  CHECK(static_cast<int64_t>(field(t, t.events[1], "ret")) == -4);
  CHECK(str_field(t, t.events[2], "name") == "syscall_99999");
  CHECK(t.events[2].stack == 0);
  CHECK(str_field(t, t.events[3], "name") == "read");
  CHECK(field(t, t.events[3], "fd") == 3);
  CHECK(field(t, t.events[3], "count") == 0x340);
  CHECK(kind_of(t, t.events[4]) == "syscall_exit");
  CHECK(field(t, t.events[4], "ret") == 0x340);
  CHECK(str_field(t, t.events[5], "name") == "openat");
  CHECK(static_cast<int64_t>(field(t, t.events[6], "fd")) == -100);  // a C int's 32 bits
}

TEST_CASE("wake-ups: sched_waking stands for the wake-up, sched_wakeup only without it") {
  const std::string wakeup =
      "a 10 [000] 1.000000: sched:sched_wakeup: comm=b c pid=11 prio=120 target_cpu=001\n";
  const std::string waking =
      "a 10 [000] 0.999999: sched:sched_waking: comm=b c pid=11 prio=120 target_cpu=001\n";
  Trace only = parse(wakeup);
  REQUIRE(only.events.size() == 1);
  CHECK(kind_of(only, only.events[0]) == "wakeup");
  CHECK(field(only, only.events[0], "target") == 11);

  std::vector<std::string> notes;
  Trace both = parse(waking + wakeup, &notes);
  REQUIRE(both.events.size() == 1);
  CHECK(both.events[0].ts == 999999000ull);
  CHECK(std::find(notes.begin(), notes.end(),
                  "1 sched_wakeup events left out: sched_waking was recorded too") != notes.end());

  Trace fresh =
      parse("a 10 [000] 1.0: sched:sched_wakeup_new: comm=a pid=12 prio=120 target_cpu=000\n");
  CHECK(kind_of(fresh, fresh.events[0]) == "wakeup_new");
}

TEST_CASE("a sched_switch's next thread gets a switch_in only if perf followed that thread") {
  Trace t = parse(
      "a 10 [000] 1.000000: sched:sched_switch: prev_comm=a prev_pid=10 prev_prio=120 "
      "prev_state=R+ ==> next_comm=kworker/0:1 next_pid=99 next_prio=120\n"
      "a 10 [000] 2.000000: sched:sched_switch: prev_comm=a prev_pid=10 prev_prio=120 "
      "prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120\n");
  REQUIRE(t.events.size() == 2);
  CHECK(kind_of(t, t.events[0]) == "switch_out");
  CHECK(str_field(t, t.events[0], "state") == "R");
  CHECK(str_field(t, t.events[1], "state") == "D");
  CHECK(t.thread(99) == nullptr);
}

TEST_CASE("other events are samples; without -g the sample's one frame is on its line") {
  Trace t = parse(
      "               t 18179 11886.887847:    1001001 cpu-clock:      564538812183 burn+0x3a "
      "(/tmp/pi/t)\n"
      "               t 18179 11886.888000:    1 block:block_rq_issue: 8,0 W 4096 () 1 + 8 [t]\n"
      "               t 18179 11886.889000: sched:sched_process_exec: filename=/bin/my prog "
      "pid=18179 old_pid=18179\n");
  REQUIRE(t.events.size() == 3);
  CHECK(kind_of(t, t.events[0]) == "sample");
  CHECK(frames(t, t.events[0]) == std::vector<std::string>{"burn"});
  CHECK(t.stacks[t.events[0].stack].ips[0] == 0x564538812183ull);
  CHECK(kind_of(t, t.events[1]) == "sample");
  CHECK(str_field(t, t.events[1], "event") == "block:block_rq_issue");
  CHECK(t.events[1].stack == 0);
  CHECK(kind_of(t, t.events[2]) == "exec");
  CHECK(str_field(t, t.events[2], "path") == "/bin/my prog");
  CHECK(t.strings.get(t.thread(18179)->comm) == "t");
}

TEST_CASE("comments, CRLF line ends and --ns times") {
  Trace t = parse(
      "# ========\r\n# captured on    : today\r\n# ========\r\n#\r\n"
      "t 5 [003] 12.123456789: 1 cpu-clock:\r\n\t1 a+0x1 (x)\r\n\r\n");
  REQUIRE(t.events.size() == 1);
  CHECK(t.events[0].ts == 12123456789ull);
  CHECK(t.events[0].cpu == 3);
  CHECK(frames(t, t.events[0]) == std::vector<std::string>{"a"});
}

TEST_CASE("bad input is an error at its line and column, with the line and a caret") {
  CHECK(error_of("\tffff a+0x1 (x)\n") ==
        "out.txt:1:1: error: a call-chain frame (a line starting with a tab) with no event line "
        "before it\n"
        "  \tffff a+0x1 (x)\n"
        "  ^\n");
  CHECK(error_of("t 5 1.0: 1 cpu-clock:\n\t1 a (x)\n\tzz12 b (x)\n") ==
        "out.txt:3:2: error: expected the frame's address in hexadecimal, not 'zz12'\n"
        "  \tzz12 b (x)\n"
        "  \t^~~~\n");
  CHECK(error_of("t 5 1.0: 1 cpu-clock:\nhello world\n") ==
        "out.txt:2:1: error: expected an event line 'COMM TID [CPU] SECONDS.MICROSECONDS: "
        "[PERIOD] EVENT: ...' (perf script's default fields)\n"
        "  hello world\n"
        "  ^~~~~~~~~~~\n");
  CHECK(error_of("t 5 1.0: 1 cpu-clock\n") ==
        "out.txt:1:12: error: expected the event's name ending in ':', not 'cpu-clock'\n"
        "  t 5 1.0: 1 cpu-clock\n"
        "             ^~~~~~~~~\n");
  CHECK(error_of("t 5 1.0: 12\n") ==
        "out.txt:1:12: error: expected the event's name after the time\n"
        "  t 5 1.0: 12\n"
        "             ^\n");
  // The payload's error is on the event's line, also when its call chain came between.
  CHECK(error_of("t 5 [000] 1.0: sched:sched_switch: prev_comm=t prev_state=S\n\t1 a (x)\n\n") ==
        "out.txt:1:36: error: sched:sched_switch: expected 'prev_pid=' and a thread id\n"
        "  t 5 [000] 1.0: sched:sched_switch: prev_comm=t prev_state=S\n"
        "                                     ^~~~~~~~~~~~~~~~~~~~~~~~\n");
  CHECK(error_of("t 5 [000] 1.0: raw_syscalls:sys_enter: NR x (0)\n") ==
        "out.txt:1:40: error: raw_syscalls:sys_enter: expected 'NR' and the system call number\n"
        "  t 5 [000] 1.0: raw_syscalls:sys_enter: NR x (0)\n"
        "                                         ^~~~~~~~\n");
  CHECK(error_of("t 99999999999 1.0: 1 cpu-clock:\n").starts_with("out.txt:1:1: error:"));
  CHECK(error_of("# only a comment\n\n") ==
        "out.txt:1:1: error: no events: perf script output starts with a line 'COMM TID [CPU] "
        "SECONDS: EVENT: ...'\n"
        "  # only a comment\n"
        "  ^\n");
  CHECK(error_of("").starts_with("out.txt:1:1: error: no events"));
}

TEST_CASE("perf script output is told from the other forms by its first event line") {
  CHECK(looks_like_perf_script(kSamples));
  CHECK(looks_like_perf_script("# header\n#\n   swapper     0 [000]  0.000000: PERF_RECORD_X"));
  CHECK(looks_like_perf_script("t 4000/4001 5.000000: 1001001 cpu-clock: \n"));
  CHECK_FALSE(looks_like_perf_script("causeway-trace 1\n1 101 switch_in\n"));
  CHECK_FALSE(looks_like_perf_script(""));
  CHECK_FALSE(looks_like_perf_script("# comments only\n"));
  CHECK_FALSE(looks_like_perf_script("\t1 a (x)\nt 5 1.0: 1 cpu-clock:\n"));
  CHECK_FALSE(looks_like_perf_script("t 5 1.0:\n"));  // nothing after the time
  CHECK_FALSE(looks_like_perf_script("hello world\n"));
}

TEST_CASE("load_trace reads perf script output by its content, or when told to") {
  TempDir dir;
  dir.write("out.txt", kSamples);
  Trace t;
  ReadReport r = load_trace(dir.file("out.txt"), t);
  CHECK(t.events.size() == 4);
  CHECK(r.events_read == 4);
  CHECK(!r.notes.empty());  // no process ids

  // A perf script file with something else first is read only when told which it is.
  dir.write("odd.txt", std::string("junk first\n") + kSamples);
  Trace odd;
  CHECK_THROWS_AS(load_trace(dir.file("odd.txt"), odd), TraceFormatError);
  try {
    load_trace(dir.file("odd.txt"), odd, TraceInputFormat::PerfScript);
    FAIL("expected an error");
  } catch (const DiagnosticError& e) {
    CHECK(
        std::string(e.what()).starts_with(dir.file("odd.txt") + ":1:1: error: expected an event"));
  }
  CHECK(parse_trace_input_format("perf-script") == TraceInputFormat::PerfScript);
  CHECK(parse_trace_input_format("auto") == TraceInputFormat::Auto);
  CHECK(!parse_trace_input_format("perf"));
}

TEST_CASE("what is read can be written in both causeway forms and read back") {
  Trace t = parse(kSamples);
  TempDir dir;
  write_trace(t, dir.file("t.cwt"));
  Trace back;
  read_trace(dir.file("t.cwt"), back);
  REQUIRE(back.events.size() == t.events.size());
  CHECK(frames(back, back.events[0]) == frames(t, t.events[0]));
  CHECK(back.schema.kind(back.events[0].kind).name == "sample");
}

}  // namespace
}  // namespace cw
