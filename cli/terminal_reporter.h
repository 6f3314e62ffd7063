// What the pipeline has to say (engine/session/reporter.h), on stderr: its messages as
// lines, its long work as one progress line that only a terminal shows.
#pragma once

#include <string>

#include "cli/progress.h"
#include "engine/session/reporter.h"

namespace cw::cli {

class TerminalReporter : public session::Reporter {
 public:
  void message(const std::string& line) override;
  session::ProgressFn progress(const std::string& title) override;
  void progress_done() override { line_.clear(); }

 private:
  ProgressLine line_{""};
};

}  // namespace cw::cli
