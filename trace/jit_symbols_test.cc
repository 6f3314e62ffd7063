#include "trace/jit_symbols.h"

#include <doctest/doctest.h>

#include <string>

#include "base/temp_dir.h"
#include "trace/binary_format.h"
#include "trace/symbolize.h"
#include "trace/text_format.h"

namespace cw {
namespace {

void add(Trace& t, Pid pid, uint64_t ts, uint64_t start, uint64_t size, const char* name) {
  t.jit_symbols.push_back(JitSymbol{pid, ts, start, size, t.strings.intern(name)});
}

std::string name_at(const Trace& t, const JitSymbolIndex& index, Pid pid, uint64_t ts,
                    uint64_t ip) {
  const JitSymbol* s = index.find(pid, ts, ip);
  return s ? std::string(t.strings.get(s->name)) : "(none)";
}

TEST_CASE("an address is named by the symbol of its process that covers it") {
  Trace t;
  add(t, 10, 100, 0x1000, 0x100, "JS:*fib /x.js:3:13");
  add(t, 10, 100, 0x1100, 0x80, "JS:*main /x.js:9:1");
  add(t, 11, 100, 0x1000, 0x100, "other process");
  JitSymbolIndex index(t);
  CHECK(name_at(t, index, 10, 50, 0x1000) == "JS:*fib /x.js:3:13");
  CHECK(name_at(t, index, 10, 50, 0x10ff) == "JS:*fib /x.js:3:13");
  CHECK(name_at(t, index, 10, 50, 0x1100) == "JS:*main /x.js:9:1");
  CHECK(name_at(t, index, 10, 50, 0x1180) == "(none)");  // just past the end
  CHECK(name_at(t, index, 10, 50, 0xfff) == "(none)");
  CHECK(name_at(t, index, 11, 50, 0x1010) == "other process");
  CHECK(name_at(t, index, 12, 50, 0x1010) == "(none)");
}

TEST_CASE("memory a JIT reused is named by the code there when the stack was taken") {
  Trace t;
  // Read at 100: first at 0x1000. Read at 200: the same memory holds another function, and a
  // small one lies inside it. Read at 300: a third occupant.
  add(t, 10, 100, 0x1000, 0x100, "first");
  add(t, 10, 200, 0x1000, 0x200, "second");
  add(t, 10, 200, 0x1040, 0x10, "inner");
  add(t, 10, 300, 0x1000, 0x100, "third");
  JitSymbolIndex index(t);
  CHECK(name_at(t, index, 10, 50, 0x1010) == "first");  // the read at 100 had seen it
  CHECK(name_at(t, index, 10, 100, 0x1010) == "first");
  CHECK(name_at(t, index, 10, 150, 0x1010) == "second");  // the read at 200 saw it last
  CHECK(name_at(t, index, 10, 150, 0x1044) == "inner");
  CHECK(name_at(t, index, 10, 150, 0x1180) == "second");
  CHECK(name_at(t, index, 10, 250, 0x1010) == "third");
  CHECK(name_at(t, index, 10, 999, 0x1010) == "third");  // after every read: the newest
  CHECK(name_at(t, index, 10, 999, 0x1180) == "second");
}

TEST_CASE("a map written late (at exit) still names the stacks taken before") {
  Trace t;
  add(t, 10, 900, 0x1000, 0x100, "early");  // an earlier read, of other code
  add(t, 10, 5000, 0x2000, 0x100, "late");  // written at exit, read after every stack
  JitSymbolIndex index(t);
  CHECK(name_at(t, index, 10, 100, 0x2010) == "late");
}

TEST_CASE("symbols that all overlap cost a bounded scan, and damaged ranges cover nothing") {
  Trace t;
  for (int i = 0; i < 10000; ++i) add(t, 10, 100, 0x1000, 0x100000, "wide");
  add(t, 10, 100, 0x2000, 0, "empty");
  JitSymbolIndex index(t);
  CHECK(name_at(t, index, 10, 50, 0x2000) == "wide");
}

TEST_CASE("symbolisation names frames in anonymous memory from the JIT symbols") {
  Trace t = parse_text_trace(make_source("t.trace",
                                         "causeway-trace 1\n"
                                         "process 10 comm=node\n"
                                         "thread 10 pid=10 comm=node\n"
                                         "jit 10 0x7f0000001000-0x7f0000001100 "
                                         "\"JS:*hotRead /tmp/x.js:2:17\" at=2s\n"
                                         "1s 10 syscall_enter name=read "
                                         "stack=0x7f0000009999;0x7f0000001080;0x7f0000000010\n"));
  SymbolizeReport report = symbolize_stacks(t);
  REQUIRE(t.stacks.size() == 2);
  const Stack& s = t.stacks[1];
  REQUIRE(s.frames.size() == 3);
  CHECK(t.strings.get(s.frames[0].function).empty());  // no map, no symbol: unnamed
  CHECK(t.strings.get(s.frames[1].function) == "JS:*hotRead /tmp/x.js:2:17");
  CHECK(t.strings.get(s.symbols[1]) == "JS:*hotRead /tmp/x.js:2:17");  // what rules match
  CHECK(frame_name(t.strings, s.frames[1]) == "JS:*hotRead /tmp/x.js:2:17");
  CHECK(report.frames_jit == 1);
  CHECK(report.frames_resolved == 1);
  CHECK(report.stacks_symbolized == 1);
}

TEST_CASE("jit lines round-trip through the text form") {
  const std::string text =
      "causeway-trace 1\n"
      "jit 10 0x1000-0x1100 \"JS:*fib /x.js:3:13\" at=2s\n"
      "jit 10 0x2000-0x2010 py::f:/t.py\n"
      "jit 11 0x3000-0x3008 \"a=b\" at=1ms\n";
  Trace t = parse_text_trace(make_source("t.trace", text));
  REQUIRE(t.jit_symbols.size() == 3);
  CHECK(t.jit_symbols[0].pid == 10);
  CHECK(t.jit_symbols[0].start == 0x1000);
  CHECK(t.jit_symbols[0].size == 0x100);
  CHECK(t.jit_symbols[0].ts == 2000000000);
  CHECK(t.strings.get(t.jit_symbols[1].name) == "py::f:/t.py");
  CHECK(t.jit_symbols[1].ts == 0);
  CHECK(write_text_trace(t) == text);
}

TEST_CASE("a bad jit line points at what is wrong") {
  auto error_of = [](const std::string& line) {
    try {
      parse_text_trace(make_source("t.trace", "causeway-trace 1\n" + line + "\n"));
    } catch (const DiagnosticError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("jit 10 0x2000-0x1000 f").find("empty address range") != std::string::npos);
  CHECK(error_of("jit 10 0x1000-0x2000").find("expected the function's name") != std::string::npos);
  CHECK(error_of("jit 10 0x1000-0x2000 at=1s").find("quote a name holding '='") !=
        std::string::npos);
  CHECK(error_of("jit 10 0x1000-0x2000 f when=1").find("unknown field 'when' of jit record") !=
        std::string::npos);
  CHECK(error_of("jitt 10 0x1000-0x2000 f").find("did you mean 'jit'?") != std::string::npos);
}

TEST_CASE("JIT symbols stream in their own chunks, compressed or not, and read back in order") {
  for (TraceCompression compression : {TraceCompression::Zstd, TraceCompression::None}) {
    TempDir dir("cw-jit-test");
    Trace t;
    TraceWriterOptions options;
    options.compression = compression;
    TraceWriter writer(dir.file("j.cwt"), t.schema, options);
    for (int i = 0; i < 100; ++i) add(t, 10, 100, 0x1000 + 0x100 * i, 0x100, "JS:*f /x.js:1:1");
    writer.append(t);
    add(t, 11, 200, 0x9000, 0x10, "py::g:/y.py");  // a second append: only the new one
    writer.append(t);
    writer.close();
    Trace back;
    ReadReport report = read_trace(dir.file("j.cwt"), back);
    CHECK(report.clean());
    CHECK(report.notes.empty());
    REQUIRE(back.jit_symbols.size() == 101);
    CHECK(back.jit_symbols[99].start == 0x1000 + 0x100 * 99);
    CHECK(back.jit_symbols[100].pid == 11);
    CHECK(back.jit_symbols[100].ts == 200);
    CHECK(back.jit_symbols[100].size == 0x10);
    CHECK(back.strings.get(back.jit_symbols[100].name) == "py::g:/y.py");
    CHECK(write_text_trace(back) == write_text_trace(t));
  }
}

}  // namespace
}  // namespace cw
