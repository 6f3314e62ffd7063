// Refusals and errors as one line of text in a caller's buffer: the hook core reports
// without std::string (the preload library has no libstdc++).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdio>

namespace cw::hook {

// Writes the formatted reason (NUL-terminated, truncated to `size`) and returns false, so
// `return refuse(...)` both reports and fails.
inline bool refuse(char* reason, size_t size, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
inline bool refuse(char* reason, size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  if (size) vsnprintf(reason, size, format, args);
  va_end(args);
  return false;
}

}  // namespace cw::hook
