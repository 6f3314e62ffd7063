#include "recorder/perf_map_capture.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/temp_dir.h"

namespace cw {
namespace {

constexpr Pid kPid = 4242;  // a process of the fake /proc below

// A folder of perf maps and a fake /proc whose process kPid has uid `uid`.
struct Fixture {
  TempDir dir{"cw-perfmap-test"};
  PerfMapCaptureOptions options;
  explicit Fixture(uid_t uid = ::geteuid()) {
    options.dir = dir.path("tmp");
    options.proc_root = dir.path("proc");
    std::filesystem::create_directories(options.dir);
    set_uid(uid);
  }
  void set_uid(uid_t uid) const {
    dir.write(fmt::format("proc/{}/status", kPid),
              fmt::format("Name:\tnode\nUid:\t{0}\t{0}\t{0}\t{0}\nGid:\t0\t0\t0\t0\n", uid));
  }
  void exit_process() const { std::filesystem::remove_all(dir.path(fmt::format("proc/{}", kPid))); }
  std::string map_path(Pid pid = kPid) const {
    return fmt::format("{}/perf-{}.map", options.dir, pid);
  }
  void append(const std::string& text, Pid pid = kPid) const {
    std::ofstream(map_path(pid), std::ios::app) << text;
  }
};

std::vector<std::string> names(const std::vector<CapturedJitSymbol>& symbols) {
  std::vector<std::string> out;
  for (const CapturedJitSymbol& s : symbols) out.push_back(s.name);
  return out;
}

PerfMapCapture all_recorded(const Fixture& f) {
  return PerfMapCapture(f.options, [](Pid) { return true; });
}

TEST_CASE("a recorded process's perf map is read as it grows, whole lines only") {
  Fixture f;
  f.append("1000 10 JS:*fib /x.js:3:13\n2000 20 JS:~main /x.js:1:1\n3000 1");
  f.append("0 partial\n", 99);  // perf-99.map: a process not recorded
  PerfMapCapture capture(f.options, [](Pid pid) { return pid == kPid; });
  std::vector<CapturedJitSymbol> out;
  capture.poll(100, out);
  CHECK(names(out) == std::vector<std::string>{"JS:*fib /x.js:3:13", "JS:~main /x.js:1:1"});
  CHECK(out[0].pid == kPid);
  CHECK(out[0].ts == 100);
  CHECK(out[0].start == 0x1000);
  CHECK(out[0].size == 0x10);
  out.clear();
  f.append("0 third\n4000 40 fourth\n");
  capture.poll(200, out);
  CHECK(names(out) == std::vector<std::string>{"third", "fourth"});
  CHECK(out[0].ts == 200);
  CHECK(out[0].size == 0x10);
  out.clear();
  capture.poll(300, out);
  CHECK(out.empty());
  CHECK(capture.symbols() == 4);
  CHECK(capture.files_read() == 1);
  CHECK(capture.take_notes().empty());
}

TEST_CASE("a perf map owned by another uid than the process's is refused, with a note") {
  Fixture f(12345);  // the process runs as uid 12345; the file is ours
  f.append("1000 10 spoofed\n");
  PerfMapCapture capture = all_recorded(f);
  std::vector<CapturedJitSymbol> out;
  capture.poll(100, out);
  CHECK(out.empty());
  CHECK(capture.take_notes() ==
        std::vector<std::string>{fmt::format(
            "{}: owned by uid {}, not by a uid of process {} (12345, 12345, 12345, 12345); not "
            "read",
            f.map_path(), ::geteuid(), kPid)});
  f.set_uid(::geteuid());
  capture.poll(200, out);  // refused once, never read again
  CHECK(out.empty());
}

TEST_CASE("as root: a file chowned to another user is refused for a process of root") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to chown a file to another user");
    return;
  }
  Fixture f;
  f.options.proc_root = "/proc";
  const Pid self = static_cast<Pid>(::getpid());  // runs as root
  f.append("1000 10 planted\n", self);
  REQUIRE(::chown(f.map_path(self).c_str(), 65534, 65534) == 0);
  PerfMapCapture capture = all_recorded(f);
  std::vector<CapturedJitSymbol> out;
  capture.read(self, 100, out);
  CHECK(out.empty());
  std::vector<std::string> notes = capture.take_notes();
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("owned by uid 65534, not by a uid of process") != std::string::npos);
  // The same file owned by root is read.
  Fixture g;
  g.options.proc_root = "/proc";
  g.append("1000 10 genuine\n", self);
  PerfMapCapture ok = all_recorded(g);
  ok.read(self, 100, out);
  CHECK(names(out) == std::vector<std::string>{"genuine"});
}

TEST_CASE("a symbolic link or a FIFO in the folder is not followed, not read, not waited on") {
  Fixture f;
  f.dir.write("target.map", "1000 10 secret\n");
  std::filesystem::create_symlink(f.dir.path("target.map"), f.map_path());
  REQUIRE(::mkfifo(f.map_path(4243).c_str(), 0600) == 0);
  f.dir.write("proc/4243/status", fmt::format("Uid:\t{0}\t{0}\t{0}\t{0}\n", ::geteuid()));
  PerfMapCapture capture = all_recorded(f);
  std::vector<CapturedJitSymbol> out;
  capture.poll(100, out);  // returns: a FIFO opened O_NONBLOCK does not block
  CHECK(out.empty());
  CHECK(capture.take_notes() ==
        std::vector<std::string>{
            fmt::format("{}: a symbolic link; not followed, not read", f.map_path()),
            fmt::format("{}: not a regular file; not read", f.map_path(4243))});
}

TEST_CASE("after its process exits, only the file already checked is read on") {
  Fixture f;
  f.append("1000 10 before\n");
  PerfMapCapture capture = all_recorded(f);
  std::vector<CapturedJitSymbol> out;
  capture.poll(100, out);
  f.append("2000 10 at exit\n");
  f.exit_process();
  capture.poll(200, out);
  CHECK(names(out) == std::vector<std::string>{"before", "at exit"});
  // Replaced after the exit (by anyone): not the file that was checked. (Renamed away, not
  // removed, so that the new file cannot get the old one's inode number.)
  std::filesystem::rename(f.map_path(), f.dir.path("old.map"));
  f.append("3000 10 replaced\n");
  capture.poll(300, out);
  CHECK(out.size() == 2);
  CHECK(capture.take_notes().empty());

  // A process never seen alive: its owner cannot be checked.
  Fixture g;
  g.append("1000 10 unchecked\n");
  g.exit_process();
  PerfMapCapture late = all_recorded(g);
  late.poll(100, out);
  CHECK(out.size() == 2);
  CHECK(late.take_notes() == std::vector<std::string>{fmt::format(
                                 "{}: process {} exited before its owner could be checked; not "
                                 "read (its JIT frames stay unnamed)",
                                 g.map_path(), kPid)});
}

TEST_CASE("a perf map started again by its process is read from its start") {
  Fixture f;
  f.append("1000 10 old\n2000 10 old2\n");
  PerfMapCapture capture = all_recorded(f);
  std::vector<CapturedJitSymbol> out;
  capture.poll(100, out);
  std::filesystem::rename(f.map_path(), f.dir.path("old.map"));
  f.append("5000 10 new\n");
  capture.poll(200, out);
  CHECK(names(out) == std::vector<std::string>{"old", "old2", "new"});
}

TEST_CASE("reads are bounded in bytes and entries; bad lines are counted with where") {
  Fixture f;
  f.options.max_bytes = 64;
  f.append("1000 10 a\nnonsense\n2000 10 b\n3000 10 c\n4000 10 d\n5000 10 e\n6000 10 f\n");
  PerfMapCapture capture = all_recorded(f);
  std::vector<CapturedJitSymbol> out;
  capture.poll(100, out);
  CHECK(names(out) == std::vector<std::string>{"a", "b", "c", "d", "e"});
  CHECK(capture.take_notes() ==
        std::vector<std::string>{
            fmt::format("{}: larger than 64 bytes; only its first 64 bytes read", f.map_path())});
  CHECK(capture.bad_line_notes() ==
        std::vector<std::string>{fmt::format(
            "{}:2: 1 line not understood, skipped (the first: expected START SIZE NAME)",
            f.map_path())});

  Fixture g;
  g.options.max_entries = 2;
  g.append("1000 10 a\n2000 10 b\n3000 10 c\n");
  PerfMapCapture few = all_recorded(g);
  out.clear();
  few.poll(100, out);
  CHECK(names(out) == std::vector<std::string>{"a", "b"});
  CHECK(few.take_notes() == std::vector<std::string>{fmt::format(
                                "{}:3: more than 2 entries; the rest not read", g.map_path())});
}

TEST_CASE("entries of all maps are bounded together") {
  Fixture f;
  f.options.max_total_entries = 2;
  f.append("1000 10 a\n2000 10 b\n3000 10 c\n");
  f.dir.write("proc/4243/status", fmt::format("Uid:\t{0}\t{0}\t{0}\t{0}\n", ::geteuid()));
  f.append("1000 10 other\n", 4243);
  PerfMapCapture capture = all_recorded(f);
  std::vector<CapturedJitSymbol> out;
  capture.poll(100, out);
  CHECK(names(out) == std::vector<std::string>{"a", "b", "c"});  // the piece read, whole
  CHECK(capture.take_notes() ==
        std::vector<std::string>{fmt::format("{}:3: more than 2 entries read from perf maps in "
                                             "all; the rest of every map not read",
                                             f.map_path())});
}

TEST_CASE("only files named perf-PID.map are read") {
  Fixture f;
  for (const char* name :
       {"perf-04242.map", "perf-4242.map.bak", "perf-.map", "perf-x.map", "perf-99999999999.map"})
    f.dir.write(std::string("tmp/") + name, "1000 10 wrong\n");
  PerfMapCapture capture = all_recorded(f);
  std::vector<CapturedJitSymbol> out;
  capture.poll(100, out);
  CHECK(out.empty());
}

TEST_CASE("add_jit_symbols interns the names into the trace") {
  Trace t;
  add_jit_symbols(t, {{10, 5, 0x1000, 0x10, "JS:*f"}, {10, 5, 0x2000, 0x10, "JS:*f"}});
  REQUIRE(t.jit_symbols.size() == 2);
  CHECK(t.jit_symbols[0].name == t.jit_symbols[1].name);
  CHECK(t.strings.get(t.jit_symbols[1].name) == "JS:*f");
  CHECK(t.jit_symbols[1].start == 0x2000);
}

}  // namespace
}  // namespace cw
