// Source text and positions, shared by the rule language, the text trace form and every
// diagnostic that points into a file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cw {

struct Source {
  std::string path;  // as given by the user; shown in diagnostics
  std::string text;
  // Byte offset of each line's start, filled by make_source: a diagnostic finds its line
  // by index, not by counting newlines from the top (50,000 diagnostics in a
  // 50,000-line pack were quadratic). Empty: line_text scans.
  std::vector<size_t> line_starts;

  // 1-based line `line` without its newline (empty past the end).
  std::string_view line_text(uint32_t line) const;
};
using SourcePtr = std::shared_ptr<const Source>;

SourcePtr make_source(std::string path, std::string text);
// Lines stepped over or index look-ups made by Source::line_text since the program
// started: tests bound the work of reporting many diagnostics with it, not with a clock.
uint64_t line_lookup_steps();

// Reads a file; throws std::runtime_error("PATH: cannot read: REASON").
SourcePtr read_source(const std::string& path);

struct SourceLoc {
  uint32_t line = 0;  // 1-based; 0 = unknown
  uint32_t col = 0;   // 1-based, in bytes
  uint32_t byte = 0;  // offset in Source::text
};

enum class Severity : uint8_t { Error, Warning, Note };

// One message about a place in a source. Rendered (Ninja/bpftrace style):
//
//   pack.cw:12:7: error: unknown field 'stak' of event 'wakeup'
//     where stak matches "x"
//           ^~~~
//   hint: did you mean 'stack'?
//
// Exactly: "PATH:LINE:COL: SEVERITY: MESSAGE\n", then the source line indented by two
// spaces, then two spaces + (col-1) spaces (tabs in the line before the column are
// copied as tabs) + '^' + (length-1) '~', then one "hint: TEXT\n" per hint.
// Without a source (loc.line == 0) only "PATH: SEVERITY: MESSAGE\n" and hints. A line
// longer than 120 bytes is quoted as 120 of them from 40 before the caret, "..." marking
// each cut, and a span past the window's end stops there.
// Control bytes in the path, message, line and hints are shown as \xNN.
struct Diagnostic {
  Severity severity = Severity::Error;
  SourcePtr source;
  SourceLoc loc;
  uint32_t length = 1;  // caret width in bytes, at least 1
  std::string message;
  std::vector<std::string> hints;

  std::string render() const;
};

// The nearest candidate by edit distance, for "did you mean" hints; empty if none is
// close (distance > max(1, word.size() / 3)).
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// Thrown where a single error ends the work (a trace that cannot be parsed, ...).
struct DiagnosticError : std::exception {
  explicit DiagnosticError(Diagnostic d);
  const char* what() const noexcept override { return rendered.c_str(); }
  Diagnostic diagnostic;
  std::string rendered;
};

}  // namespace cw
