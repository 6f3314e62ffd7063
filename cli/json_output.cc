#include "cli/json_output.h"

#include <fmt/format.h>

#include <string>

namespace cw::cli {

void add_seconds_since_start(nlohmann::json& j, uint64_t trace_start_ns) {
  if (j.is_array()) {
    for (auto& item : j) add_seconds_since_start(item, trace_start_ns);
    return;
  }
  if (!j.is_object()) return;
  for (auto& [key, value] : j.items()) add_seconds_since_start(value, trace_start_ns);
  for (const char* name : {"start", "end"}) {
    auto it = j.find(std::string(name) + "_ns");
    if (it == j.end() || !it->is_number_unsigned()) continue;
    const uint64_t ns = it->get<uint64_t>();
    const double since = ns >= trace_start_ns ? static_cast<double>(ns - trace_start_ns) / 1e9
                                              : -static_cast<double>(trace_start_ns - ns) / 1e9;
    j[std::string(name) + "_s"] = since;
  }
}

std::string json_text(const nlohmann::json& j, int indent) {
  // Bytes that are not UTF-8 (a comm or path is whatever the program wrote) become U+FFFD
  // instead of an exception that lost the whole output.
  const std::string dumped = j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  // DEL and the C1 controls are valid in JSON strings but act on a terminal: written as
  // \u escapes, the same string to a JSON reader. They occur only inside strings.
  std::string out;
  out.reserve(dumped.size());
  for (size_t i = 0; i < dumped.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(dumped[i]);
    if (c == 0x7f) {
      out += "\\u007f";
    } else if (c == 0xC2 && i + 1 < dumped.size() &&
               static_cast<unsigned char>(dumped[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(dumped[i + 1]) <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(dumped[i + 1]));
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace cw::cli
