// Running the suites' commands for `causeway eval`: a child process with its output in a
// log, its environment extended, and a deadline; and `causeway record` of a command.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/trace.h"

namespace cw::eval {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// Runs `argv` (argv[0] a path) with stdout and stderr in `log`, `env` added to the
// environment and `path_prefix` (when not empty) put in front of PATH. Past `timeout` it is
// sent SIGINT (record stops its command and writes what it has) and waited for. Returns ""
// or why it failed, in words that name the log.
std::string run_logged(const std::vector<std::string>& argv, const std::string& log,
                       const EnvVars& env, const std::string& path_prefix,
                       std::chrono::seconds timeout);

// `causeway record -o TRACE OPTIONS... -- COMMAND...` as run_logged runs it; the error says
// what the command or the recorder said last.
std::string record_command(const std::vector<std::string>& options,
                           const std::vector<std::string>& command, const std::string& trace,
                           const std::string& log, const EnvVars& env,
                           const std::string& path_prefix, std::chrono::seconds timeout);

// Why the recorded command failed, from the trace (its process's exit status) and the
// recorder's log when there is one; "" when it exited 0 or is still running. `record` says
// the command's status rather than passing it on, and a driver that could not make its
// hang happen leaves a recording of something else. `whose` starts the sentence ("the
// scenario's").
std::string command_failure(const Trace& trace, const std::string& log, const std::string& whose);

// Why a recording failed, from its log: the command's own last word (a driver saying why
// it could not start its server), then the recorder's last line.
std::string failure_line(const std::string& log);

// NAME as given on the command line: a folder's name, or a unique part of one ("01",
// "livelock"), among `dirs`; else nullopt and `why` says what there is ("no scenario
// 'x' (there are: …)", "'0' names several scenarios: …"; `noun` names the kind).
std::optional<std::string> find_folder(const std::vector<std::string>& dirs,
                                       const std::string& name, const std::string& noun,
                                       std::string* why);

// This binary, to run `causeway record` as a child.
std::string self_exe();

}  // namespace cw::eval
