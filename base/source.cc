#include "base/source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cw {

// Atomic: errors are rendered on several threads at once (the graph build's two
// classifiers can both meet a rule error).
static std::atomic<uint64_t> g_line_lookup_steps = 0;

uint64_t line_lookup_steps() {
  return g_line_lookup_steps.load(std::memory_order_relaxed);
}

std::string_view Source::line_text(uint32_t line) const {
  if (line == 0) return {};
  size_t pos = 0;
  if (!line_starts.empty()) {
    if (line > line_starts.size()) return {};
    pos = line_starts[line - 1];
    g_line_lookup_steps.fetch_add(1, std::memory_order_relaxed);
  } else {
    for (uint32_t l = 1; l < line; ++l) {
      g_line_lookup_steps.fetch_add(1, std::memory_order_relaxed);
      pos = text.find('\n', pos);
      if (pos == std::string::npos) return {};
      ++pos;
    }
  }
  size_t end = text.find('\n', pos);
  if (end == std::string::npos) end = text.size();
  std::string_view v(text.data() + pos, end - pos);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

SourcePtr make_source(std::string path, std::string text) {
  Source s{std::move(path), std::move(text), {}};
  s.line_starts.push_back(0);
  for (size_t i = 0; i < s.text.size(); ++i)
    if (s.text[i] == '\n') s.line_starts.push_back(i + 1);
  return std::make_shared<const Source>(std::move(s));
}

SourcePtr read_source(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return make_source(path, ss.str());
}

static std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// A control byte (an escape sequence's ESC, a BEL, ...) shown as \xNN: a pack's or a
// trace's bytes must not reach the terminal as commands. Tabs stay.
static bool is_control(unsigned char c) {
  return (c < 0x20 && c != '\t') || c == 0x7f;
}

static std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text)
    if (is_control(c))
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  return out;
}

// At most this many bytes of a source line around the caret: a pack with 50,000 names on
// one line gave 50,000 errors each quoting the whole line, output quadratic in the line.
// Longer lines are cut to a window marked with "...".
static constexpr size_t kExcerptBytes = 120;
static constexpr size_t kExcerptBefore = 40;  // of them, before the caret

// Moves `i` back to the first byte of the UTF-8 sequence it is in (a cut never splits one).
static size_t char_start(std::string_view s, size_t i) {
  size_t back = 0;
  while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80 && back < 3)
    --i, ++back;
  return i;
}

std::string Diagnostic::render() const {
  std::string out;
  const std::string path = printable(source ? source->path : std::string("<input>"));
  if (loc.line == 0) {
    out = fmt::format("{}: {}: {}\n", path, severity_name(severity), printable(message));
  } else {
    out = fmt::format("{}:{}:{}: {}: {}\n", path, loc.line, loc.col, severity_name(severity),
                      printable(message));
    std::string_view line = source ? source->line_text(loc.line) : std::string_view{};
    const size_t caret = loc.col > 0 ? loc.col - 1 : 0;  // byte of the line under the caret
    size_t from = 0, to = line.size();
    if (line.size() > kExcerptBytes) {
      from = char_start(line,
                        caret > kExcerptBefore ? std::min(caret, line.size()) - kExcerptBefore : 0);
      to = std::min(line.size(), from + kExcerptBytes);
      if (to < line.size()) to = char_start(line, to);
    }
    const std::string_view cut_before = from > 0 ? "..." : "";
    out += "  ";
    out += cut_before;
    out += printable(line.substr(from, to - from));
    if (to < line.size()) out += "...";
    out += "\n  ";
    // The caret under the same byte: an escaped byte takes four columns.
    auto width = [&](size_t i) { return i < line.size() && is_control(line[i]) ? 4u : 1u; };
    out.append(cut_before.size(), ' ');
    for (size_t i = from; i < caret; ++i)
      out.append(width(i), (i < line.size() && line[i] == '\t') ? '\t' : ' ');
    // A span running past a cut window ends at its edge.
    size_t last = caret + std::max<uint32_t>(length, 1);
    if (to < line.size()) last = std::min(last, std::max(to, caret + 1));
    size_t span = 0;
    for (size_t i = caret; i < last; ++i) span += width(i);
    out += '^';
    out.append(span - 1, '~');
    out += '\n';
  }
  for (const auto& h : hints) out += fmt::format("hint: {}\n", printable(h));
  return out;
}

static size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

DiagnosticError::DiagnosticError(Diagnostic d) : diagnostic(std::move(d)) {
  rendered = diagnostic.render();
}

}  // namespace cw
