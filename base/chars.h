// Character classes the text readers share (the trace's text form, perf script, perf maps),
// in the C locale whatever the process's.
#pragma once

namespace cw {

inline bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace cw
