// The always-on recorder (`causeway record start`): a process of its own, detached from
// the terminal, that records into a ring of files until SIGTERM, adds the markers
// `causeway mark` sends, and keeps a status file for `record status`. The command line's
// options and exit codes are cli/cmd_record.cc's.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "recorder/recorder_dir.h"
#include "recorder/session.h"

namespace cw {

// What the status file holds (docs/json.md, `record status --json`): the session's counts,
// the ring's when there is one; `max_bytes` is the ring's bound.
nlohmann::json recorder_status_json(const SessionStatus& s, const RecorderPaths& paths,
                                    uint64_t max_bytes);

// Replaces the status file whole (written beside it, then renamed): a reader never sees
// half of one. On a full disk it is rewritten in place (RecorderDir::replace_file).
bool write_status_file(const RecorderDir& dir, const nlohmann::json& j);

// The status file's content, when it is one (a regular file, not a link, at most 1 MiB,
// a JSON object); an empty object otherwise.
nlohmann::json read_status_file(const RecorderDir& dir);

// Becomes the recorder, in a process forked for it: takes the folder's lock, clears the
// ring's folder and records as `options` says (its `ring` set) until SIGTERM. Writes "K"
// to `ready_fd` once recording, or "E" and why it cannot; exits 0 when stopped,
// `failure_exit` when it could not record or stopped on an error. The status file then
// says when it stopped (`stopped_at`) and, when it stopped itself, why (`stop_error`).
[[noreturn]] void run_daemon(const SessionOptions& options, const RecorderDir& dir, int ready_fd,
                             int failure_exit);

}  // namespace cw
