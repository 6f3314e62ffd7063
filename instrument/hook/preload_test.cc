// The preload library in a real program (hooked_program.c) run with LD_PRELOAD and the
// recorder's environment: same output as without it, each outcome noted, entry and exit of
// outer() and the static inner() recorded per thread, nested, in order; a forked child
// writes a log of its own and an exec'd image is hooked too.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/temp_dir.h"
#include "instrument/hook/hook_log_reader.h"
#include "instrument/hook/preload_path.h"

extern char** environ;

using namespace cw::hook;

namespace {

struct Run {
  int status = -1;
  pid_t pid = 0;
  std::string out, err;
};

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(fd);
  return text;
}

// Runs `args` with the test's environment plus `extra` ("NAME=VALUE"), capturing stdout
// and stderr (small outputs: read one after the other).
Run run(const std::vector<std::string>& args, const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "CAUSEWAY_", 9) != 0)
      env.emplace_back(*e);
  env.insert(env.end(), extra.begin(), extra.end());
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int out[2], err[2];
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  Run result;
  result.pid = fork();
  REQUIRE(result.pid >= 0);
  if (result.pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  result.out = read_all(out[0]);
  result.err = read_all(err[0]);
  waitpid(result.pid, &result.status, 0);
  return result;
}

const char* const kFunctions =
    "1:outer;2:inner@cw-hooked-program;3:no_such_function;4:tiny;nonsense";

std::vector<std::string> hook_env(const cw::TempDir& dir) {
  return {std::string("LD_PRELOAD=") + CW_PRELOAD_LIBRARY, "CAUSEWAY_HOOK_DIR=" + dir.path(),
          std::string("CAUSEWAY_HOOK_FUNCTIONS=") + kFunctions};
}

// The events of each (pid, tid), in the order delivered.
using PerThread = std::map<std::pair<uint32_t, uint32_t>, std::vector<HookEvent>>;

PerThread read_events(HookLogReader& reader) {
  PerThread threads;
  reader.poll([&](const HookEvent& e) { threads[{e.pid, e.tid}].push_back(e); });
  return threads;
}

// One call of outer(): outer enters, inner enters and exits twice, outer exits.
void check_outer_calls(const std::vector<HookEvent>& events, size_t calls) {
  REQUIRE(events.size() == 6 * calls);
  const std::pair<uint32_t, bool> pattern[6] = {{1, false}, {2, false}, {2, true},
                                                {2, false}, {2, true},  {1, true}};
  for (size_t i = 0; i < events.size(); ++i) {
    CAPTURE(i);
    CHECK(events[i].fn_index == pattern[i % 6].first);
    CHECK(events[i].exit == pattern[i % 6].second);
    if (i) CHECK(events[i].ts >= events[i - 1].ts);
  }
}

// The addresses "hooked at 0x…" notes give for (pid, function index); a pid's images
// (before and after an exec) each add theirs.
std::multimap<std::pair<uint32_t, uint32_t>, uint64_t> hooked_addresses(
    const std::vector<HookNote>& notes) {
  std::multimap<std::pair<uint32_t, uint32_t>, uint64_t> addresses;
  for (const HookNote& n : notes)
    if (n.text.rfind("hooked at 0x", 0) == 0)
      addresses.emplace(std::make_pair(n.pid, n.fn_index),
                        std::stoull(n.text.substr(12), nullptr, 16));
  return addresses;
}

// Every event carries the address of the function it was hooked at (the log's hook table).
void check_addresses(const PerThread& threads, const std::vector<HookNote>& notes) {
  const auto addresses = hooked_addresses(notes);
  for (const auto& [id, events] : threads)
    for (const HookEvent& e : events) {
      auto [from, to] = addresses.equal_range({id.first, e.fn_index});
      bool known = false;
      for (auto it = from; it != to; ++it) known = known || it->second == e.address;
      CHECK_MESSAGE(known, "pid " << id.first << " fn " << e.fn_index << " address " << e.address);
    }
}

void check_notes(const std::vector<HookNote>& notes, uint32_t pid) {
  std::vector<const HookNote*> mine;
  for (const HookNote& n : notes)
    if (n.pid == pid) mine.push_back(&n);
  REQUIRE(mine.size() == 5);
  const std::string program = std::filesystem::canonical(CW_HOOKED_PROGRAM).string();
  CHECK(mine[0]->fn_index == 1);
  CHECK(mine[0]->text.rfind("hooked at 0x", 0) == 0);
  CHECK(mine[0]->text.find(" (outer in " + program + ")") != std::string::npos);
  CHECK(mine[1]->fn_index == 2);
  CHECK(mine[1]->text.find(" (inner in " + program + ")") != std::string::npos);
  CHECK(mine[2]->fn_index == 3);
  CHECK(mine[2]->text == "not found: no function no_such_function in the program or its libraries");
  CHECK(mine[3]->fn_index == 4);
  CHECK(mine[3]->text.rfind("refused: the function at 0x", 0) == 0);
  CHECK(mine[3]->text.find(" is 3 bytes long, shorter than the 5-byte jump") != std::string::npos);
  CHECK(mine[4]->fn_index == 0xffffffff);
  CHECK(mine[4]->text ==
        "bad entry at byte 60 of CAUSEWAY_HOOK_FUNCTIONS: 'nonsense' (expected "
        "INDEX:NAME[@BINARY])");
}

}  // namespace

TEST_CASE("threads: same output, notes, every call's entry and exit per thread") {
  cw::TempDir dir("cw-preload-test");
  const std::vector<std::string> args{CW_HOOKED_PROGRAM, "threads", "4", "500"};
  const Run plain = run(args, {});
  REQUIRE(plain.status == 0);
  const Run hooked = run(args, hook_env(dir));
  REQUIRE(hooked.status == 0);
  CHECK(hooked.out == plain.out);
  CHECK(hooked.err.empty());

  const std::string log = dir.path("hooks." + std::to_string(hooked.pid));
  struct stat info {};
  REQUIRE(stat(log.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);

  HookLogReader reader(dir.path());
  const auto notes = reader.take_notes();
  check_notes(notes, static_cast<uint32_t>(hooked.pid));
  const PerThread threads = read_events(reader);
  CHECK(reader.lost() == 0);
  check_addresses(threads, notes);
  REQUIRE(threads.size() == 5);
  for (const auto& [id, events] : threads) {
    CAPTURE(id.second);
    CHECK(id.first == static_cast<uint32_t>(hooked.pid));
    // The main thread (tid = pid) calls outer once; each worker 500 times.
    check_outer_calls(events, id.second == id.first ? 1 : 500);
  }
}

TEST_CASE("fork and exec: the child writes its own log and the exec'd image is hooked") {
  cw::TempDir dir("cw-preload-test");
  const std::vector<std::string> args{CW_HOOKED_PROGRAM, "family"};
  const Run plain = run(args, {});
  REQUIRE(plain.status == 0);
  const Run hooked = run(args, hook_env(dir));
  REQUIRE(hooked.status == 0);
  CHECK(hooked.out == plain.out);

  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 3);
  CHECK(std::find(files.begin(), files.end(), "hooks." + std::to_string(hooked.pid)) !=
        files.end());

  HookLogReader reader(dir.path());
  const auto notes = reader.take_notes();
  const PerThread threads = read_events(reader);
  REQUIRE(threads.size() == 2);
  uint32_t child = 0;
  for (const auto& [id, events] : threads) {
    CHECK(id.first == id.second);  // single-threaded processes
    if (id.first == static_cast<uint32_t>(hooked.pid)) {
      check_outer_calls(events, 2);  // outer(1) before the fork, outer(4) after
    } else {
      child = id.first;
      check_outer_calls(events, 2);  // outer(2) after the fork, outer(3) after exec
    }
  }
  REQUIRE(child != 0);
  check_addresses(threads, notes);
  // The child's logs: hooks.CHILD after the fork, hooks.CHILD.2 after exec.
  CHECK(std::find(files.begin(), files.end(), "hooks." + std::to_string(child)) != files.end());
  CHECK(std::find(files.begin(), files.end(), "hooks." + std::to_string(child) + ".2") !=
        files.end());
  check_notes(notes, static_cast<uint32_t>(hooked.pid));
  // The forked child's log repeats the parent's notes; the exec'd image has its own.
  size_t child_notes = 0;
  for (const HookNote& n : notes) child_notes += n.pid == child;
  CHECK(child_notes == 10);
}

TEST_CASE("without a usable log directory the program runs as it would, unhooked") {
  const std::vector<std::string> args{CW_HOOKED_PROGRAM, "threads", "2", "10"};
  const Run plain = run(args, {});
  const Run hooked = run(
      args, {std::string("LD_PRELOAD=") + CW_PRELOAD_LIBRARY, "CAUSEWAY_HOOK_DIR=/nonexistent-dir",
             std::string("CAUSEWAY_HOOK_FUNCTIONS=") + kFunctions});
  CHECK(hooked.status == 0);
  CHECK(hooked.out == plain.out);
  CHECK(hooked.err == "causeway-preload[" + std::to_string(hooked.pid) +
                          "]: cannot create /nonexistent-dir/.hooks." + std::to_string(hooked.pid) +
                          ".tmp: No such file or directory\n");
}

TEST_CASE("the preload library is found next to the executable or from CAUSEWAY_PRELOAD") {
  const std::string built = std::filesystem::canonical(CW_PRELOAD_LIBRARY).string();
  setenv("CAUSEWAY_PRELOAD", CW_PRELOAD_LIBRARY, 1);
  CHECK(find_preload_library() == built);
  setenv("CAUSEWAY_PRELOAD", "/nonexistent/libcauseway-preload.so", 1);
  CHECK(find_preload_library().empty());
  unsetenv("CAUSEWAY_PRELOAD");
  // hook_tests lives in BUILD/instrument/hook/ and the library in BUILD/lib/: not next to
  // it; ./lib is looked at last.
  cw::TempDir dir("cw-preload-path");
  std::filesystem::create_directories(dir.path("lib"));
  std::filesystem::copy_file(CW_PRELOAD_LIBRARY, dir.path("lib/libcauseway-preload.so"));
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  CHECK(find_preload_library() ==
        std::filesystem::canonical(dir.path("lib/libcauseway-preload.so")).string());
  std::filesystem::current_path(cwd);
  CHECK(find_preload_library().empty());
}
