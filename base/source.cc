#include "base/source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cw {

std::string_view Source::line_text(uint32_t line) const {
  if (line == 0) return {};
  size_t pos = 0;
  for (uint32_t l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return {};
    ++pos;
  }
  size_t end = text.find('\n', pos);
  if (end == std::string::npos) end = text.size();
  std::string_view v(text.data() + pos, end - pos);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

SourcePtr make_source(std::string path, std::string text) {
  return std::make_shared<const Source>(Source{std::move(path), std::move(text)});
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
// trace's bytes must not reach the terminal as commands (issue 18). Tabs stay.
static bool is_control(unsigned char c) {
  return (c < 0x20 && c != '\t') || c == 0x7f;
}

// The widest source excerpt a diagnostic shows, in bytes.
constexpr size_t kExcerptWidth = 160;

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

std::string Diagnostic::render() const {
  std::string out;
  const std::string path = printable(source ? source->path : std::string("<input>"));
  if (loc.line == 0) {
    out = fmt::format("{}: {}: {}\n", path, severity_name(severity), printable(message));
  } else {
    out = fmt::format("{}:{}:{}: {}: {}\n", path, loc.line, loc.col, severity_name(severity),
                      printable(message));
    const std::string_view whole = source ? source->line_text(loc.line) : std::string_view{};
    // A long line (generated, minified or hostile: a megabyte of one pack line) is shown
    // as a window around the column, so the terminal gets one readable line.
    const size_t col = std::min<size_t>(loc.col - 1, whole.size());
    size_t first = 0, last = whole.size();
    if (whole.size() > kExcerptWidth) {
      first = col > kExcerptWidth / 2 ? col - kExcerptWidth / 2 : 0;
      last = std::min(whole.size(), first + kExcerptWidth);
      // Never start or end inside a UTF-8 sequence.
      auto continuation = [&](size_t i) {
        return (static_cast<unsigned char>(whole[i]) & 0xc0) == 0x80;
      };
      while (first > 0 && continuation(first)) --first;
      while (last < whole.size() && continuation(last)) ++last;
    }
    const std::string_view line = whole.substr(first, last - first);
    const std::string_view cut = "...";
    out += "  ";
    if (first > 0) out += cut;
    out += printable(line);
    if (last < whole.size()) out += cut;
    out += "\n  ";
    if (first > 0) out.append(cut.size(), ' ');
    // The caret under the same byte: an escaped byte takes four columns.
    auto width = [&](size_t i) { return i < whole.size() && is_control(whole[i]) ? 4u : 1u; };
    for (size_t i = first; i < col; ++i)
      out.append(width(i), (i < whole.size() && whole[i] == '\t') ? '\t' : ' ');
    size_t span = 0;
    const size_t span_end = std::max(col + 1, std::min<size_t>(col + length, last));
    for (size_t i = col; i < span_end; ++i) span += width(i);
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
