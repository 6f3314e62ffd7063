// The marker `record -- CMD` writes on the command's own thread before it runs,
// "causeway: command PID ARGV...", so that a diagnosis knows which processes are the
// recorded command's (`debug --hang auto`, engine/diagnosis/symptom.h). Written by the
// recorder and read by the engine from this one definition.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "trace/trace.h"

namespace cw {

inline constexpr std::string_view kCommandMarker = "causeway: command ";

inline std::string command_marker(Pid pid, const std::vector<std::string>& argv) {
  std::string text = std::string(kCommandMarker) + std::to_string(pid);
  for (const auto& a : argv) text += " " + a;
  return text;
}

inline bool is_command_marker(std::string_view text) {
  return text.starts_with(kCommandMarker);
}

// The command's pid in a command marker; 0 when the text after the prefix is malformed.
inline Pid command_marker_pid(std::string_view text) {
  std::string_view rest = text.substr(kCommandMarker.size());
  Pid pid = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec == std::errc() && pid != 0 && (end == rest.data() + rest.size() || *end == ' '))
    return pid;
  return 0;
}

}  // namespace cw
