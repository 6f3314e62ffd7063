#include "tracer/daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "tracer/foreground.h"

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

void write_status_file(const RecorderPaths& paths, const nlohmann::json& j) {
  std::string tmp = paths.status_file + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
  }
  std::rename(tmp.c_str(), paths.status_file.c_str());
}

void run_daemon(const SessionOptions& options, const RecorderPaths& paths, int ready_fd,
                int failure_exit) {
  // A process group of its own, so the terminal's signals do not reach it; not a session
  // of its own: the scheduler's autogroups would then weigh the recorder, alone, against
  // the whole workload's session, and a busy workload starves it into losing events.
  setpgid(0, 0);
  signal(SIGHUP, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  int null = open("/dev/null", O_RDWR);
  int log = open(paths.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  dup2(null, 0);
  dup2(log >= 0 ? log : null, 1);
  dup2(log >= 0 ? log : null, 2);
  auto fail = [&](const std::string& why) {
    std::string msg = "E" + why;
    (void)!write(ready_fd, msg.data(), msg.size());
    _exit(failure_exit);
  };
  const uint64_t max_bytes = options.ring ? options.ring->max_bytes : 0;
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(options);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  write_pid_file(paths);
  MarkerSocket markers(paths.socket);
  catch_stop_signals(false);
  (void)!write(ready_fd, "K", 1);
  close(ready_fd);
  auto last_status = std::chrono::steady_clock::now() - std::chrono::hours(1);
  int rc = 0;
  try {
    while (!stop_requested()) {
      session->step(100);
      markers.drain([&](uint64_t ts, uint32_t pid, uint32_t tid, const std::string& text) {
        session->mark(ts, pid, tid, text);
      });
      auto now = std::chrono::steady_clock::now();
      if (now - last_status >= std::chrono::seconds(1)) {
        write_status_file(paths, recorder_status_json(session->status(), paths, max_bytes));
        last_status = now;
      }
    }
    session->finish();
    auto j = recorder_status_json(session->status(), paths, max_bytes);
    j["stopped"] = true;
    write_status_file(paths, j);
  } catch (const std::exception& e) {
    std::cerr << "causeway: recorder stopped: " << e.what() << "\n";
    rc = failure_exit;
  }
  unlink(paths.pid_file.c_str());
  _exit(rc);
}

}  // namespace cw
