#include "trace/text_format.h"

#include <doctest/doctest.h>

namespace cw {
namespace {

Trace parse(const std::string& text) {
  return parse_text_trace(make_source("t.trace", text));
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const DiagnosticError& e) {
    return e.what();
  }
  return "no error";
}

const char* const kSpecExample =
    R"(causeway-trace 1                     # first line: the format and its major version
# comments run to the end of the line
process 100 comm=server ppid=1 exe=/usr/bin/server
thread 101 pid=100 comm=main
thread 7 pid=0 comm=kworker/0:1 kernel
lost cpu=1 count=12 at=3s
map 100 0x400000-0x401000 0x0 /usr/bin/server build_id=ab12 at=1ms
1000 101 switch_in cpu=0
1.5ms 101 syscall_enter name=futex op=wait resource=0x7f00 stack=main;lock;futex_wait
2ms 102 wakeup target=101
)";

std::string str_field(const Trace& t, const Event& e, std::string_view field) {
  return std::string(
      t.strings.get(static_cast<StrId>(t.value(e, t.schema.field_index(e.kind, field)))));
}
uint64_t field(const Trace& t, const Event& e, std::string_view name) {
  return t.value(e, t.schema.field_index(e.kind, name));
}

TEST_CASE("the example of docs/trace-format.md parses into tables and typed events") {
  Trace t = parse(kSpecExample);
  REQUIRE(t.processes.size() == 1);
  CHECK(t.processes[0].pid == 100);
  CHECK(t.processes[0].ppid == 1);
  CHECK(t.strings.get(t.processes[0].comm) == "server");
  CHECK(t.strings.get(t.processes[0].exe) == "/usr/bin/server");
  REQUIRE(t.thread(7) != nullptr);
  CHECK(t.thread(7)->kernel);
  CHECK(t.strings.get(t.thread(7)->comm) == "kworker/0:1");
  REQUIRE(t.maps.size() == 1);
  CHECK(t.strings.get(t.maps[0].path) == "/usr/bin/server");
  CHECK(t.pid_of(101) == 100);
  REQUIRE(t.lost.size() == 1);
  CHECK(t.lost[0].cpu == 1);
  CHECK(t.lost[0].count == 12);
  CHECK(t.lost[0].ts == 3000000000ull);

  REQUIRE(t.events.size() == 3);
  CHECK(t.events[0].ts == 1000);
  CHECK(t.schema.kind(t.events[0].kind).name == "switch_in");
  const Event& futex = t.events[1];
  CHECK(futex.ts == 1500000);
  CHECK(str_field(t, futex, "name") == "futex");
  CHECK(str_field(t, futex, "op") == "wait");
  CHECK(field(t, futex, "resource") == 0x7f00);
  CHECK(field(t, futex, "fd") == 0);  // not written: zero
  const Stack& stack = t.stacks[futex.stack];
  REQUIRE(stack.symbols.size() == 3);  // innermost first
  CHECK(t.strings.get(stack.symbols[0]) == "futex_wait");
  CHECK(t.strings.get(stack.symbols[2]) == "main");
  CHECK(stack.ips == std::vector<uint64_t>{0, 0, 0});
  CHECK(field(t, t.events[2], "target") == 101);
}

TEST_CASE("a UTF-8 byte order mark may open a text trace") {
  Trace t = parse(
      "\xEF\xBB\xBF"
      "causeway-trace 1\nthread 11 pid=10 comm=a\n1ms 11 switch_in\n");
  CHECK(t.events.size() == 1);
}

TEST_CASE("error: a NUL byte is refused where it is, not kept inside a name") {
  const std::string text =
      std::string("causeway-trace 1\n1ms 11 syscall_enter name=send") + '\0' + "to\n";
  const std::string e = error_of(text);
  CHECK(e.rfind("t.trace:2:31: error: a NUL byte (byte 47) in a text trace\n", 0) == 0);
  CHECK(e.find("hint: a text trace holds no NUL") != std::string::npos);
}

TEST_CASE("times take ns, us, ms and s units with decimals") {
  Trace t = parse(
      "causeway-trace 1\n1 1 switch_in\n2ns 1 switch_in\n1.25us 1 switch_in\n1.5ms 1 switch_in\n"
      "0.000000003s 1 switch_in\n2s 1 switch_in\n");
  std::vector<uint64_t> times;
  for (const auto& e : t.events) times.push_back(e.ts);
  CHECK(times == std::vector<uint64_t>{1, 2, 3, 1250, 1500000, 2000000000});
}

TEST_CASE("events are sorted by time, keeping file order for equal times") {
  Trace t =
      parse("causeway-trace 1\n5 1 exit code=1\n3 1 switch_in\n5 1 exit code=2\n5 1 exit code=3\n");
  REQUIRE(t.events.size() == 4);
  CHECK(t.events[0].ts == 3);
  for (int i = 1; i <= 3; ++i) CHECK(t.int_value(t.events[i], 0) == i);
}

TEST_CASE("integer values: negative, hex, and thread ids") {
  Trace t = parse("causeway-trace 1\n1 2 syscall_enter fd=-3 count=0x10 timeout_ns=-1\n");
  const Event& e = t.events[0];
  CHECK(t.int_value(e, t.schema.field_index(e.kind, "fd")) == -3);
  CHECK(field(t, e, "count") == 16);
  CHECK(t.int_value(e, t.schema.field_index(e.kind, "timeout_ns")) == -1);
}

TEST_CASE("quoted strings hold blanks and escapes") {
  Trace t = parse(
      "causeway-trace 1\nprocess 1 comm=\"two words\" exe=\"a\\\"b\\\\c\\nd\\te\"\n"
      "1 1 marker text=\"# not a comment\"  # but this is\n");
  CHECK(t.strings.get(t.processes[0].comm) == "two words");
  CHECK(t.strings.get(t.processes[0].exe) == "a\"b\\c\nd\te");
  CHECK(str_field(t, t.events[0], "text") == "# not a comment");
}

TEST_CASE("stack frames: symbols, addresses, or both; identical stacks are shared") {
  Trace t = parse(
      "causeway-trace 1\n"
      "1 1 switch_out stack=0x400000;0x401000\n"
      "2 1 switch_out stack=main@0x400000;poll@0x7f0010;0x7f0020\n"
      "3 1 switch_out stack=main@0x400000;poll@0x7f0010;0x7f0020\n"
      "4 1 switch_out stack=\"run(int const&)@0x10;x\"\n");
  const Stack& addresses = t.stacks[t.events[0].stack];
  CHECK(addresses.ips == std::vector<uint64_t>{0x401000, 0x400000});
  CHECK(addresses.symbols.empty());
  const Stack& mixed = t.stacks[t.events[1].stack];
  CHECK(mixed.ips == std::vector<uint64_t>{0x7f0020, 0x7f0010, 0x400000});
  REQUIRE(mixed.symbols.size() == 3);
  CHECK(mixed.symbols[0] == 0);
  CHECK(t.strings.get(mixed.symbols[1]) == "poll");
  CHECK(t.strings.get(mixed.symbols[2]) == "main");
  CHECK(t.events[2].stack == t.events[1].stack);
  const Stack& quoted = t.stacks[t.events[3].stack];
  CHECK(t.strings.get(quoted.symbols[1]) == "run(int const&)");
  CHECK(quoted.ips[1] == 0x10);
}

TEST_CASE("threads used by events but not declared get their own process") {
  Trace t = parse("causeway-trace 1\nthread 5 pid=4\n1 5 switch_in\n2 9 switch_in\n3 9 wakeup\n");
  REQUIRE(t.threads.size() == 2);
  CHECK(t.pid_of(5) == 4);
  REQUIRE(t.thread(9) != nullptr);
  CHECK(t.pid_of(9) == 9);
}

TEST_CASE("events on thread 0 (the recorder's notes) declare no thread") {
  const std::string text =
      "causeway-trace 1\nthread 5 pid=4\n1 5 switch_in\n2 0 marker text=\"a note\"\n";
  Trace t = parse(text);
  REQUIRE(t.threads.size() == 1);
  CHECK(t.thread(0) == nullptr);
  CHECK(write_text_trace(parse(write_text_trace(t))) == write_text_trace(t));
}

TEST_CASE("text -> trace -> text -> trace reproduces the trace") {
  const std::string text = std::string(kSpecExample) +
                           "7 101 marker text=\"two words\" cpu=3\n"
                           "8 101 send object=0xdeadbeef offset=12 len=5 peer=-1 fd=4\n"
                           "9 101 switch_out state=S stack=\"main@0x10;0x20;x y\"\n"
                           "10 101 call_enter fn=0x5@0x0 stack=0x5@0x0;a@b\n";
  Trace first = parse(text);
  std::string written = write_text_trace(first);
  Trace second = parse(written);
  CHECK(write_text_trace(second) == written);
  CHECK(second.events.size() == first.events.size());
  CHECK(second.threads.size() == first.threads.size());
  for (size_t i = 0; i < first.events.size(); ++i) {
    CHECK(first.events[i].ts == second.events[i].ts);
    CHECK(first.events[i].kind == second.events[i].kind);
  }
}

TEST_CASE("map lines give a process's executable mappings, sorted by pid then time") {
  Trace t = parse(
      "causeway-trace 1\n"
      "map 200 0x7f0000001000-0x7f0000002000 0x1000 /lib/libc.so.6 at=2ms\n"
      "map 100 0x400000-0x401000 0x0 /usr/bin/app build_id=AB12cd at=1ms\n"
      "map 200 0x1000-0x2000 4096 \"/opt/my app/bin=x\"\n");
  REQUIRE(t.maps.size() == 3);
  const MapRecord& app = t.maps[0];
  CHECK(app.pid == 100);
  CHECK(app.start == 0x400000);
  CHECK(app.end == 0x401000);
  CHECK(app.pgoff == 0);
  CHECK(t.strings.get(app.path) == "/usr/bin/app");
  CHECK(t.strings.get(app.build_id) == "ab12cd");
  CHECK(app.ts == 1000000);
  CHECK(t.maps[1].pid == 200);
  CHECK(t.maps[1].ts == 0);
  CHECK(t.strings.get(t.maps[1].path) == "/opt/my app/bin=x");
  CHECK(t.maps[1].build_id == 0);
  CHECK(t.maps[1].pgoff == 4096);
  CHECK(t.maps[2].ts == 2000000);
  CHECK(write_text_trace(t) ==
        "causeway-trace 1\n"
        "map 100 0x400000-0x401000 0x0 /usr/bin/app build_id=ab12cd at=1ms\n"
        "map 200 0x1000-0x2000 0x1000 \"/opt/my app/bin=x\"\n"
        "map 200 0x7f0000001000-0x7f0000002000 0x1000 /lib/libc.so.6 at=2ms\n");
  CHECK(write_text_trace(parse(write_text_trace(t))) == write_text_trace(t));
}

TEST_CASE("loss lines: every kind by name, a newer recorder's by number; they round-trip") {
  const std::string text =
      "causeway-trace 1\n"
      "lost cpu=1 count=12 at=3s\n"
      "loss hook_log count=40 at=1ms\n"
      "loss switches_unreported count=1 at=1.5ms\n"
      "loss maps count=2 at=2ms\n"
      "loss watchpoints_silent count=1\n"
      "loss 77 count=5 at=2.6ms\n";
  Trace t = parse_text_trace(make_source("t.trace", text));
  REQUIRE(t.losses.size() == 5);
  CHECK(t.losses[0].kind == LossKind::HookLog);
  CHECK(t.losses[0].count == 40);
  CHECK(t.losses[0].ts == 1000000);
  CHECK(t.losses_of(LossKind::SwitchUnreported) == 1);
  CHECK(t.losses_of(LossKind::Maps) == 2);
  CHECK(t.losses[3].kind == LossKind::WatchpointSilent);
  CHECK(t.losses[3].ts == 0);
  CHECK(static_cast<uint32_t>(t.losses[4].kind) == 77);
  CHECK(t.lost_events() == 12);
  const std::string written = write_text_trace(t);
  CHECK(written.find("loss hook_log count=40 at=1ms\n") != std::string::npos);
  CHECK(written.find("loss watchpoints_silent count=1 at=0\n") != std::string::npos);
  CHECK(written.find("loss 77 count=5 at=2600us\n") != std::string::npos);
  Trace again = parse_text_trace(make_source("w.trace", written));
  CHECK(write_text_trace(again) == written);
}

TEST_CASE("a bad loss line points at what is wrong") {
  CHECK(error_of("causeway-trace 1\nloss hook_logs count=1\n") ==
        "t.trace:2:6: error: unknown kind of loss 'hook_logs'\n"
        "  loss hook_logs count=1\n"
        "       ^~~~~~~~~\n"
        "hint: did you mean 'hook_log'?\n");
  CHECK(
      error_of("causeway-trace 1\nloss maps cpu=1\n").find("unknown field 'cpu' of loss record") !=
      std::string::npos);
}

TEST_CASE("a bad map line points at what is wrong") {
  CHECK(error_of("causeway-trace 1\nmap 100 0x400000:0x401000 0x0 /bin/a\n") ==
        "t.trace:2:9: error: bad address range '0x400000:0x401000': expected START-END, e.g. "
        "0x400000-0x401000\n"
        "  map 100 0x400000:0x401000 0x0 /bin/a\n"
        "          ^~~~~~~~~~~~~~~~~\n");
  CHECK(error_of("causeway-trace 1\nmap 100 0x2000-0x1000 0x0 /bin/a\n") ==
        "t.trace:2:9: error: empty address range '0x2000-0x1000': END must be above START\n"
        "  map 100 0x2000-0x1000 0x0 /bin/a\n"
        "          ^~~~~~~~~~~~~\n");
  CHECK(error_of("causeway-trace 1\nmap 100 0x1000-0x2000 0x0\n") ==
        "t.trace:2:26: error: expected the file path after the file offset\n"
        "  map 100 0x1000-0x2000 0x0\n"
        "                           ^\n");
  CHECK(error_of("causeway-trace 1\nmap 100 0x1000-0x2000 0x0 /bin/a build_id=xyz\n") ==
        "t.trace:2:43: error: build_id needs hex digits, got 'xyz'\n"
        "  map 100 0x1000-0x2000 0x0 /bin/a build_id=xyz\n"
        "                                            ^~~\n");
  CHECK(error_of("causeway-trace 1\nmap 100 0x1000-0x2000 0x0 /bin/a buildid=ab\n") ==
        "t.trace:2:34: error: unknown field 'buildid' of map record\n"
        "  map 100 0x1000-0x2000 0x0 /bin/a buildid=ab\n"
        "                                   ^~~~~~~\n"
        "hint: did you mean 'build_id'?\n");
  CHECK(error_of("causeway-trace 1\nmap 100 0x1000-0x2000 0x0 build_id=ab\n") ==
        "t.trace:2:27: error: expected the file path, got 'build_id=ab' (quote a path holding "
        "'=')\n"
        "  map 100 0x1000-0x2000 0x0 build_id=ab\n"
        "                            ^~~~~~~~~~~\n");
}

TEST_CASE("the writer gives events' times in nanoseconds, whatever unit they were read in") {
  Trace t = parse(
      "causeway-trace 1\n3s 1 switch_in\n2ms 1 switch_in\n1500us 1 switch_in\n7 1 switch_in\n");
  CHECK(
      write_text_trace(t) ==
      "causeway-trace 1\nthread 1 pid=1\n7 1 switch_in\n1500000 1 switch_in\n2000000 1 switch_in\n"
      "3000000000 1 switch_in\n");
}

TEST_CASE("a trace embedded in a larger file reports positions in that file") {
  const std::string file = "pack x\ntest t {\n  causeway-trace 1\n  1 1 wakeup targt=2\n}\n";
  size_t begin = file.find("causeway-trace"), end = file.find('}');
  try {
    parse_text_trace(make_source("p.cw", file), begin, end);
    FAIL("expected an error");
  } catch (const DiagnosticError& e) {
    CHECK(std::string(e.what()) ==
          "p.cw:4:14: error: unknown field 'targt' of event 'wakeup'\n"
          "    1 1 wakeup targt=2\n"
          "               ^~~~~\n"
          "hint: did you mean 'target'?\n");
  }
  Trace ok = parse_text_trace(make_source("p.cw", "x\ncauseway-trace 1\n1 1 switch_in\ny"), 2, 32);
  CHECK(ok.events.size() == 1);
}

TEST_CASE("an unknown kind is reported with the nearest kind") {
  CHECK(error_of("causeway-trace 1\n5 101 wakup target=102\n") ==
        "t.trace:2:7: error: unknown event kind 'wakup'\n"
        "  5 101 wakup target=102\n"
        "        ^~~~~\n"
        "hint: did you mean 'wakeup'?\n");
}

TEST_CASE("an unknown field is reported with the nearest field, or the list of fields") {
  CHECK(error_of("causeway-trace 1\n5 101 wakeup taget=102\n") ==
        "t.trace:2:14: error: unknown field 'taget' of event 'wakeup'\n"
        "  5 101 wakeup taget=102\n"
        "               ^~~~~\n"
        "hint: did you mean 'target'?\n");
  CHECK(error_of("causeway-trace 1\n5 101 wakeup zzzzzz=1\n") ==
        "t.trace:2:14: error: unknown field 'zzzzzz' of event 'wakeup'\n"
        "  5 101 wakeup zzzzzz=1\n"
        "               ^~~~~~\n"
        "hint: 'wakeup' has fields: target, interrupt, cause, delivers, cpu, stack\n");
  CHECK(error_of("causeway-trace 1\nthread 1 comn=x\n") ==
        "t.trace:2:10: error: unknown field 'comn' of thread record\n"
        "  thread 1 comn=x\n"
        "           ^~~~\n"
        "hint: did you mean 'comm'?\n");
}

TEST_CASE("a bad number points at the value") {
  CHECK(error_of("causeway-trace 1\n5 101 syscall_enter fd=abc\n") ==
        "t.trace:2:24: error: field 'fd' needs an integer, got 'abc'\n"
        "  5 101 syscall_enter fd=abc\n"
        "                         ^~~\n");
  CHECK(error_of("causeway-trace 1\n5 101 send len=-4\n") ==
        "t.trace:2:16: error: field 'len' needs an unsigned integer, got '-4'\n"
        "  5 101 send len=-4\n"
        "                 ^~\n");
  CHECK(error_of("causeway-trace 1\n5 101 wakeup target=4294967296\n") ==
        "t.trace:2:21: error: integer '4294967296' is out of range for field 'target'\n"
        "  5 101 wakeup target=4294967296\n"
        "                      ^~~~~~~~~~\n");
}

TEST_CASE("a field given twice points at the second") {
  CHECK(error_of("causeway-trace 1\n5 101 wakeup target=1 target=2\n") ==
        "t.trace:2:23: error: field 'target' is given twice\n"
        "  5 101 wakeup target=1 target=2\n"
        "                        ^~~~~~\n");
}

TEST_CASE("a trace without its header is refused") {
  CHECK(error_of("# a comment\n1000 101 switch_in\n") ==
        "t.trace:2:1: error: missing header: a trace starts with 'causeway-trace 1'\n"
        "  1000 101 switch_in\n"
        "  ^~~~\n");
  CHECK(error_of("# only\n# comments\n") ==
        "t.trace:1:1: error: missing header: a trace starts with 'causeway-trace 1'\n"
        "  # only\n"
        "  ^\n");
  CHECK(error_of("") ==
        "t.trace:1:1: error: missing header: a trace starts with 'causeway-trace 1'\n"
        "  \n"
        "  ^\n");
}

TEST_CASE("a newer major version is refused, naming it") {
  CHECK(error_of("causeway-trace 2\n") ==
        "t.trace:1:16: error: trace format version 2 is newer than this causeway reads (1); "
        "upgrade causeway\n"
        "  causeway-trace 2\n"
        "                 ^\n");
}

TEST_CASE("bad times name the problem") {
  CHECK(error_of("causeway-trace 1\n1.5xs 101 switch_in\n") ==
        "t.trace:2:1: error: bad time '1.5xs': unknown unit 'xs' (use ns, us, ms or s)\n"
        "  1.5xs 101 switch_in\n"
        "  ^~~~~\n");
  CHECK(error_of("causeway-trace 1\n1.5 101 switch_in\n") ==
        "t.trace:2:1: error: bad time '1.5': a fraction needs a unit (ns, us, ms or s)\n"
        "  1.5 101 switch_in\n"
        "  ^~~\n");
  CHECK(error_of("causeway-trace 1\n1.0001us 101 switch_in\n") ==
        "t.trace:2:1: error: bad time '1.0001us': finer than a nanosecond\n"
        "  1.0001us 101 switch_in\n"
        "  ^~~~~~~~\n");
}

TEST_CASE("malformed lines say what was expected") {
  CHECK(error_of("causeway-trace 1\nproces 1\n") ==
        "t.trace:2:1: error: unknown record 'proces': a line starts with a time, 'process', "
        "'thread', 'update', 'lost', 'loss', 'map' or 'jit'\n"
        "  proces 1\n"
        "  ^~~~~~\n"
        "hint: did you mean 'process'?\n");
  CHECK(error_of("causeway-trace 1\n5 101\n") ==
        "t.trace:2:6: error: expected an event kind after the thread id\n"
        "  5 101\n"
        "       ^\n");
  CHECK(error_of("causeway-trace 1\n5 1 marker text=\"open\n") ==
        "t.trace:2:17: error: unterminated string\n"
        "  5 1 marker text=\"open\n"
        "                  ^\n");
  CHECK(error_of("causeway-trace 1\n5 1 switch_out stack=a;;b\n") ==
        "t.trace:2:24: error: empty frame in stack\n"
        "  5 1 switch_out stack=a;;b\n"
        "                         ^\n");
  CHECK(error_of("causeway-trace 1\nthread 3 pid=1\nthread 3 pid=2\n") ==
        "t.trace:3:8: error: thread 3 is declared twice\n"
        "  thread 3 pid=2\n"
        "         ^\n"
        "hint: a later state of the same thread (after an exec or a rename) is written 'update "
        "thread 3 ...'\n");
}

// A recording re-declares a process at a fork, at its exec and at a rename, and the last
// entry of an id holds: the text form keeps that history as update records.
TEST_CASE("later states of processes and threads are update records; they round-trip") {
  Trace t;
  auto s = [&](std::string_view text) { return t.strings.intern(text); };
  t.processes = {{100, 1, s("bash"), s("/usr/bin/bash")},
                 {101, 100, s("bash"), s("/usr/bin/bash")},
                 {101, 100, s("ls"), s("/usr/bin/bash")},
                 {101, 100, s("ls"), s("/usr/bin/ls")}};
  t.threads = {
      {100, 100, s("bash"), false}, {101, 101, s("bash"), false}, {101, 101, s("ls"), false}};
  t.rebuild_indexes();
  const std::string text = write_text_trace(t);
  CHECK(text ==
        "causeway-trace 1\n"
        "process 100 comm=bash ppid=1 exe=/usr/bin/bash\n"
        "process 101 comm=bash ppid=100 exe=/usr/bin/bash\n"
        "update process 101 comm=ls ppid=100 exe=/usr/bin/bash\n"
        "update process 101 comm=ls ppid=100 exe=/usr/bin/ls\n"
        "thread 100 pid=100 comm=bash\n"
        "thread 101 pid=101 comm=bash\n"
        "update thread 101 pid=101 comm=ls\n");
  Trace back = parse(text);
  CHECK(back.processes.size() == 4);
  CHECK(back.threads.size() == 3);
  CHECK(back.strings.get(back.process(101)->exe) == "/usr/bin/ls");
  CHECK(back.strings.get(back.thread(101)->comm) == "ls");
  CHECK(write_text_trace(back) == text);
}

TEST_CASE("an update names a process or thread declared before it") {
  CHECK(error_of("causeway-trace 1\nupdate process 5 comm=x\n") ==
        "t.trace:2:16: error: process 5 is updated before it is declared\n"
        "  update process 5 comm=x\n"
        "                 ^\n"
        "hint: declare it first: 'process 5 ...'\n");
  CHECK(error_of("causeway-trace 1\nupdate thraed 5\n") ==
        "t.trace:2:8: error: 'update' is followed by 'process' or 'thread', not 'thraed'\n"
        "  update thraed 5\n"
        "         ^~~~~~\n"
        "hint: did you mean 'thread'?\n");
  CHECK(error_of("causeway-trace 1\nprocess 5\nprocess 5 comm=x\n") ==
        "t.trace:3:9: error: process 5 is declared twice\n"
        "  process 5 comm=x\n"
        "          ^\n"
        "hint: a later state of the same process (after an exec or a rename) is written "
        "'update process 5 ...'\n");
}

// Which process a thread's events belong to decides where a root cause is reported; the
// binary reader refuses the same (binary_format_test.cc).
TEST_CASE("an update that moves a thread to another process needs a fork creating it there") {
  CHECK(error_of("causeway-trace 1\nthread 7 pid=5\n1ms 7 marker\nupdate thread 7 pid=9\n") ==
        "t.trace:4:15: error: thread 7 is declared in process 9 after process 5, and no fork "
        "event creates it there\n"
        "  update thread 7 pid=9\n"
        "                ^\n"
        "hint: a trace puts a thread in one process; its id is reused only by a new thread, "
        "which a fork event (child=TID child_pid=PID) creates\n");
  // Its id reused: the fork event says so.
  Trace t = parse(
      "causeway-trace 1\nthread 7 pid=5\nupdate thread 7 pid=9\n2ms 9 fork child=7 "
      "child_pid=9\n");
  CHECK(t.pid_of(7) == 9);
  // A thread first met with no process known (0) gets one.
  CHECK(parse("causeway-trace 1\nthread 7 pid=0\nupdate thread 7 pid=9\n").pid_of(7) == 9);
}

}  // namespace
}  // namespace cw
