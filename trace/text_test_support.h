// For tests: a trace's events in the text form, one line each, without its tables (for an
// exact comparison of what a decoder or a transformation wrote).
#pragma once

#include <string>

#include "trace/text_format.h"

namespace cw::testing_text {

inline std::string events_text(const Trace& t) {
  std::string all = write_text_trace(t), out;
  size_t pos = 0;
  while (pos < all.size()) {
    size_t nl = all.find('\n', pos);
    std::string line = all.substr(pos, nl - pos);
    pos = nl == std::string::npos ? all.size() : nl + 1;
    if (!line.empty() && line[0] >= '0' && line[0] <= '9') out += line + "\n";
  }
  return out;
}

}  // namespace cw::testing_text
