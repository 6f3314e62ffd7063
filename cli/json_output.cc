#include "cli/json_output.h"

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

}  // namespace cw::cli
