// What every --json output shares (docs/json.md): a schema version key, so a script can
// tell which shape it reads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace cw::cli {

// Raised when a key is renamed or removed, or a figure changes shape; adding keys keeps it.
inline constexpr int kJsonSchemaVersion = 1;

// `j` (an object) with "schema_version" set.
template <typename Json>
Json with_schema_version(Json j) {
  j["schema_version"] = kJsonSchemaVersion;
  return j;
}

// Beside every "start_ns"/"end_ns" (absolute ns, the trace's clock) in `j`, at any depth,
// "start_s"/"end_s": seconds since `trace_start_ns`, as the text reports and --hang use.
void add_seconds_since_start(nlohmann::json& j, uint64_t trace_start_ns);

}  // namespace cw::cli
