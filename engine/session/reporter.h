// What the pipeline has to say while it works, for whoever runs it to show: the command
// line on stderr (cli/terminal_reporter.h), a harness nowhere.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace cw::session {

// (phase, done, total): the progress of long work; total 0 when unknown.
using ProgressFn = std::function<void(std::string_view, uint64_t, uint64_t)>;

class Reporter {
 public:
  virtual ~Reporter() = default;
  // A whole line for the user (no newline): a warning about the trace, a note, what the
  // cache did. The line names its subject ("TRACE: note: …", "causeway: cache: …").
  virtual void message(const std::string& line) { (void)line; }
  // Long work begins under `title`; the callback (empty: nobody watches) follows it.
  virtual ProgressFn progress(const std::string& title) {
    (void)title;
    return {};
  }
  // The long work ended (or failed): a progress display goes away before anything else
  // is said.
  virtual void progress_done() {}
};

// Calls progress_done() however the work in its scope ends.
class ProgressScope {
 public:
  ProgressScope(Reporter& reporter, const std::string& title)
      : reporter_(reporter), callback_(reporter.progress(title)) {}
  ~ProgressScope() { reporter_.progress_done(); }
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;
  const ProgressFn& callback() const { return callback_; }
  void operator()(std::string_view phase, uint64_t done = 0, uint64_t total = 0) const {
    if (callback_) callback_(phase, done, total);
  }

 private:
  Reporter& reporter_;
  ProgressFn callback_;
};

}  // namespace cw::session
