#include "tracer/recorder_dir.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/temp_dir.h"

namespace cw {
namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// Waits (up to 5 s) until `pid` shows state `want` in /proc.
bool wait_for_state(pid_t pid, char want) {
  for (int i = 0; i < 500; ++i) {
    std::optional<ProcStat> s = read_proc_stat(pid);
    if (s && s->state == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_CASE("the pid file written by a recorder names it running, with its start time") {
  TempDir dir("cw-recorder-dir-test");
  RecorderPaths paths(dir.path());
  write_pid_file(paths);
  RecorderState state = recorder_state(paths);
  CHECK(state.running == getpid());
  CHECK(state.stale_pid == 0);
  std::ifstream in(paths.pid_file);
  int pid = 0;
  uint64_t start = 0;
  in >> pid >> start;
  CHECK(pid == getpid());
  CHECK(start == read_proc_stat(getpid())->start_time);
}

TEST_CASE("a killed recorder that is still a zombie is stale, and its pid file is removed") {
  TempDir dir("cw-recorder-dir-test");
  RecorderPaths paths(dir.path());
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  write_file(paths.pid_file, std::to_string(child) + " " +
                                 std::to_string(read_proc_stat(child)->start_time) + "\n");
  CHECK(recorder_state(paths).running == child);
  kill(child, SIGKILL);
  // Not reaped: kill(pid, 0) would still succeed on it.
  REQUIRE(wait_for_state(child, 'Z'));
  CHECK(kill(child, 0) == 0);
  RecorderState state = recorder_state(paths);
  CHECK_FALSE(state.running);
  CHECK(state.stale_pid == child);
  CHECK(state.stale_why == "it is a zombie: it was killed, or died, and was not reaped");
  CHECK(remove_stale_pid_file(paths, child));
  CHECK_FALSE(std::filesystem::exists(paths.pid_file));
  waitpid(child, nullptr, 0);
  CHECK(recorder_state(paths).stale_pid == 0);  // no pid file: nothing stale
}

TEST_CASE("a pid taken by another process since is stale: its start time differs") {
  TempDir dir("cw-recorder-dir-test");
  RecorderPaths paths(dir.path());
  const uint64_t start = read_proc_stat(getpid())->start_time;
  write_file(paths.pid_file, std::to_string(getpid()) + " " + std::to_string(start + 1) + "\n");
  RecorderState state = recorder_state(paths);
  CHECK_FALSE(state.running);
  CHECK(state.stale_why == "it is gone, and its pid is another process's now");
  // A pid file from an older causeway (no start time) is taken at its word when alive.
  write_file(paths.pid_file, std::to_string(getpid()) + "\n");
  CHECK(recorder_state(paths).running == getpid());
}

TEST_CASE("a stale pid file is left alone once another recorder has written its own") {
  TempDir dir("cw-recorder-dir-test");
  RecorderPaths paths(dir.path());
  write_pid_file(paths);
  CHECK_FALSE(remove_stale_pid_file(paths, getpid() + 1));
  CHECK(std::filesystem::exists(paths.pid_file));
}

}  // namespace
}  // namespace cw
