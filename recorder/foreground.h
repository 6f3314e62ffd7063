// A recording in the foreground (`causeway record [--pid P…] [-- CMD…]`): CMD started
// under the recorder (held at a gate until the probes are attached, so its start is
// recorded, and named by a command marker), or the given processes, or the whole system;
// polled until the command exits, a stop signal, or the duration. The command line's
// options and exit codes are cli/cmd_record.cc's.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "recorder/record_instrumentation.h"
#include "recorder/recorder_dir.h"
#include "recorder/session.h"
#include "trace/binary_format.h"

namespace cw {

// SIGTERM stops a recording; so do Ctrl-C and a closed terminal for one in the foreground
// (with a command, the second of them: the first one reached the command too, which is
// given the chance to end).
void catch_stop_signals(bool from_terminal);
// Whether one of those signals arrived.
bool stop_requested();

struct ForegroundRecording {
  SessionOptions options;
  std::vector<std::string> command;  // run and recorded until it exits; empty: until stopped
  std::vector<uint32_t> pids;        // instrumented when there is no command
  double duration = 0;               // seconds; 0: no limit
  // The recorder's folder (`--dir`), checked (RecorderDir::open), whose socket markers
  // reach this recording through; none: no markers.
  std::optional<RecorderDir> dir;
  std::unique_ptr<RecordInstrumentation> instrumentation;  // nullptr: none
  std::vector<std::pair<std::string, std::string>> command_env;
  bool stop_at_exec = false;  // the command stops at its exec to be instrumented (ptrace)
  // What the trace must say about how it was recorded (a fallback), as recorder notes
  // (trace/command_marker.h) on the command's or the first pid's thread.
  std::vector<std::string> notes;
};

struct ForegroundResult {
  int command_wstatus = 0;  // the command's status as waitpid gives it; 0 without a command
  SessionStatus status;     // of the finished session
  // Set when the trace could not be written (a full disk): the recording stopped then,
  // the command was left to run to its end, and the file holds only what was written.
  std::optional<TraceWriteError> write_error;
  // Set when the recording was stopped while the command still ran (a second Ctrl-C, or
  // SIGTERM): the command's pid. It is left running; `command_wstatus` is 0.
  std::optional<int> command_running;
};

// Records as `r` says. nullopt when the recorder cannot record or instrument here (it
// said why on stderr); throws std::runtime_error when it cannot start the command.
std::optional<ForegroundResult> record_in_foreground(ForegroundRecording r);

}  // namespace cw
