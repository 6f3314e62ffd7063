// Frames named from maps the recorder captured: snapshot_maps (recorder/maps_capture.h) of
// this very process, read back by trace/symbolize. The naming lives in trace/, which must not
// link the recorder; the test needs both halves, so it sits with the recorder.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "recorder/maps_capture.h"
#include "trace/symbolize.h"

// Functions with stable names whose addresses the tests symbolise.
extern "C" __attribute__((noinline)) void* cw_symbolize_test_leaf() {
  return __builtin_return_address(0);
}

extern "C" __attribute__((noinline)) void* cw_symbolize_test_caller() {
  void* return_address = cw_symbolize_test_leaf();
  asm volatile("" ::: "memory");  // keeps the call from becoming a tail call
  return return_address;
}

namespace cw_symbolize_test {
__attribute__((noinline)) int twice(int x) {
  asm volatile("" ::: "memory");
  return 2 * x;
}
}  // namespace cw_symbolize_test

namespace cw {
namespace {

namespace fs = std::filesystem;

uint64_t address_of(void* function) {
  return reinterpret_cast<uint64_t>(function);
}

// A trace of this process: its maps as of now, and one thread.
Trace trace_of_self() {
  Trace trace;
  BuildIdCache cache;
  const Pid self = static_cast<Pid>(::getpid());
  add_maps(trace, snapshot_maps({self}, cache));
  trace.sort_maps();
  trace.processes.push_back(ProcessInfo{self, 1, 0, 0});
  trace.threads.push_back(ThreadInfo{self, self, 0, false});
  trace.rebuild_indexes();
  return trace;
}

StackId add_stack_event(Trace& trace, uint64_t ts, Tid tid, std::vector<uint64_t> ips) {
  StackId id = trace.add_stack(Stack{std::move(ips), {}});
  trace.add_event(ts, tid, trace.schema.find("syscall_enter"), 0, id);
  return id;
}

std::vector<std::string> names(const Trace& trace, StackId id) {
  std::vector<std::string> out;
  for (StrId s : trace.stacks[id].symbols) out.emplace_back(trace.strings.get(s));
  return out;
}

TEST_CASE("frames of this test binary are named, return addresses by the call they follow") {
  Trace trace = trace_of_self();
  const Tid self = static_cast<Tid>(::getpid());
  const uint64_t return_address = address_of(cw_symbolize_test_caller());
  const uint64_t leaf = address_of(reinterpret_cast<void*>(&cw_symbolize_test_leaf));
  const uint64_t twice = address_of(reinterpret_cast<void*>(&cw_symbolize_test::twice));
  // The last frame is a return address equal to leaf's first byte: the call it follows
  // ended the function before leaf, so it must not be named leaf.
  StackId stack = add_stack_event(trace, monotonic_now_ns(), self, {leaf, return_address, leaf});
  StackId cpp = add_stack_event(trace, monotonic_now_ns(), self, {twice + 1});

  SymbolizeReport report = symbolize_stacks(trace);
  std::vector<std::string> frames = names(trace, stack);
  REQUIRE(frames.size() == 3);
  CHECK(frames[0] == "cw_symbolize_test_leaf");
  CHECK(frames[1] == "cw_symbolize_test_caller");
  CHECK(frames[2] != "cw_symbolize_test_leaf");
  CHECK(names(trace, cpp) == std::vector<std::string>{"cw_symbolize_test::twice(int)"});
  CHECK(report.stacks_symbolized == 2);
  CHECK(report.frames_resolved + report.frames_unresolved == 4);
  CHECK(report.files_not_found.empty());
}

// Where a signal handler returns to: the C library's restorer, which the kernel puts on the
// handler's stack as its return address.
void* volatile signal_return_address = nullptr;
extern "C" __attribute__((noinline)) void cw_symbolize_test_handler(int) {
  signal_return_address = __builtin_return_address(0);
}

TEST_CASE("a signal handler's return trampoline is marked a signal frame; a call is not") {
  struct sigaction action {
  }, previous{};
  action.sa_handler = cw_symbolize_test_handler;
  REQUIRE(::sigaction(SIGUSR2, &action, &previous) == 0);
  ::raise(SIGUSR2);
  ::sigaction(SIGUSR2, &previous, nullptr);
  REQUIRE(signal_return_address != nullptr);

  Trace trace = trace_of_self();
  const Tid self = static_cast<Tid>(::getpid());
  const uint64_t leaf = address_of(reinterpret_cast<void*>(&cw_symbolize_test_handler));
  const uint64_t return_address = address_of(cw_symbolize_test_caller());
  // The handler, the trampoline it returns to, and a caller the signal interrupted.
  StackId id = add_stack_event(trace, monotonic_now_ns(), self,
                               {leaf, address_of(signal_return_address), return_address});
  symbolize_stacks(trace);
  const std::vector<Frame>& frames = trace.stacks[id].frames;
  REQUIRE(frames.size() == 3);
  CHECK_FALSE(frames[0].signal);
  CHECK(frames[1].signal);
  CHECK_FALSE(frames[2].signal);
}

TEST_CASE("thousands of deep stacks are symbolised, each frame by its own process's maps") {
  Trace trace = trace_of_self();
  const Tid self = static_cast<Tid>(::getpid());
  const uint64_t leaf = address_of(reinterpret_cast<void*>(&cw_symbolize_test_leaf));
  const uint64_t caller = address_of(reinterpret_cast<void*>(&cw_symbolize_test_caller));
  const uint64_t now = monotonic_now_ns();
  for (uint64_t i = 0; i < 5000; ++i) {
    std::vector<uint64_t> ips{leaf + i % 4};
    for (int f = 0; f < 31; ++f) ips.push_back(caller + 1 + (i + f) % 4);
    add_stack_event(trace, now + i, self, std::move(ips));
  }
  SymbolizeReport report = symbolize_stacks(trace);
  CHECK(report.stacks_symbolized == 5000);
  CHECK(report.frames_resolved == 5000 * 32);
  CHECK(names(trace, 4999)[31] == "cw_symbolize_test_caller");
}

TEST_CASE("a stack is looked up in the maps of its event's time; later maps supersede") {
  Trace trace = trace_of_self();
  const Tid self = static_cast<Tid>(::getpid());
  const uint64_t leaf = address_of(reinterpret_cast<void*>(&cw_symbolize_test_leaf));
  const uint64_t maps_time = trace.maps.front().ts;
  // The process "execs" at maps_time + 1000: a new file now covers the same addresses.
  const MapRecord* text = nullptr;
  for (const MapRecord& m : trace.maps)
    if (leaf >= m.start && leaf < m.end) text = &m;
  REQUIRE(text != nullptr);
  MapRecord replaced = *text;
  replaced.ts = maps_time + 1000;
  replaced.path = trace.strings.intern("/nonexistent/other-program");
  replaced.build_id = trace.strings.intern("00112233");
  trace.maps.push_back(replaced);
  trace.sort_maps();

  StackId before_maps = add_stack_event(trace, maps_time - 1, self, {leaf});
  StackId before_exec = add_stack_event(trace, maps_time + 999, self, {leaf + 1});
  StackId after_exec = add_stack_event(trace, maps_time + 1000, self, {leaf + 2});
  SymbolizeReport report = symbolize_stacks(trace);
  CHECK(trace.stacks[before_maps].symbols.empty());
  CHECK(names(trace, before_exec) == std::vector<std::string>{"cw_symbolize_test_leaf"});
  CHECK(trace.stacks[after_exec].symbols.empty());
  CHECK(report.stacks_symbolized == 1);
  CHECK(report.frames_resolved == 1);
  CHECK(report.frames_unresolved == 2);
  CHECK(report.frames_outside_maps == 1);
  CHECK(report.files_not_found ==
        std::vector<std::string>{"/nonexistent/other-program (build id 00112233)"});
}

TEST_CASE("a file missing from its path is found by build id among the debug files") {
  Trace trace = trace_of_self();
  const Tid self = static_cast<Tid>(::getpid());
  const uint64_t leaf = address_of(reinterpret_cast<void*>(&cw_symbolize_test_leaf));
  const std::string exe = fs::canonical("/proc/self/exe").string();
  const std::string build_id = read_build_id(exe);
  REQUIRE(build_id.size() == 40);
  const fs::path debug_dir =
      fs::temp_directory_path() / fmt::format("cw_symbolize_test_{}", ::getpid());
  fs::create_directories(debug_dir / ".build-id" / build_id.substr(0, 2));
  fs::copy_file(exe,
                debug_dir / ".build-id" / build_id.substr(0, 2) / (build_id.substr(2) + ".debug"));
  // The recorded program has moved away since (uninstalled, or a container's path).
  for (MapRecord& m : trace.maps)
    if (trace.strings.get(m.path) == exe) m.path = trace.strings.intern("/gone/test-binary");
  StackId stack = add_stack_event(trace, monotonic_now_ns(), self, {leaf + 3});

  SymbolizeReport report = symbolize_stacks(trace, SymbolizeOptions{debug_dir.string()});
  fs::remove_all(debug_dir);
  CHECK(names(trace, stack) == std::vector<std::string>{"cw_symbolize_test_leaf"});
  CHECK(report.files_not_found.empty());
}

TEST_CASE("stacks already named, stacks no event uses and odd files are left alone") {
  Trace trace;
  trace.threads.push_back(ThreadInfo{5, 5, 0, false});
  trace.rebuild_indexes();
  const StrId named = trace.strings.intern("given");
  StackId given = trace.add_stack(Stack{{0x1000}, {named}});
  trace.add_event(10, 5, trace.schema.find("syscall_enter"), 0, given);
  trace.add_stack(Stack{{0x1000}, {}});  // no event: its process is unknown
  // A "binary" that is not ELF, one that is empty, and one that does not exist.
  const fs::path dir = fs::temp_directory_path() / fmt::format("cw_symbolize_odd_{}", ::getpid());
  fs::create_directories(dir);
  { std::ofstream((dir / "text").string()) << "not an ELF file\n"; }
  { std::ofstream((dir / "empty").string()); }
  trace.maps.push_back(
      MapRecord{5, 0, 0x1000, 0x2000, 0, trace.strings.intern((dir / "text").string()), 0});
  trace.maps.push_back(
      MapRecord{5, 0, 0x2000, 0x3000, 0, trace.strings.intern((dir / "empty").string()), 0});
  trace.maps.push_back(
      MapRecord{5, 0, 0x3000, 0x4000, 0, trace.strings.intern("/nonexistent/lib.so"), 0});
  StackId odd = add_stack_event(trace, 20, 5, {0x1010, 0x2010, 0x3010, 0x9000, 0});

  SymbolizeReport report = symbolize_stacks(trace);
  fs::remove_all(dir);
  CHECK(trace.stacks[given].symbols == std::vector<StrId>{named});
  CHECK(trace.stacks[odd].symbols.empty());
  CHECK(report.stacks_symbolized == 0);
  CHECK(report.stacks_unused == 1);
  CHECK(report.frames_resolved == 0);
  CHECK(report.frames_unresolved == 5);
  CHECK(report.frames_outside_maps == 1);
  // Files that are not ELF cannot be used either, so they are named with the missing one.
  CHECK(report.files_not_found == std::vector<std::string>{"/nonexistent/lib.so",
                                                           (dir / "empty").string(),
                                                           (dir / "text").string()});
  // By the process whose frames they left unnamed, for notes about that process only.
  CHECK(report.files_not_found_by_pid ==
        std::map<Pid, std::vector<std::string>>{
            {5, {"/nonexistent/lib.so", (dir / "empty").string(), (dir / "text").string()}}});
}

TEST_CASE("a child that forked without exec is symbolised with its parent's maps") {
  Trace trace = trace_of_self();
  const Pid self = static_cast<Pid>(::getpid());
  const Pid child = self + 100000;  // no maps of its own
  trace.processes.push_back(ProcessInfo{child, self, 0, 0});
  trace.threads.push_back(ThreadInfo{child, child, 0, false});
  trace.rebuild_indexes();
  const uint64_t leaf = address_of(reinterpret_cast<void*>(&cw_symbolize_test_leaf));
  StackId stack = add_stack_event(trace, monotonic_now_ns(), child, {leaf});
  symbolize_stacks(trace);
  CHECK(names(trace, stack) == std::vector<std::string>{"cw_symbolize_test_leaf"});
}

// The fixture library (symbolize_fixture.c) loaded from the build tree, and the addresses
// its functions give: the leaf's return address (inside code inlined into
// cw_fixture_outer) and the leaf itself.
struct Fixture {
  std::string path;
  uint64_t return_address = 0;
  uint64_t leaf = 0;
  uint64_t base = 0;  // where the library is loaded (its first segment maps offset 0)
};

Fixture load_fixture(const std::string& name) {
  Fixture fx;
  fx.path = fs::canonical(fs::path(CW_SYMFIXTURE_DIR) / name).string();
  void* handle = ::dlopen(fx.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(handle != nullptr, ::dlerror());
  auto run = reinterpret_cast<void (*)(void**, void**)>(::dlsym(handle, "cw_fixture_run"));
  REQUIRE(reinterpret_cast<void*>(run) != nullptr);
  void* ret = nullptr;
  void* leaf = nullptr;
  run(&ret, &leaf);
  Dl_info info{};
  REQUIRE(::dladdr(ret, &info) != 0);
  fx.return_address = address_of(ret);
  fx.leaf = address_of(leaf);
  fx.base = address_of(info.dli_fbase);
  return fx;  // stays loaded: the maps taken next must show it
}

std::string base_name(std::string_view path) {
  return std::string(path.substr(path.find_last_of('/') + 1));
}

// The leaf and its caller through the inlined function, as symbolisation must give them.
void check_inlined_frames(const Trace& trace, StackId id) {
  const std::vector<Frame>& f = trace.stacks[id].frames;
  REQUIRE(f.size() == 3);
  CHECK(trace.strings.get(f[0].function) == "cw_fixture_leaf");
  CHECK_FALSE(f[0].inlined);
  CHECK(base_name(trace.strings.get(f[0].file)) == "symbolize_fixture.c");
  CHECK(trace.strings.get(f[1].function) == "cw_fixture_inlined");
  CHECK(f[1].inlined);
  CHECK(base_name(trace.strings.get(f[1].file)) == "symbolize_fixture.c");
  CHECK(f[1].line == 17);  // the leaf's call, inside the inlined function
  CHECK(trace.strings.get(f[2].function) == "cw_fixture_outer");
  CHECK_FALSE(f[2].inlined);
  CHECK(f[2].line == 23);  // where cw_fixture_inlined was inlined
  CHECK(f[1].ip == f[2].ip);
  CHECK(frame_text(trace.strings, f[1]).ends_with("symbolize_fixture.c:17)"));
  // Stack::symbols stays one per ip: the function each ip is in.
  CHECK(names(trace, id) == std::vector<std::string>{"cw_fixture_leaf", "cw_fixture_outer"});
}

TEST_CASE("an ip in inlined code gives the inlined function and its caller, with lines") {
  Fixture fx = load_fixture("libcw_symfixture.so");
  Trace trace = trace_of_self();
  const Tid self = static_cast<Tid>(::getpid());
  StackId id = add_stack_event(trace, monotonic_now_ns(), self, {fx.leaf, fx.return_address});
  SymbolizeReport report = symbolize_stacks(trace);
  check_inlined_frames(trace, id);
  CHECK(report.frames_resolved == 2);
}

TEST_CASE("a stripped library is named by its separate debug file, found by build id") {
  Fixture fx = load_fixture("libcw_symfixture_stripped.so");
  const std::string debug = (fs::path(CW_SYMFIXTURE_DIR) / "libcw_symfixture.debug").string();
  const std::string build_id = read_build_id(fx.path);
  REQUIRE(build_id.size() > 2);
  REQUIRE(read_build_id(debug) == build_id);
  const Tid self = static_cast<Tid>(::getpid());
  {
    // Without the debug file the hidden functions have no symbol: frames are named by
    // the file and offset, which stay the same across runs (ASLR moves only the base).
    Trace trace = trace_of_self();
    StackId id = add_stack_event(trace, monotonic_now_ns(), self, {fx.return_address});
    const fs::path empty_dir =
        fs::temp_directory_path() / fmt::format("cw_symbolize_nodebug_{}", ::getpid());
    SymbolizeReport report = symbolize_stacks(trace, SymbolizeOptions{empty_dir.string()});
    CHECK(trace.stacks[id].symbols.empty());  // left for a later run with the debug file
    CHECK(report.frames_unresolved == 1);
    REQUIRE(trace.stacks[id].frames.size() == 1);
    const Frame& f = trace.stacks[id].frames[0];
    CHECK(f.offset == fx.return_address - fx.base);
    CHECK(frame_name(trace.strings, f) ==
          fmt::format("libcw_symfixture_stripped.so+{:#x}", fx.return_address - fx.base));
  }
  const fs::path debug_dir =
      fs::temp_directory_path() / fmt::format("cw_symbolize_debug_{}", ::getpid());
  fs::create_directories(debug_dir / ".build-id" / build_id.substr(0, 2));
  fs::copy_file(debug,
                debug_dir / ".build-id" / build_id.substr(0, 2) / (build_id.substr(2) + ".debug"),
                fs::copy_options::overwrite_existing);
  Trace trace = trace_of_self();
  StackId id = add_stack_event(trace, monotonic_now_ns(), self, {fx.leaf, fx.return_address});
  SymbolizeReport report = symbolize_stacks(trace, SymbolizeOptions{debug_dir.string()});
  fs::remove_all(debug_dir);
  check_inlined_frames(trace, id);
  CHECK(report.files_not_found.empty());
}

}  // namespace
}  // namespace cw
