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

std::string Diagnostic::render() const {
  std::string out;
  const std::string path = source ? source->path : std::string("<input>");
  if (loc.line == 0) {
    out = fmt::format("{}: {}: {}\n", path, severity_name(severity), message);
  } else {
    out = fmt::format("{}:{}:{}: {}: {}\n", path, loc.line, loc.col, severity_name(severity),
                      message);
    std::string_view line = source ? source->line_text(loc.line) : std::string_view{};
    out += "  ";
    out += line;
    out += "\n  ";
    for (uint32_t i = 0; i + 1 < loc.col; ++i)
      out += (i < line.size() && line[i] == '\t') ? '\t' : ' ';
    out += '^';
    out.append(length > 1 ? length - 1 : 0, '~');
    out += '\n';
  }
  for (const auto& h : hints) out += fmt::format("hint: {}\n", h);
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
