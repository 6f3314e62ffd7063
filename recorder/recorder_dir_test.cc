#include "recorder/recorder_dir.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "base/temp_dir.h"

namespace cw {
namespace {

namespace fs = std::filesystem;

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
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

RecorderDir open_dir(const std::string& path) {
  std::optional<RecorderDir> dir = RecorderDir::open(path, true);
  REQUIRE(dir);
  return std::move(*dir);
}

// A child of this test (the same program, as a recorder is causeway) that takes the
// recorder's lock in `dir`, writes its pid file and waits to be killed.
pid_t start_lock_holder(const RecorderDir& dir) {
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(ready[0]);
    std::string why;
    if (take_recorder_lock(dir, &why) < 0) _exit(1);
    write_pid_file(dir);
    (void)!write(ready[1], "K", 1);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 0;
  REQUIRE(read(ready[0], &ok, 1) == 1);
  close(ready[0]);
  return child;
}

void stop_child(pid_t child) {
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

// A process that is not this program: `sleep`.
pid_t start_sleep() {
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until it has exec'd, it is still this program.
  for (int i = 0; i < 500 && runs_this_program(child); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return child;
}

TEST_CASE("the recorder's folder is created 0700; a missing one is not created unless asked") {
  TempDir tmp("cw-recorder-dir-test");
  CHECK_FALSE(RecorderDir::open(tmp.path("absent"), false));
  CHECK_FALSE(fs::exists(tmp.path("absent")));
  RecorderDir dir = open_dir(tmp.path("a/b/rec"));
  struct stat st {};
  REQUIRE(stat(tmp.path("a/b/rec").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  // One of this user's that others may read is narrowed when it is to be written.
  fs::create_directory(tmp.path("open"));
  chmod(tmp.path("open").c_str(), 0755);
  open_dir(tmp.path("open"));
  REQUIRE(stat(tmp.path("open").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
}

TEST_CASE(
    "a folder that is a link, writable by others, or below one others can change is refused") {
  TempDir tmp("cw-recorder-dir-test");
  fs::create_directory(tmp.path("real"));
  chmod(tmp.path("real").c_str(), 0700);
  fs::create_directory_symlink(tmp.path("real"), tmp.path("link"));
  auto refusal = [](const std::string& path) -> std::string {
    try {
      RecorderDir::open(path, true);
    } catch (const RecorderDirError& e) {
      CHECK(e.unsafe());
      return e.what();
    }
    return "";
  };
  CHECK(refusal(tmp.path("link")).find("is a symbolic link") != std::string::npos);

  fs::create_directory(tmp.path("shared"));
  chmod(tmp.path("shared").c_str(), 0777);
  CHECK(refusal(tmp.path("shared")).find("writable by other users (mode 0777)") !=
        std::string::npos);
  // Inside a world-writable folder that is not sticky, anyone could rename it away.
  CHECK(refusal(tmp.path("shared/rec")).find("shared is writable by other users") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path("shared/rec")));
  // Sticky (as /tmp is), only an entry's owner may rename it: a folder of this user's
  // inside is fine.
  fs::create_directory(tmp.path("sticky"));
  chmod(tmp.path("sticky").c_str(), 01777);
  CHECK(RecorderDir::open(tmp.path("sticky/rec"), true));

  if (geteuid() != 0) return;  // the rest needs a folder owned by someone else
  fs::create_directory(tmp.path("theirs"));
  chmod(tmp.path("theirs").c_str(), 0700);
  REQUIRE(chown(tmp.path("theirs").c_str(), 65534, 65534) == 0);
  CHECK(refusal(tmp.path("theirs")).find("is owned by") != std::string::npos);
  CHECK(refusal(tmp.path("theirs/rec")).find("is owned by") != std::string::npos);
}

TEST_CASE("files in the folder are never written through a link or a hard link") {
  TempDir tmp("cw-recorder-dir-test");
  write_file(tmp.path("precious"), "keep\n");
  RecorderDir dir = open_dir(tmp.path("rec"));
  fs::create_symlink(tmp.path("precious"), tmp.path("rec/recorder.log"));
  std::string why;
  CHECK(dir.open_for_write("recorder.log", &why) < 0);
  CHECK(why.find("symbolic link") != std::string::npos);
  fs::remove(tmp.path("rec/recorder.log"));
  fs::create_hard_link(tmp.path("precious"), tmp.path("rec/recorder.log"));
  CHECK(dir.open_for_write("recorder.log", &why) < 0);
  CHECK(why.find("hard links") != std::string::npos);
  // A link planted where the status is written beside its file is removed, not followed.
  fs::create_symlink(tmp.path("precious"), tmp.path("rec/status.json.tmp"));
  CHECK(dir.replace_file("status.json", "{}\n", &why));
  CHECK(read_whole(tmp.path("rec/status.json")) == "{}\n");
  CHECK(read_whole(tmp.path("precious")) == "keep\n");
  // Nor read through one.
  fs::remove(tmp.path("rec/status.json"));
  fs::create_symlink(tmp.path("precious"), tmp.path("rec/status.json"));
  CHECK_FALSE(dir.read_file("status.json", 100));
  CHECK(dir.read_file("recorder.log", 100) == "keep\n");
  CHECK_FALSE(dir.read_file("recorder.log", 2));  // larger than asked: not read
}

TEST_CASE("the ring's folder is removed without following links; a link in its place is refused") {
  TempDir tmp("cw-recorder-dir-test");
  write_file(tmp.path("precious"), "keep\n");
  fs::create_directory(tmp.path("elsewhere"));
  write_file(tmp.path("elsewhere/ring-0000000001.cwt"), "theirs\n");
  RecorderDir dir = open_dir(tmp.path("rec"));
  fs::create_directory_symlink(tmp.path("elsewhere"), tmp.path("rec/ring"));
  std::string why;
  CHECK_FALSE(dir.remove_tree("ring", &why));
  CHECK(why.find("symbolic link") != std::string::npos);
  CHECK(fs::exists(tmp.path("elsewhere/ring-0000000001.cwt")));
  fs::remove(tmp.path("rec/ring"));
  fs::create_directories(tmp.path("rec/ring/sub"));
  write_file(tmp.path("rec/ring/ring-0000000001.cwt"), "x");
  fs::create_symlink(tmp.path("precious"), tmp.path("rec/ring/sub/file"));
  fs::create_directory_symlink(tmp.path("elsewhere"), tmp.path("rec/ring/dir"));
  CHECK(dir.remove_tree("ring", &why));
  CHECK_FALSE(fs::exists(tmp.path("rec/ring")));
  CHECK(read_whole(tmp.path("precious")) == "keep\n");
  CHECK(fs::exists(tmp.path("elsewhere/ring-0000000001.cwt")));
  CHECK(dir.remove_tree("ring", &why));  // gone already: nothing to do
}

TEST_CASE("the recorder is the process holding the folder's lock, and only it is signalled") {
  TempDir tmp("cw-recorder-dir-test");
  RecorderDir dir = open_dir(tmp.path("rec"));
  pid_t recorder = start_lock_holder(dir);
  CHECK(recorder_lock_holder(dir) == recorder);
  RecorderState state = recorder_state(dir);
  CHECK(state.running == recorder);
  CHECK(state.stale_pid == 0);
  std::string why;
  CHECK(take_recorder_lock(dir, &why) < 0);  // a second recorder cannot start
  CHECK(why.find("already running") != std::string::npos);
  CHECK(signal_recorder(dir, recorder, SIGKILL, &why));
  waitpid(recorder, nullptr, 0);
  CHECK_FALSE(recorder_state(dir).running);
}

TEST_CASE("a pid file naming another process never makes it the recorder, nor signalled") {
  TempDir tmp("cw-recorder-dir-test");
  RecorderDir dir = open_dir(tmp.path("rec"));
  pid_t victim = start_sleep();
  CHECK_FALSE(runs_this_program(victim));
  write_file(
      tmp.path("rec/recorder.pid"),
      std::to_string(victim) + " " + std::to_string(read_proc_stat(victim)->start_time) + "\n");
  RecorderState state = recorder_state(dir);
  CHECK_FALSE(state.running);
  CHECK(state.stale_pid == victim);
  CHECK(state.stale_why.find("does not hold the recorder's lock") != std::string::npos);
  std::string why;
  CHECK_FALSE(signal_recorder(dir, victim, SIGTERM, &why));
  CHECK(why.find("does not hold the recorder's lock") != std::string::npos);
  // Holding the lock is not enough either: it must be causeway.
  pid_t other = fork();
  REQUIRE(other >= 0);
  if (other == 0) {
    // Kept open across exec (not close-on-exec), so the lock survives it.
    int fd = open(dir.paths().lock.c_str(), O_RDWR | O_CREAT, 0600);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fd < 0 || fcntl(fd, F_SETLK, &fl) != 0) _exit(1);
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 500 && (runs_this_program(other) || recorder_lock_holder(dir) != other); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(recorder_lock_holder(dir) == other);
  state = recorder_state(dir);
  CHECK_FALSE(state.running);
  CHECK(state.foreign_pid == other);
  CHECK_FALSE(signal_recorder(dir, other, SIGTERM, &why));
  CHECK(why.find("is not causeway") != std::string::npos);
  CHECK(read_proc_stat(victim)->state != 'Z');
  CHECK(read_proc_stat(other)->state != 'Z');
  stop_child(victim);
  stop_child(other);
}

TEST_CASE("the pid file written by a recorder names it, with its start time") {
  TempDir tmp("cw-recorder-dir-test");
  RecorderDir dir = open_dir(tmp.path("rec"));
  write_pid_file(dir);
  std::ifstream in(dir.paths().pid_file);
  int pid = 0;
  uint64_t start = 0;
  in >> pid >> start;
  CHECK(pid == getpid());
  CHECK(start == read_proc_stat(getpid())->start_time);
}

TEST_CASE("a killed recorder that is still a zombie is stale, and its pid file is removed") {
  TempDir tmp("cw-recorder-dir-test");
  RecorderDir dir = open_dir(tmp.path("rec"));
  pid_t child = start_lock_holder(dir);
  CHECK(recorder_state(dir).running == child);
  kill(child, SIGKILL);
  // Not reaped: kill(pid, 0) would still succeed on it.
  REQUIRE(wait_for_state(child, 'Z'));
  CHECK(kill(child, 0) == 0);
  RecorderState state = recorder_state(dir);
  CHECK_FALSE(state.running);
  CHECK(state.stale_pid == child);
  CHECK(state.stale_why == "it is a zombie: it was killed, or died, and was not reaped");
  CHECK(remove_stale_pid_file(dir, child));
  CHECK_FALSE(fs::exists(dir.paths().pid_file));
  waitpid(child, nullptr, 0);
  CHECK(recorder_state(dir).stale_pid == 0);  // no pid file: nothing stale
}

TEST_CASE("a pid taken by another process since is stale: its start time differs") {
  TempDir tmp("cw-recorder-dir-test");
  RecorderDir dir = open_dir(tmp.path("rec"));
  const uint64_t start = read_proc_stat(getpid())->start_time;
  write_file(dir.paths().pid_file,
             std::to_string(getpid()) + " " + std::to_string(start + 1) + "\n");
  RecorderState state = recorder_state(dir);
  CHECK_FALSE(state.running);
  CHECK(state.stale_why == "it is gone, and its pid is another process's now");
}

TEST_CASE("a stale pid file is left alone once another recorder has written its own") {
  TempDir tmp("cw-recorder-dir-test");
  RecorderDir dir = open_dir(tmp.path("rec"));
  write_pid_file(dir);
  CHECK_FALSE(remove_stale_pid_file(dir, getpid() + 1));
  CHECK(fs::exists(dir.paths().pid_file));
}

TEST_CASE("a marker stamped by another clock is stamped when it arrives") {
  TempDir tmp("cw-recorder-dir-test");
  RecorderDir dir = open_dir(tmp.path("rec"));
  MarkerSocket markers(dir);
  REQUIRE(markers.bound());
  auto now_ns = [] {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
  };
  // As `causeway mark` sends it: {ts, pid, tid} then the text. A sender in a time namespace
  // 3000 s behind, one whose clock is ahead, and one of this clock.
  auto send = [&](uint64_t ts, const std::string& text) {
    struct {
      uint64_t ts;
      uint32_t pid, tid;
    } h{ts, 7, 7};
    std::string msg(reinterpret_cast<const char*>(&h), sizeof h);
    msg += text;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", dir.paths().socket.c_str());
    CHECK(sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a) ==
          static_cast<ssize_t>(msg.size()));
    close(fd);
  };
  const uint64_t before = now_ns();
  send(before - 3'000'000'000'000ull, "behind");
  send(before + 3'000'000'000'000ull, "ahead");
  send(before - 20'000'000, "this clock, 20 ms ago");
  std::map<std::string, uint64_t> got;
  markers.drain([&](uint64_t ts, uint32_t, uint32_t, const std::string& text) { got[text] = ts; });
  const uint64_t after = now_ns();
  REQUIRE(got.size() == 3);
  CHECK((got["behind"] >= before && got["behind"] <= after));
  CHECK((got["ahead"] >= before && got["ahead"] <= after));
  CHECK(got["this clock, 20 ms ago"] == before - 20'000'000);
}

TEST_CASE("the marker socket replaces a stale socket of its own, never anything else") {
  TempDir tmp("cw-recorder-dir-test");
  write_file(tmp.path("precious"), "keep\n");
  RecorderDir dir = open_dir(tmp.path("rec"));
  fs::create_symlink(tmp.path("precious"), tmp.path("rec/marker.sock"));
  {
    MarkerSocket markers(dir);
    CHECK_FALSE(markers.bound());
  }
  CHECK(fs::is_symlink(tmp.path("rec/marker.sock")));
  fs::remove(tmp.path("rec/marker.sock"));
  {
    MarkerSocket first(dir);
    CHECK(first.bound());
    MarkerSocket second(dir);  // the first answers: left to it
    CHECK_FALSE(second.bound());
    CHECK(send_marker(dir.paths().socket, "hello"));
    std::string got;
    first.drain([&](uint64_t, uint32_t, uint32_t, const std::string& text) { got = text; });
    CHECK(got == "hello");
  }
  CHECK_FALSE(fs::exists(tmp.path("rec/marker.sock")));
  CHECK(read_whole(tmp.path("precious")) == "keep\n");
}

}  // namespace
}  // namespace cw
