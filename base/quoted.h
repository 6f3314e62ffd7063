// A string as a double-quoted literal with `"`, `\`, newline and tab escaped: the form
// both the text trace format and the rule language read back.
#pragma once

#include <string>
#include <string_view>

namespace cw {

inline void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  out += '"';
}

inline std::string quoted(std::string_view s) {
  std::string out;
  append_quoted(out, s);
  return out;
}

}  // namespace cw
