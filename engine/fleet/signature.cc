#include "engine/fleet/signature.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/diagnosis/debug_report.h"
#include "trace/names.h"

namespace cw::fleet {

namespace {

std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A file that holds a program's code rather than a library's: the executable itself.
bool program_file(std::string_view path) {
  if (path.empty() || path[0] != '/' || path.starts_with("/memfd:")) return false;
  return base_name(path).find(".so") == std::string_view::npos;
}

// The executable `pid` ran at `at_ns`: the file of its latest program mapping recorded by
// then (a process that exec'd maps the new program after the old one; the process table
// keeps the name it had when first seen), else the process table's.
const MapRecord* program_map(const Trace& trace, Pid pid, uint64_t at_ns) {
  const MapRecord* best = nullptr;
  for (const MapRecord& m : trace.maps) {
    if (m.pid != pid || m.ts > at_ns || !program_file(trace.strings.get(m.path))) continue;
    if (!best || m.ts > best->ts || (m.ts == best->ts && m.start < best->start)) best = &m;
  }
  return best;
}

std::string string_field(const Trace& trace, uint32_t event, std::string_view name) {
  const Event& e = trace.events[event];
  int f = trace.schema.field_index(e.kind, name);
  if (f < 0 || trace.schema.kind(e.kind).fields[f].type != FieldType::Str) return {};
  return std::string(trace.strings.get(static_cast<StrId>(trace.value(e, f))));
}

std::string thread_program(const Trace& trace, Tid tid) {
  return without_digits(thread_comm(trace, tid, "?"));
}

// The call a segment blocked in longest over [start, end), or what it did instead.
std::string longest_wait(const Trace& trace, const engine::SegmentProfile& p,
                         engine::HangKind kind) {
  if (kind == engine::HangKind::LongRunning) return "on cpu";
  if (p.longest_block_ns == 0) return kind == engine::HangKind::RepeatedYield ? "yield" : "none";
  if (p.longest_block_call == engine::kNoIndex) return "outside a system call";
  return string_field(trace, p.longest_block_call, "name");
}

}  // namespace

std::string without_digits(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      out += '#';
      while (i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1]))) ++i;
    } else {
      out += name[i];
    }
  }
  return out;
}

std::vector<std::string> stack_names(const Trace& trace, StackId stack, size_t limit) {
  std::vector<std::string> out;
  for (const Frame& f : engine::stack_frame_list(trace, stack)) {
    if (f.kernel) continue;
    // A return address in no file the trace maps is where a frame-pointer walk left the
    // real frames (code built without frame pointers: the next "frame" was a heap pointer
    // or text on the stack), and what it read after that differs from run to run.
    if (f.function == 0 && f.module == 0) break;
    std::string name = f.function != 0 ? std::string(trace.strings.get(f.function))
                                       : std::string(base_name(trace.strings.get(f.module)));
    if (!out.empty() && out.back() == name) continue;
    if (out.size() == limit) break;
    out.push_back(std::move(name));
  }
  return out;
}

HangSummary summarize(const Trace& trace, const engine::Graph& graph,
                      const engine::ThreadEvents& events, const engine::Diagnosis& d) {
  using engine::HangKind;
  HangSummary s;
  const engine::Hang& h = d.hang;
  // The main thread's name follows an exec; the process table's may still be the shell's
  // that forked it.
  std::string_view program = thread_comm(trace, h.pid);
  if (program.empty()) program = process_comm(trace, h.pid);
  if (program.empty()) program = thread_comm(trace, h.tid, "?");
  s.program = without_digits(program);
  if (const MapRecord* m = program_map(trace, h.pid, h.end_ns)) {
    s.exe = base_name(trace.strings.get(m->path));
    s.version = trace.strings.get(m->build_id);
  } else if (const ProcessInfo* p = trace.process(h.pid)) {
    s.exe = base_name(trace.strings.get(p->exe));
  }
  s.hang_kind = engine::hang_kind_name(h.kind);
  s.hang_wait = longest_wait(trace, h.profile, h.kind);
  // What ended the wait: the edge from the path's step before the hang.
  if (h.kind != HangKind::LongRunning && d.path.size() >= 2 &&
      d.path[d.path.size() - 2].edge != engine::kNoIndex)
    s.hang_wait += ", ended by " + graph.kind_name(graph.edges[d.path[d.path.size() - 2].edge]);
  const bool blocked = h.kind == HangKind::LongWait && h.profile.longest_block_ns > 0 &&
                       h.profile.longest_block_call != engine::kNoIndex;
  if (blocked) s.hang_stack = stack_names(trace, trace.events[h.profile.longest_block_call].stack);

  if (!d.root_causes.empty()) {
    const engine::RootCause& rc = d.root_causes.front();
    const engine::Segment& seg = graph.segments[rc.segment];
    s.root_program = thread_program(trace, seg.tid);
    s.root_kind = engine::hang_kind_name(rc.kind);
    const uint64_t start = rc.start_ns || rc.end_ns ? rc.start_ns : seg.start_ns;
    const uint64_t end = rc.start_ns || rc.end_ns ? rc.end_ns : seg.end_ns;
    s.root_call =
        longest_wait(trace, engine::profile_range(trace, events, seg.tid, start, end), rc.kind);
    s.root_stack = stack_names(trace, rc.stack);
  }

  // The path from the root cause to the hang (the steps before it say how the culprit
  // came to run: a shell's forks and reads, which differ from run to run): its first and
  // last programs, and between them the others it passes through as a set. Neither the
  // order of those nor the edge kinds are kept: which of two events that both end a wait
  // arrives first (a writer's close or its exit, one child's exit or another's) is a race.
  size_t from = 0;
  if (!d.root_causes.empty())
    for (size_t i = 0; i < d.path.size(); ++i)
      if (d.path[i].segment == d.root_causes.front().segment) from = i;
  if (from < d.path.size()) {
    const std::string first = thread_program(trace, graph.segments[d.path[from].segment].tid);
    const std::string last = thread_program(trace, graph.segments[d.path.back().segment].tid);
    std::set<std::string> between;
    for (size_t i = from + 1; i + 1 < d.path.size(); ++i)
      between.insert(thread_program(trace, graph.segments[d.path[i].segment].tid));
    between.erase(first);
    between.erase(last);
    s.path_shape = first;
    if (!between.empty()) s.path_shape += fmt::format(" -> {{{}}}", fmt::join(between, ", "));
    if (last != first || d.path.size() - from > 1) s.path_shape += " -> " + last;
  }
  return s;
}

std::string signature_text(const HangSummary& s) {
  auto stack = [](const std::vector<std::string>& frames) {
    return frames.empty() ? std::string("-") : fmt::format("{}", fmt::join(frames, " <- "));
  };
  std::string out;
  out += fmt::format("program: {} ({})\n", s.program, s.exe.empty() ? "?" : s.exe);
  out += fmt::format("version: {}\n", s.version.empty() ? "?" : s.version);
  out += fmt::format("hang: {}, {}\n", s.hang_kind, s.hang_wait);
  out += fmt::format("hang stack: {}\n", stack(s.hang_stack));
  if (s.root_kind.empty()) {
    out += "root cause: none\n";
  } else {
    out += fmt::format("root cause: {} {}, {}\n", s.root_program, s.root_kind, s.root_call);
    // A busy root cause's stack is where a sample happened to land: not the bug's.
    if (s.root_kind != engine::hang_kind_name(engine::HangKind::LongRunning))
      out += fmt::format("root stack: {}\n", stack(s.root_stack));
  }
  out += fmt::format("path: {}\n", s.path_shape.empty() ? "-" : s.path_shape);
  return out;
}

std::string signature_id(std::string_view text) {
  return fmt::format("{:016x}", XXH3_64bits(text.data(), text.size()));
}

}  // namespace cw::fleet
