#include "cli/terminal_reporter.h"

#include <iostream>

namespace cw::cli {

void TerminalReporter::message(const std::string& line) {
  line_.clear();
  // One write, flushed: a save in the background (a copy of this process, which ends
  // with _exit) may say something while the command prints.
  std::cerr << (line + "\n") << std::flush;
}

session::ProgressFn TerminalReporter::progress(const std::string& title) {
  line_.set_title(title);
  if (!line_.enabled()) return {};
  return line_.callback();
}

}  // namespace cw::cli
