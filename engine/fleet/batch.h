// Many traces diagnosed non-interactively, in worker processes, each trace's hang a row
// (docs/fleet.md). Processes rather than threads: a trace session saves its cache from a
// copy of its process, which a process running several threads cannot make.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/fleet/hang_row.h"

namespace cw::fleet {

struct BatchConfig {
  std::vector<std::string> packs;  // added after the standard packs, in order
  bool no_stdlib = false;
  bool cache = true;          // use and write each trace's derived cache
  std::string hang = "auto";  // --hang for every trace: auto or a thread name
  double min_hang_s = 0.5;    // auto: no hang below this
  // Rows per trace at most: with more than 1, the candidates auto ranks (`causeway hangs`)
  // that stopped responding for at least min_hang_s, best first, each diagnosed.
  unsigned hangs = 1;
  std::string host;  // the hosts' column
  unsigned workers = 1;
};

// How one trace went: its rows, or why it has none.
struct TraceOutcome {
  size_t index = 0;  // into the batch's traces
  std::vector<HangRow> rows;
  std::string no_hang;                // auto found nothing long enough (not an error)
  std::string error;                  // the trace could not be diagnosed: why
  bool environment_error = false;     // the error was the machine's, not the trace's
  std::vector<std::string> messages;  // what the session said (warnings, notes)
};

// Diagnoses `traces` on config.workers processes; `done` is called in this process for
// each trace as it finishes (in no particular order). Throws std::runtime_error when a
// worker cannot be started or dies without a word.
void diagnose_batch(const std::vector<std::string>& traces, const BatchConfig& config,
                    const std::function<void(TraceOutcome)>& done);

// One trace, in this process (what a worker does for each of its traces).
TraceOutcome diagnose_one(const std::string& trace, size_t index, const BatchConfig& config);

}  // namespace cw::fleet
