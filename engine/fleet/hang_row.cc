#include "engine/fleet/hang_row.h"

#include <fmt/format.h>

#include <stdexcept>

#include "engine/diagnosis/debug_report.h"
#include "trace/names.h"

namespace cw::fleet {

const std::vector<Column>& columns() {
  static const std::vector<Column> kColumns = {
      {"host", "TEXT", "String", "the host the trace was recorded on"},
      {"trace", "TEXT", "String", "the trace's path as given"},
      {"recorded_at", "INTEGER", "Int64", "Unix seconds the trace was last written"},
      {"hang_start", "REAL", "Float64", "seconds from the recording's start to the hang's"},
      {"hang_seconds", "REAL", "Float64", "the hang's length in seconds"},
      {"program", "TEXT", "String", "the hung process's name, digits as #"},
      {"exe", "TEXT", "String", "its executable's file name"},
      {"version", "TEXT", "String", "the executable's build id"},
      {"hang_kind", "TEXT", "String", "LongWait, LongRunning or RepeatedYield"},
      {"hang_wait", "TEXT", "String", "the call it waited in and what ended it"},
      {"hang_stack", "TEXT", "String", "that call's user frames, innermost first"},
      {"root_program", "TEXT", "String", "the root cause's thread name, digits as #"},
      {"root_kind", "TEXT", "String", "how the root cause behaved"},
      {"root_call", "TEXT", "String", "the call it waited in longest, or on cpu"},
      {"root_stack", "TEXT", "String", "its most telling stack's user frames"},
      {"root_what", "TEXT", "String", "the report's words for the root cause"},
      {"path", "TEXT", "String", "the causal path, root cause first, with pids and tids"},
      {"path_shape", "TEXT", "String", "the path's ends, the programs between as a set"},
      {"questions", "INTEGER", "UInt32", "questions the diagnosis answered itself"},
      {"queries", "TEXT", "String", "the questions and answers, as debug --json has them"},
      {"packs", "TEXT", "String", "the packs loaded, id@version, comma-separated"},
      {"signature", "TEXT", "String", "16 hex digits: equal for the same bug"},
      {"signature_text", "TEXT", "String", "what the signature is made of"},
      {"diagnosed_at", "INTEGER", "Int64", "Unix seconds of the diagnosis"},
      {"causeway", "TEXT", "String", "the causeway version that diagnosed it"},
  };
  return kColumns;
}

namespace {

std::string joined(const std::vector<std::string>& frames) {
  return fmt::format("{}", fmt::join(frames, " <- "));
}

std::vector<std::string> split_frames(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t at = 0;
  for (size_t next; (next = text.find(" <- ", at)) != std::string::npos; at = next + 4)
    out.push_back(text.substr(at, next - at));
  out.push_back(text.substr(at));
  return out;
}

std::string path_text(const Trace& trace, const engine::Graph& graph, const engine::Diagnosis& d) {
  std::string out;
  for (size_t i = 0; i < d.path.size(); ++i) {
    const engine::Segment& s = graph.segments[d.path[i].segment];
    if (i > 0) {
      const uint32_t edge = d.path[i - 1].edge;
      out += fmt::format(" -{}-> ", edge == engine::kNoIndex ? std::string("?")
                                                             : graph.kind_name(graph.edges[edge]));
    }
    out += fmt::format("{} {}/{}", thread_comm(trace, s.tid, "?"), s.pid, s.tid);
  }
  return out;
}

}  // namespace

HangRow make_row(const Trace& trace, const engine::Graph& graph, const engine::ThreadEvents& events,
                 const rules::RuleSet& rules, const engine::Diagnosis& d) {
  HangRow row;
  const uint64_t t0 = engine::trace_start_ns(trace);
  row.hang_start = static_cast<double>(d.hang.start_ns - std::min(d.hang.start_ns, t0)) / 1e9;
  row.hang_seconds =
      static_cast<double>(d.hang.end_ns - std::min(d.hang.end_ns, d.hang.start_ns)) / 1e9;
  row.summary = summarize(trace, graph, events, d);
  if (!d.root_causes.empty()) row.root_what = d.root_causes.front().what;
  row.path = path_text(trace, graph, d);
  for (const engine::Query& q : d.queries)
    if (q.answer.source == engine::AnswerSource::Auto) ++row.questions;
  row.queries = engine::queries_json(d).dump();
  std::vector<std::string> packs;
  for (const rules::PackInfo& p : rules.packs) packs.push_back(p.id + "@" + p.version);
  row.packs = fmt::format("{}", fmt::join(packs, ","));
  row.signature_text = signature_text(row.summary);
  row.signature = signature_id(row.signature_text);
  return row;
}

nlohmann::json row_json(const HangRow& r) {
  const HangSummary& s = r.summary;
  return {{"host", r.host},
          {"trace", r.trace},
          {"recorded_at", r.recorded_at},
          {"hang_start", r.hang_start},
          {"hang_seconds", r.hang_seconds},
          {"program", s.program},
          {"exe", s.exe},
          {"version", s.version},
          {"hang_kind", s.hang_kind},
          {"hang_wait", s.hang_wait},
          {"hang_stack", joined(s.hang_stack)},
          {"root_program", s.root_program},
          {"root_kind", s.root_kind},
          {"root_call", s.root_call},
          {"root_stack", joined(s.root_stack)},
          {"root_what", r.root_what},
          {"path", r.path},
          {"path_shape", s.path_shape},
          {"questions", r.questions},
          {"queries", r.queries},
          {"packs", r.packs},
          {"signature", r.signature},
          {"signature_text", r.signature_text},
          {"diagnosed_at", r.diagnosed_at},
          {"causeway", r.causeway}};
}

HangRow row_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("a row is not a JSON object");
  auto text = [&](const char* name) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_string())
      throw std::invalid_argument(fmt::format("column '{}' is missing or not a string", name));
    return it->get<std::string>();
  };
  auto number = [&](const char* name) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number())
      throw std::invalid_argument(fmt::format("column '{}' is missing or not a number", name));
    return *it;
  };
  HangRow r;
  HangSummary& s = r.summary;
  r.host = text("host");
  r.trace = text("trace");
  r.recorded_at = number("recorded_at").get<int64_t>();
  r.hang_start = number("hang_start").get<double>();
  r.hang_seconds = number("hang_seconds").get<double>();
  s.program = text("program");
  s.exe = text("exe");
  s.version = text("version");
  s.hang_kind = text("hang_kind");
  s.hang_wait = text("hang_wait");
  s.hang_stack = split_frames(text("hang_stack"));
  s.root_program = text("root_program");
  s.root_kind = text("root_kind");
  s.root_call = text("root_call");
  s.root_stack = split_frames(text("root_stack"));
  r.root_what = text("root_what");
  r.path = text("path");
  s.path_shape = text("path_shape");
  r.questions = number("questions").get<uint32_t>();
  r.queries = text("queries");
  r.packs = text("packs");
  r.signature = text("signature");
  r.signature_text = text("signature_text");
  r.diagnosed_at = number("diagnosed_at").get<int64_t>();
  r.causeway = text("causeway");
  return r;
}

}  // namespace cw::fleet
