#include "recorder/maps_capture.h"

#include <dlfcn.h>
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "trace/symbolize.h"

namespace cw {
namespace {

std::string real_path(const std::string& path) {
  return std::filesystem::canonical(path).string();
}

bool is_hex_build_id(const std::string& id) {
  return id.size() == 40 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Runs `path` with `arg` in a child and waits for it to exit; returns its pid.
Pid run_to_exit(const char* path, const char* arg) {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::execl(path, path, arg, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return static_cast<Pid>(child);
}

const CapturedMap* find_map(const std::vector<CapturedMap>& maps, Pid pid,
                            const std::string& path) {
  for (const CapturedMap& m : maps)
    if (m.pid == pid && m.path == path) return &m;
  return nullptr;
}

TEST_CASE("a snapshot of this process holds its executable and libc text, with build ids") {
  BuildIdCache cache;
  const Pid self = static_cast<Pid>(::getpid());
  std::vector<CapturedMap> maps = snapshot_maps({self}, cache);
  const std::string exe = real_path("/proc/self/exe");
  const CapturedMap* text = find_map(maps, self, exe);
  REQUIRE(text != nullptr);
  CHECK(text->end > text->start);
  CHECK(text->ts > 0);
  CHECK(is_hex_build_id(text->build_id));
  CHECK(text->build_id == read_build_id(exe));
  // Only executable file mappings are kept: no [stack], no [vdso], no data.
  for (const CapturedMap& m : maps) {
    CHECK(m.pid == self);
    CHECK(m.path.starts_with('/'));
  }
  void* code = reinterpret_cast<void*>(&snapshot_maps);
  auto address = reinterpret_cast<uint64_t>(code);
  CHECK(std::any_of(maps.begin(), maps.end(), [&](const CapturedMap& m) {
    return m.path == exe && address >= m.start && address < m.end;
  }));
}

TEST_CASE("a snapshot of a process that does not exist is empty") {
  BuildIdCache cache;
  CHECK(snapshot_maps({0x7ffffff0}, cache).empty());
}

TEST_CASE("read_build_id is empty for a file that is not ELF or does not exist") {
  CHECK(read_build_id("/etc/hostname").empty());
  CHECK(read_build_id("/nonexistent/file").empty());
  CHECK(is_hex_build_id(read_build_id("/bin/sleep")));
}

TEST_CASE("ring_pages must be a power of two") {
  CHECK_THROWS_WITH_AS(MapsCapture(MapsCaptureOptions{{}, 3}),
                       "ring_pages must be a power of two, got 3", std::invalid_argument);
}

TEST_CASE("add_maps interns paths and build ids; an empty build id is 0") {
  Trace trace;
  add_maps(trace, {CapturedMap{7, 5, 0x1000, 0x2000, 0x3000, "/bin/x", "abcd"},
                   CapturedMap{3, 9, 0x4000, 0x5000, 0, "/bin/y", ""}});
  REQUIRE(trace.maps.size() == 2);
  CHECK(trace.maps[0].pid == 7);
  CHECK(trace.maps[0].ts == 5);
  CHECK(trace.maps[0].start == 0x1000);
  CHECK(trace.maps[0].end == 0x2000);
  CHECK(trace.maps[0].pgoff == 0x3000);
  CHECK(trace.strings.get(trace.maps[0].path) == "/bin/x");
  CHECK(trace.strings.get(trace.maps[0].build_id) == "abcd");
  CHECK(trace.maps[1].build_id == 0);
  trace.sort_maps();
  CHECK(trace.maps[0].pid == 3);
}

// Needs root (or CAP_PERFMON): a refusal fails the test with the kernel's reason.
TEST_CASE("maps of a process that already exited are captured and symbolise its libc frames") {
  MapsCapture capture;
  REQUIRE(capture.cpu_count() > 0);
  CHECK(capture.kernel_build_ids());  // Linux >= 5.12
  std::vector<CapturedMap> maps;
  capture.poll(maps);  // what happened before the child
  maps.clear();

  const Pid child = run_to_exit("/bin/sleep", "0.05");
  CHECK(capture.poll(maps) == 0);
  CHECK(capture.lost_total() == 0);
  CHECK(std::is_sorted(maps.begin(), maps.end(),
                       [](const CapturedMap& a, const CapturedMap& b) { return a.ts < b.ts; }));

  const std::string sleep_path = real_path("/bin/sleep");
  const CapturedMap* sleep = find_map(maps, child, sleep_path);
  REQUIRE(sleep != nullptr);
  CHECK(is_hex_build_id(sleep->build_id));
  CHECK(sleep->build_id == read_build_id(sleep_path));

  // Where clock_nanosleep lies in libc's file, from this process's own libc mapping.
  void* function = ::dlsym(RTLD_DEFAULT, "clock_nanosleep");
  REQUIRE(function != nullptr);
  const auto address = reinterpret_cast<uint64_t>(function);
  BuildIdCache cache;
  std::vector<CapturedMap> own = snapshot_maps({static_cast<Pid>(::getpid())}, cache);
  auto mine = std::find_if(own.begin(), own.end(), [&](const CapturedMap& m) {
    return address >= m.start && address < m.end;
  });
  REQUIRE(mine != own.end());
  const uint64_t file_offset = address - mine->start + mine->pgoff;

  // The same place in the exited child's libc.
  auto theirs = std::find_if(maps.begin(), maps.end(), [&](const CapturedMap& m) {
    return m.pid == child && m.path == mine->path && file_offset >= m.pgoff &&
           file_offset - m.pgoff < m.end - m.start;
  });
  REQUIRE(theirs != maps.end());
  CHECK(theirs->build_id == mine->build_id);
  CHECK(is_hex_build_id(theirs->build_id));
  const uint64_t ip = theirs->start + (file_offset - theirs->pgoff) + 4;

  Trace trace;
  add_maps(trace, maps);
  trace.sort_maps();
  trace.processes.push_back(ProcessInfo{child, static_cast<Pid>(::getpid()), 0, 0});
  trace.threads.push_back(ThreadInfo{child, child, 0, false});
  trace.rebuild_indexes();
  StackId stack = trace.add_stack(Stack{{ip}, {}});
  trace.add_event(monotonic_now_ns(), child, trace.schema.find("syscall_enter"), 0, stack);
  SymbolizeReport report = symbolize_stacks(trace);
  CHECK(report.stacks_symbolized == 1);
  CHECK(report.frames_resolved == 1);
  REQUIRE(trace.stacks[stack].symbols.size() == 1);
  // glibc names this address clock_nanosleep, __clock_nanosleep and __clock_nanosleep_2;
  // the plain global name is the one kept.
  CHECK(trace.strings.get(trace.stacks[stack].symbols[0]) == "clock_nanosleep");
}

TEST_CASE("a pid filter keeps the processes' maps and those of the children they fork") {
  const Pid self = static_cast<Pid>(::getpid());
  MapsCapture capture(MapsCaptureOptions{{self}});
  std::vector<CapturedMap> maps;
  capture.poll(maps);
  maps.clear();
  const Pid child = run_to_exit("/bin/true", nullptr);
  capture.poll(maps);
  CHECK(find_map(maps, child, real_path("/bin/true")) != nullptr);
  for (const CapturedMap& m : maps) CHECK((m.pid == self || m.pid == child));
}

}  // namespace
}  // namespace cw
