#include "recorder/foreground.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>

#include "base/terminal_text.h"
#include "recorder/recorder_dir.h"
#include "trace/command_marker.h"

namespace cw {

namespace {

// How many stop signals arrived, and whether one was SIGTERM (sent to causeway alone,
// where Ctrl-C and a hang-up reach the command too).
volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_terminated = 0;
void on_stop_signal(int sig) {
  if (g_stop < 100) g_stop = g_stop + 1;
  if (sig == SIGTERM) g_terminated = 1;
}

}  // namespace

void catch_stop_signals(bool from_terminal) {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  if (from_terminal) {
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
  }
}

bool stop_requested() {
  return g_stop != 0;
}

namespace {

void print_messages(RecordInstrumentation& instrumentation) {
  for (const std::string& m : instrumentation.take_messages())
    std::cerr << "causeway: " << m << "\n";
}

// The command is stopped at its exec: resolve and attach the instrumentation in its fresh
// image, then let it run; false when it cannot be attached (the command is killed). A command that
// failed to exec is left to report that itself.
bool instrument_command(Session& session, RecordInstrumentation& instrumentation, pid_t child,
                        std::optional<int>* ended) {
  int wstatus = 0;
  if (waitpid(child, &wstatus, 0) != child) return true;
  // It ended before its exec (it could not be run): reaped here, so the recording ends now.
  if (!WIFSTOPPED(wstatus)) {
    *ended = wstatus;
    return true;
  }
  bool ok = true;
  try {
    instrumentation.attach(session.probes(), static_cast<uint32_t>(child), true);
  } catch (const kernel::ProbeError& e) {
    print_messages(instrumentation);
    std::cerr << "causeway: cannot instrument: " << e.what() << "\n";
    kill(child, SIGKILL);
    ok = false;
  }
  ptrace(PTRACE_DETACH, child, nullptr, nullptr);
  if (!ok) waitpid(child, &wstatus, 0);
  return ok;
}

// The programs the recorded processes started since the last step get the named
// functions' uprobes (RecordInstrumentation::attach_started). A refusal is said and the
// recording goes on: the rest of it is still worth having.
void attach_started_programs(Session& session, RecordInstrumentation& instrumentation) {
  if (!instrumentation.follows_started_programs()) return;
  for (uint32_t pid : session.decoder().take_execs()) {
    try {
      instrumentation.attach_started(session.probes(), pid);
    } catch (const kernel::ProbeError& e) {
      std::cerr << "causeway: cannot instrument pid " << pid << ": " << e.what() << "\n";
    }
  }
}

}  // namespace

std::optional<ForegroundResult> record_in_foreground(ForegroundRecording r) {
  const ForegroundRecording& args = r;
  SessionOptions& options = r.options;
  std::unique_ptr<RecordInstrumentation>& instrumentation = r.instrumentation;
  const auto& command_env = r.command_env;
  const bool stop_at_exec = r.stop_at_exec;

  // The command waits at a gate until the probes are attached, so its start is recorded.
  int gate[2] = {-1, -1};
  pid_t child = -1;
  // The command's name as messages show it: its bytes are the user's, and may hold escape
  // sequences a terminal would act on. Made here: the child only writes it out.
  const std::string command_name =
      args.command.empty() ? std::string() : terminal_text(args.command[0]);
  std::optional<int> ended;  // the command's status, when it ended before it could be traced
  if (!args.command.empty()) {
    if (pipe2(gate, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
    child = fork();
    if (child < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
    if (child == 0) {
      close(gate[1]);
      char go = 0;
      if (read(gate[0], &go, 1) != 1) _exit(126);  // the recorder failed: do not run
      for (const auto& [name, value] : command_env) setenv(name.c_str(), value.c_str(), 1);
      if (stop_at_exec && ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(126);
      std::vector<char*> argv;
      for (const auto& a : args.command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "causeway: cannot run %s: %s\n", command_name.c_str(),
                   std::strerror(errno));
      _exit(127);
    }
    close(gate[0]);
    if (!options.pids.empty()) options.pids.push_back(static_cast<uint32_t>(child));
  }

  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(options);
  } catch (const kernel::ProbeError& e) {
    if (child > 0) close(gate[1]), waitpid(child, nullptr, 0);
    std::cerr << "causeway: cannot record: " << e.what() << "\n";
    return std::nullopt;
  } catch (const std::exception& e) {
    if (child > 0) close(gate[1]), waitpid(child, nullptr, 0);
    std::cerr << "causeway: " << e.what() << "\n";
    return std::nullopt;
  }

  // Markers reach this recording through the recorder's folder, when there is one.
  std::optional<MarkerSocket> markers;
  if (args.dir) markers.emplace(*args.dir);
  catch_stop_signals(true);
  std::vector<std::string> notes = args.notes;
  if (const std::string& problem = session->probes().sampling_problem(); !problem.empty()) {
    // Said, and in the trace: a recording without the samples asked for is not passed off
    // as one with them.
    std::string note = "no cpu-clock samples: " + problem + "; recording without them";
    std::cerr << "causeway: warning: " << note << "\n";
    notes.push_back(note);
  }
  // What the recording lacks (the kernel refused it, or it was not asked for): said, and
  // kept in the trace.
  for (std::string& note : session->missing_parts()) {
    std::cerr << "causeway: note: " << note << "\n";
    notes.push_back(std::move(note));
  }
  if (!notes.empty()) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const uint32_t on = child > 0           ? static_cast<uint32_t>(child)
                        : args.pids.empty() ? 0
                                            : args.pids[0];
    for (const std::string& note : notes)
      session->mark(static_cast<uint64_t>(now.tv_sec) * 1000000000ull + now.tv_nsec, on, on,
                    recorder_note(note));
  }
  if (child > 0) {
    // Names the traced command for `debug --hang auto` (engine/diagnosis/symptom.h), on the child's
    // own thread, before it runs.
    std::string text = command_marker(static_cast<Pid>(child), args.command);
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    session->mark(static_cast<uint64_t>(now.tv_sec) * 1000000000ull + now.tv_nsec,
                  static_cast<uint32_t>(child), static_cast<uint32_t>(child), text);
    // Ctrl-C reaches the command too; the recording ends when the command does.
    char go = 1;
    if (write(gate[1], &go, 1) != 1) throw std::runtime_error("cannot start the command");
    close(gate[1]);
    if (stop_at_exec) {
      if (!instrument_command(*session, *instrumentation, child, &ended)) return std::nullopt;
    }
  } else {
    if (instrumentation) {
      try {
        for (uint32_t pid : args.pids) instrumentation->attach(session->probes(), pid, false);
      } catch (const kernel::ProbeError& e) {
        print_messages(*instrumentation);
        std::cerr << "causeway: cannot instrument: " << e.what() << "\n";
        return std::nullopt;
      }
    }
    std::cerr << "causeway: recording" << (args.pids.empty() ? " system-wide" : "")
              << "; Ctrl-C stops\n";
  }
  if (instrumentation) {
    session->decoder().set_instrument_naming(instrumentation->naming());
    session->decoder().set_keep_execs(instrumentation->follows_started_programs());
    RecordInstrumentation* hooks = instrumentation.get();
    session->add_source([hooks](RecordDecoder& decoder) { hooks->poll_hooks(decoder); });
    session->add_final(
        [hooks](RecordDecoder& decoder) { hooks->note_silent_watchpoints(decoder); });
    print_messages(*instrumentation);
  }

  auto started = std::chrono::steady_clock::now();
  int status = 0;
  bool reaped = false;  // the command's status is in `status`
  // A trace that cannot be written (a full disk) ends the recording, not the command: it
  // runs to its end as it would have, and its status is still said.
  std::optional<TraceWriteError> write_error;
  std::optional<int> command_running;  // stopped while the command still ran: its pid
  std::optional<std::chrono::steady_clock::time_point> first_stop;  // the first Ctrl-C
  bool said_waiting = false;
  auto stop_writing = [&](const TraceWriteError& e) {
    write_error = e;
    session->abandon();
    std::cerr << "causeway: " << e.what() << "; recording stopped"
              << (child > 0 && !reaped && !command_running ? ", waiting for the command to end"
                                                           : "")
              << "\n";
  };
  for (;;) {
    if (ended) {
      status = *ended;
      reaped = true;
      break;
    }
    try {
      session->step(100);
    } catch (const TraceWriteError& e) {
      stop_writing(e);
      break;
    }
    if (instrumentation) {
      attach_started_programs(*session, *instrumentation);
      print_messages(*instrumentation);
    }
    if (markers)
      markers->drain([&](uint64_t ts, uint32_t pid, uint32_t tid, const std::string& text) {
        session->mark(ts, pid, tid, text);
      });
    if (child > 0) {
      // Ended but not reaped yet: its perf map is read while its owner can be checked
      // (recorder/perf_map_capture.h), since a JIT may have run for less than the poll's second.
      siginfo_t ended_info{};
      if (waitid(P_PID, static_cast<id_t>(child), &ended_info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          ended_info.si_pid == child)
        session->read_perf_map(static_cast<uint32_t>(child));
      int wstatus = 0;
      const pid_t waited = waitpid(child, &wstatus, WNOHANG);
      if (waited == child) {
        status = wstatus;
        reaped = true;
        break;
      }
      // Reaped already (nothing left to wait for): never record on forever.
      if (waited < 0 && errno == ECHILD) break;
      // Ctrl-C reached the command too: it is given the time to end, and the recording
      // ends with it. One that ignores it (or hangs) would keep the recording going for
      // ever: a second Ctrl-C, or a SIGTERM (which only causeway got), stops the
      // recording and leaves the command running.
      if (g_terminated || g_stop >= 2) {
        command_running = static_cast<int>(child);
        std::cerr << fmt::format(
            "causeway: {}: stopping the recording; the command {} (pid {}) still runs, "
            "left as it is\n",
            g_terminated ? "SIGTERM" : "Ctrl-C again", command_name, child);
        break;
      }
      if (g_stop == 1) {
        if (!first_stop) first_stop = std::chrono::steady_clock::now();
        if (!said_waiting &&
            std::chrono::steady_clock::now() - *first_stop >= std::chrono::seconds(1)) {
          said_waiting = true;
          std::cerr << fmt::format(
              "causeway: waiting for the command {} (pid {}) to end; Ctrl-C again stops the "
              "recording and writes the trace\n",
              command_name, child);
        }
      }
    } else if (g_stop) {
      break;
    }
    if (args.duration > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >=
            args.duration) {
      if (child > 0) {
        session->note_end_state();  // while the command still waits, before it is stopped
        session->read_perf_map(static_cast<uint32_t>(child));
        kill(child, SIGTERM);
        int wstatus = 0;
        waitpid(child, &wstatus, 0);
        status = wstatus;
        reaped = true;
      }
      break;
    }
  }
  if (!write_error) {
    try {
      session->finish();
    } catch (const TraceWriteError& e) {
      stop_writing(e);
    }
  }
  if (write_error && child > 0 && !reaped && !command_running) {
    int wstatus = 0;
    pid_t waited;
    while ((waited = waitpid(child, &wstatus, 0)) < 0 && errno == EINTR) {
    }
    if (waited == child) status = wstatus;
  }
  if (instrumentation) {
    if (uint64_t n = session->decoder().execs_not_kept(); n != 0)
      std::cerr << "causeway: " << n
                << " programs started faster than the recording could look at them were not "
                   "probed for the packs' functions\n";
    for (const std::string& m : instrumentation->take_final_messages())
      std::cerr << "causeway: " << m << "\n";
  }
  return ForegroundResult{status, session->status(), std::move(write_error), command_running};
}

}  // namespace cw
