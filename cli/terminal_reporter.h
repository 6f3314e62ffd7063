// What the pipeline has to say (engine/session/reporter.h), on stderr: its messages as
// lines, its long work as one progress line that only a terminal shows.
//
// With CAUSEWAY_TIMINGS set (to anything but "" or "0"), every message, every long work's
// start and end and each phase it enters is also said as one line with the seconds since
// the process began, as `ninja -d stats` or `perf --debug` do: where a slow run's time
// goes, on any output (docs/cache.md, "Where a run's time goes"). Cache notes are then
// said too, as with CAUSEWAY_CACHE=verbose.
#pragma once

#include <string>

#include "cli/progress.h"
#include "engine/session/reporter.h"

namespace cw::cli {

// CAUSEWAY_TIMINGS is set.
bool timings_asked();

class TerminalReporter : public session::Reporter {
 public:
  TerminalReporter();
  void message(const std::string& line) override;
  session::ProgressFn progress(const std::string& title) override;
  void progress_done() override;

 private:
  void timing(const std::string& what);

  ProgressLine line_{""};
  bool timings_ = false;
  std::string title_, phase_;
};

}  // namespace cw::cli
