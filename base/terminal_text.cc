#include "base/terminal_text.h"

#include <fmt/format.h>

namespace cw {

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
size_t utf8_length(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c == 0xE0)
    n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC)
    n = 3;
  else if (c == 0xED)
    n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF)
    n = 3;
  else if (c == 0xF0)
    n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    n = 4;
  else if (c == 0xF4)
    n = 4, hi = 0x8F;
  else
    return 0;
  if (i + n > s.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

void escape(std::string& out, unsigned char c) {
  out += fmt::format("\\x{:02x}", c);
}

}  // namespace

std::string terminal_text(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      const bool layout = keep_lines && (c == '\n' || c == '\t');
      if ((c < 0x20 || c == 0x7f) && !layout)
        escape(out, c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t n = utf8_length(text, i);
    // U+0080..U+009F is C2 80..C2 9F: a terminal may take it as CSI and the like.
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    if (n == 0 || c1) {
      escape(out, c);
      if (c1) escape(out, static_cast<unsigned char>(text[i + 1]));
      i += c1 ? 2 : 1;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

TerminalGuard::TerminalGuard(std::ostream& stream) : stream_(stream), inner_(stream.rdbuf(this)) {}

TerminalGuard::~TerminalGuard() {
  put({}, true);
  inner_->pubsync();
  stream_.rdbuf(inner_);
}

void TerminalGuard::put(std::string_view s, bool flush) {
  std::string data = std::move(held_);
  held_.clear();
  data.append(s);
  if (!flush) {
    // Hold back a lead byte and the continuation bytes after it when the sequence it
    // starts needs more than the data has: the next write may complete it.
    for (size_t back = 1; back <= 3 && back <= data.size(); ++back) {
      const unsigned char c = static_cast<unsigned char>(data[data.size() - back]);
      if ((c & 0xC0) == 0x80) continue;
      const size_t need = c >= 0xF0 && c <= 0xF4   ? 4
                          : c >= 0xE0 && c <= 0xEF ? 3
                          : c >= 0xC2 && c <= 0xDF ? 2
                                                   : 1;
      if (need > back) {
        held_ = data.substr(data.size() - back);
        data.resize(data.size() - back);
      }
      break;
    }
  }
  const std::string out = terminal_report(data);
  inner_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
}

TerminalGuard::int_type TerminalGuard::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  put(std::string_view(&ch, 1), false);
  return c;
}

std::streamsize TerminalGuard::xsputn(const char* s, std::streamsize n) {
  put(std::string_view(s, static_cast<size_t>(n)), false);
  return n;
}

// A flush keeps an incomplete sequence held: escaping it now would be wrong if the rest
// comes with the next write.
int TerminalGuard::sync() {
  return inner_->pubsync();
}

}  // namespace cw
