// Text from a trace (thread and process names, paths, symbols, markers) on its way to a
// terminal: a recorded program chooses those bytes, and an escape sequence among them
// would be a command to the terminal (retitle it, rewrite the screen, worse), and bytes
// that are not UTF-8 garble what follows.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace cw {

// `text` with every byte a terminal could act on shown as \xNN: C0 control bytes (newline
// and tab too, unless `keep_lines`), DEL, the C1 controls U+0080..U+009F (each of their
// two bytes), and every byte that is not part of well-formed UTF-8. Everything else,
// other UTF-8 included, is kept. Printable ASCII in, the same out: applying it twice
// changes nothing more.
std::string terminal_text(std::string_view text, bool keep_lines = false);

// For a whole report: keeps newlines and tabs, which lay it out.
inline std::string terminal_report(std::string_view text) {
  return terminal_text(text, true);
}

// While alive, what is written to `stream` reaches its buffer through terminal_report():
// a command's whole human-readable output (report, questions, messages) is made safe in
// one place rather than at each of the many places that print a name from the trace.
// JSON written through it must already be free of such bytes (cli::json_text). A UTF-8
// sequence split across two writes is held back until it is complete (or flushed).
class TerminalGuard : public std::streambuf {
 public:
  explicit TerminalGuard(std::ostream& stream);
  ~TerminalGuard() override;
  TerminalGuard(const TerminalGuard&) = delete;
  TerminalGuard& operator=(const TerminalGuard&) = delete;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void put(std::string_view s, bool flush);
  std::ostream& stream_;
  std::streambuf* inner_;
  std::string held_;  // the start of a UTF-8 sequence not yet complete
};

}  // namespace cw
