// The marker `record -- CMD` writes on the command's own thread before it runs,
// "causeway: command PID ARGV...", so that a diagnosis knows which processes are the
// recorded command's (`debug --hang auto`, engine/diagnosis/symptom.h). Written by the
// recorder and read by the engine from this one definition.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/parallel.h"
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

// The recorded command's pid from its marker; 0 when the trace has none (a recording of
// running processes, or of the whole machine).
inline Pid command_pid(const Trace& trace) {
  const KindId marker = trace.schema.find("marker");
  const int text = marker == kNoKind ? -1 : trace.schema.field_index(marker, "text");
  if (text < 0) return 0;
  for (const Event& e : trace.events) {
    if (e.kind != marker) continue;
    std::string_view t = trace.strings.get(static_cast<StrId>(trace.value(e, text)));
    if (is_command_marker(t))
      if (Pid pid = command_marker_pid(t)) return pid;
  }
  return 0;
}

// Whether process `pid` is process `root` or one of its descendants, by the trace's
// parent links (bounded by the number of processes: a loop of parents ends the walk).
inline bool in_process_tree(const Trace& trace, Pid pid, Pid root) {
  for (size_t hops = 0; pid != 0 && hops <= trace.processes.size(); ++hops) {
    if (pid == root) return true;
    const ProcessInfo* p = trace.process(pid);
    if (!p || p->ppid == pid) return false;
    pid = p->ppid;
  }
  return false;
}

// How the recorded command's process ended, as the kernel's exit code (a waitpid status:
// the exit status in bits 8-15, a signal in 0-6), when the trace has its marker and its
// main thread's exit; nothing otherwise (a command still running when recording stopped).
inline std::optional<int> command_exit_code(const Trace& trace) {
  const KindId marker = trace.schema.find("marker"), exit = trace.schema.find("exit");
  if (marker == kNoKind || exit == kNoKind) return std::nullopt;
  const int text = trace.schema.field_index(marker, "text");
  const int code = trace.schema.field_index(exit, "code");
  if (text < 0 || code < 0) return std::nullopt;
  Pid pid = 0;
  std::optional<int> status;
  for (const Event& e : trace.events) {
    if (e.kind == marker && pid == 0) {
      std::string_view t = trace.strings.get(static_cast<StrId>(trace.value(e, text)));
      if (is_command_marker(t)) pid = command_marker_pid(t);
    } else if (e.kind == exit && pid != 0 && e.tid == pid) {
      status = static_cast<int>(static_cast<int64_t>(trace.value(e, code)));
    }
  }
  return status;
}

// What the recorder says about how it recorded (a fallback: data flags traced by
// instruction probes because the machine's watchpoints do not fire; hooks timestamped
// with another clock), as a marker "causeway: note: TEXT", so that the trace carries it to
// every later reader (`graph` and `debug` list it).
inline constexpr std::string_view kRecorderNote = "causeway: note: ";

inline std::string recorder_note(std::string_view text) {
  return std::string(kRecorderNote) + std::string(text);
}

inline bool is_recorder_note(std::string_view text) {
  return text.starts_with(kRecorderNote);
}

// The events of kind `marker`, in order: looked for in parts on every CPU (a trace has a
// few markers among millions of events, and more than one reader looks for them).
inline std::vector<uint32_t> marker_events(const Trace& trace, KindId marker) {
  if (marker == kNoKind) return {};
  const size_t n = trace.events.size();
  const Trace::FoundMarkers& known = trace.markers_found;
  if (known.events_at == trace.events.data() && known.events_count == n &&
      marker == trace.schema.find("marker"))
    return known.at;
  constexpr size_t kParts = 16;
  const size_t parts = n < (size_t{1} << 16) ? 1 : kParts;
  std::vector<std::vector<uint32_t>> found(parts);
  parallel_for(parts, [&](size_t p) {
    for (size_t i = n * p / parts, end = n * (p + 1) / parts; i < end; ++i)
      if (trace.events[i].kind == marker) found[p].push_back(static_cast<uint32_t>(i));
  });
  std::vector<uint32_t> out;
  for (const auto& part : found) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// The recorder's notes in `trace`, in time order, without their prefix.
inline std::vector<std::string> recorder_notes(const Trace& trace) {
  std::vector<std::string> out;
  const KindId marker = trace.schema.find("marker");
  const int text_field = marker == kNoKind ? -1 : trace.schema.field_index(marker, "text");
  if (text_field < 0) return out;
  for (uint32_t i : marker_events(trace, marker)) {
    const Event& e = trace.events[i];
    std::string_view text = trace.strings.get(static_cast<StrId>(trace.value(e, text_field)));
    if (is_recorder_note(text)) out.emplace_back(text.substr(kRecorderNote.size()));
  }
  return out;
}

}  // namespace cw
