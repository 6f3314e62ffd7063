#include "trace/perf_map.h"

#include <fmt/format.h>

#include "base/chars.h"

namespace cw {

namespace {

// Up to 16 hex digits, with an optional 0x; nothing else.
bool parse_hex(std::string_view text, uint64_t& out) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  out = v;
  return true;
}

// The next blank-separated word of `rest`, taken off it.
std::string_view next_word(std::string_view& rest) {
  size_t start = 0;
  while (start < rest.size() && is_blank(rest[start])) ++start;
  size_t end = start;
  while (end < rest.size() && !is_blank(rest[end])) ++end;
  std::string_view word = rest.substr(start, end - start);
  rest.remove_prefix(end);
  return word;
}

bool fail(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return false;
}

}  // namespace

bool parse_perf_map_line(std::string_view line, PerfMapEntry& out, std::string* why) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  std::string_view rest = line;
  std::string_view start_text = next_word(rest);
  std::string_view size_text = next_word(rest);
  if (start_text.empty() || size_text.empty()) return fail(why, "expected START SIZE NAME");
  uint64_t start = 0, size = 0;
  // Reasons never quote the line: it is the program's, and they are printed.
  if (!parse_hex(start_text, start)) return fail(why, "the start is not a hex address");
  if (!parse_hex(size_text, size)) return fail(why, "the size is not a hex number");
  if (size == 0) return fail(why, "a size of 0");
  if (start + size < start) return fail(why, "the range passes the end of the address space");
  // The name is the rest of the line, blanks inside it included (node's hold a path).
  while (!rest.empty() && is_blank(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && is_blank(rest.back())) rest.remove_suffix(1);
  if (rest.empty()) return fail(why, "no name after the size");
  for (char c : rest) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f)
      return fail(why, fmt::format("a control character (0x{:02x}) in the name", u));
  }
  out.start = start;
  out.size = size;
  out.name.assign(rest);
  return true;
}

void PerfMapParser::feed(std::string_view bytes, std::vector<PerfMapEntry>& out) {
  while (!bytes.empty() && !full()) {
    const size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (!overlong_) {
      if (partial_.size() + piece.size() > kPerfMapMaxLine) {
        // Not kept: a line without end would otherwise hold the whole file in memory.
        overlong_ = true;
        partial_.clear();
      } else {
        partial_.append(piece);
      }
    }
    if (newline == std::string_view::npos) return;  // the rest of the line comes later
    bytes.remove_prefix(newline + 1);
    ++lines_;
    if (overlong_)
      bad(fmt::format("a line longer than {} bytes", kPerfMapMaxLine));
    else
      line(partial_, out);
    partial_.clear();
    overlong_ = false;
  }
}

void PerfMapParser::line(std::string_view text, std::vector<PerfMapEntry>& out) {
  if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank
  PerfMapEntry entry;
  std::string why;
  if (!parse_perf_map_line(text, entry, &why)) return bad(std::move(why));
  out.push_back(std::move(entry));
  ++entries_;
}

void PerfMapParser::bad(std::string reason) {
  if (bad_lines_++ == 0) {
    first_bad_line_ = lines_;
    first_bad_reason_ = std::move(reason);
  }
}

}  // namespace cw
