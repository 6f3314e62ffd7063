#include "recorder/daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "recorder/bench_alternation.h"
#include "recorder/foreground.h"
#include "recorder/maps_capture.h"
#include "trace/command_marker.h"

namespace cw {

nlohmann::json recorder_status_json(const SessionStatus& s, const RecorderPaths& paths,
                                    uint64_t max_bytes) {
  // Keyed by CPU number, only CPUs that lost events: the shape `graph --json` gives.
  nlohmann::json lost_per_cpu = nlohmann::json::object();
  for (size_t cpu = 0; cpu < s.lost_per_cpu.size(); ++cpu)
    if (s.lost_per_cpu[cpu]) lost_per_cpu[std::to_string(cpu)] = s.lost_per_cpu[cpu];
  nlohmann::json j = {{"pid", getpid()},
                      {"dir", paths.dir},
                      {"records", s.records},
                      {"events", s.events},
                      {"first_ts", s.first_ts},
                      {"newest_ts", s.newest_ts},
                      {"lost_events", s.lost_total},
                      {"lost_per_cpu", lost_per_cpu},
                      {"maps_lost", s.maps_lost},
                      {"malformed_records", s.malformed}};
  if (s.ring)
    j["ring"] = {{"files", s.ring->files},
                 {"bytes", s.ring->bytes},
                 {"max_bytes", max_bytes},
                 {"events_written", s.ring->events_written},
                 {"events_overwritten", s.ring->events_overwritten},
                 {"oldest_ts", s.ring->oldest_ts},
                 {"newest_ts", s.ring->newest_ts}};
  return j;
}

bool write_status_file(const RecorderDir& dir, const nlohmann::json& j) {
  return dir.replace_file("status.json", j.dump(2) + "\n", nullptr);
}

nlohmann::json read_status_file(const RecorderDir& dir) {
  constexpr size_t kMaxStatus = 1 << 20;  // a status is a few hundred bytes
  nlohmann::json j;
  if (std::optional<std::string> text = dir.read_file("status.json", kMaxStatus))
    j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) j = nlohmann::json::object();
  return j;
}

namespace {

// Now, in UTC, as "2026-11-28T13:05:01Z".
std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

void run_daemon(const SessionOptions& options, const RecorderDir& dir, int ready_fd,
                int failure_exit) {
  // A process group of its own, so the terminal's signals do not reach it; not a session
  // of its own: the scheduler's autogroups would then weigh the recorder, alone, against
  // the whole workload's session, and a busy workload starves it into losing events.
  setpgid(0, 0);
  signal(SIGHUP, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  auto fail = [&](const std::string& why) {
    std::string msg = "E" + why;
    (void)!write(ready_fd, msg.data(), msg.size());
    _exit(failure_exit);
  };
  std::string why;
  // Held until this process exits: it is how `record stop` and `status` know the recorder
  // (the pid file is only a note for people). Taken first: the log of a recorder already
  // running is not to be emptied.
  if (take_recorder_lock(dir, &why) < 0) fail(why);
  const int log = dir.open_for_write("recorder.log", &why);
  if (log < 0) fail(why);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  dup2(null, 0);
  dup2(log, 1);
  dup2(log, 2);
  close(log);
  // The overhead bench's alternation (recorder/bench_alternation.h): a wrong value is said
  // before the programs are loaded.
  std::optional<BenchAlternation> alternation;
  if (const char* text = std::getenv("CAUSEWAY_BENCH_ALTERNATE")) {
    alternation = parse_bench_alternation(text, &why);
    if (!alternation) fail("$CAUSEWAY_BENCH_ALTERNATE: " + why);
  }
  // A new recording starts a new ring.
  if (!dir.remove_tree("ring", &why)) fail(why);
  const uint64_t max_bytes = options.ring ? options.ring->max_bytes : 0;
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(options);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  // What the recording lacks: in the log now, and in the ring as it stops (its first files
  // are gone by then on a long run).
  const std::vector<std::string> missing = session->missing_parts();
  for (const std::string& note : missing) std::cerr << "causeway: note: " << note << "\n";
  write_pid_file(dir);
  MarkerSocket markers(dir);
  catch_stop_signals(false);
  (void)!write(ready_fd, "K", 1);
  close(ready_fd);
  // What the recorder writes (its options), for scripts reading the status.
  const nlohmann::json stream = {{"calls", options.calls_at_switch ? "scheduler" : "syscalls"},
                                 {"full", options.full},
                                 {"min_wait_ns", options.calls_at_switch ? options.min_wait_ns : 0},
                                 {"pipe_bytes", !options.calls_at_switch || options.pipe_bytes}};
  auto status_json = [&] {
    nlohmann::json j = recorder_status_json(session->status(), dir.paths(), max_bytes);
    j["stream"] = stream;
    return j;
  };
  auto last_status = std::chrono::steady_clock::now() - std::chrono::hours(1);
  // Each switch of the alternation goes to the log with its wall-clock time, which the
  // bench matches with pgbench's progress reports (--progress-timestamp).
  uint64_t next_switch = 0, switches = 0;
  auto alternate = [&] {
    if (!alternation || monotonic_now_ns() < next_switch) return;
    const BenchState& state = alternation->states[switches++ % alternation->states.size()];
    session->set_hot_programs(state.scheduler, state.sockets);
    timespec wall{};
    clock_gettime(CLOCK_REALTIME, &wall);
    std::fprintf(stderr, "causeway: bench alternation: %lld.%09ld %s\n",
                 static_cast<long long>(wall.tv_sec), wall.tv_nsec, state.name.c_str());
    std::fflush(stderr);
    next_switch = monotonic_now_ns() + alternation->period_ns;
  };
  int rc = 0;
  try {
    while (!stop_requested()) {
      alternate();
      session->step(100);
      markers.drain([&](uint64_t ts, uint32_t pid, uint32_t tid, const std::string& text) {
        session->mark(ts, pid, tid, text);
      });
      auto now = std::chrono::steady_clock::now();
      if (now - last_status >= std::chrono::seconds(1)) {
        write_status_file(dir, status_json());
        last_status = now;
      }
    }
    const uint64_t stopping_at = monotonic_now_ns();
    for (const std::string& note : missing) session->mark(stopping_at, 0, 0, recorder_note(note));
    session->finish();
    auto j = status_json();
    j["stopped"] = true;
    j["stopped_at"] = utc_now();
    write_status_file(dir, j);
  } catch (const std::exception& e) {
    // Stopped on its own (a full disk): nobody is watching but the status file, which
    // `record status` reads, so it says when and why.
    std::cerr << "causeway: recorder stopped: " << e.what() << "\n";
    session->abandon();
    auto j = status_json();
    j["stopped"] = true;
    j["stopped_at"] = utc_now();
    j["stop_error"] = e.what();
    if (!write_status_file(dir, j))
      std::cerr << "causeway: could not write why into " << dir.paths().status_file << "\n";
    rc = failure_exit;
  }
  remove_stale_pid_file(dir, getpid());
  _exit(rc);
}

}  // namespace cw
