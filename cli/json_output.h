// What every --json output shares (docs/json.md): a schema version key, so a script can
// tell which shape it reads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

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

// `j` as the commands print it (indent 2; -1: on one line, for JSON Lines): never throws on bytes
// that are not UTF-8 (they become U+FFFD), and holds no byte a terminal acts on (DEL and C1 as \u
// escapes), so a TerminalGuard passes it unchanged.
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace cw::cli
