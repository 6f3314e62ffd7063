#include "engine/diagnosis/debug_report.h"

#include <fmt/format.h>

#include <string_view>

#include "base/terminal_text.h"
#include "engine/diagnosis/questions.h"
#include "engine/diagnosis/symptom.h"
#include "trace/losses.h"
#include "trace/names.h"

namespace cw::engine {
namespace {

// Linux maps nothing below 64 KiB by default (vm.mmap_min_addr); code addresses below it
// are unwinding junk.
constexpr uint64_t kFirstMappedAddress = 0x10000;

// A name from the trace in a line of the report: its newline or escape sequence is the
// recorded program's, not a line or a command of ours.
std::string or_unknown(std::string_view s) {
  return s.empty() ? "?" : terminal_text(s);
}

// "1.203457 s" since the trace started.
std::string at(uint64_t start, uint64_t ns) {
  double s =
      ns >= start ? static_cast<double>(ns - start) / 1e9 : -static_cast<double>(start - ns) / 1e9;
  return fmt::format("{:.6f} s", s);
}

std::string duration(uint64_t ns) {
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  if (ns < 1000000000) return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

// "cw-server 813": a thread by its name and id.
std::string thread_name(const Trace& trace, Tid tid) {
  return fmt::format("{} {}", or_unknown(thread_comm(trace, tid)), tid);
}

nlohmann::json frames_json(const Trace& trace, StackId stack) {
  nlohmann::json out = nlohmann::json::array();
  for (auto& f : stack_frames(trace, stack)) out.push_back(std::move(f));
  return out;
}

// The same frames with what is known of each: docs/json.md "stack_frames".
nlohmann::json frame_details_json(const Trace& trace, StackId stack) {
  nlohmann::json out = nlohmann::json::array();
  for (const Frame& f : stack_frame_list(trace, stack)) {
    nlohmann::json j = {{"name", frame_name(trace.strings, f)}};
    if (f.function) j["function"] = trace.strings.get(f.function);
    if (f.file) j["file"] = trace.strings.get(f.file);
    if (f.line) j["line"] = f.line;
    if (f.inlined) j["inlined"] = true;
    if (f.kernel) j["kernel"] = true;
    if (f.module) {
      j["module"] = trace.strings.get(f.module);
      j["offset"] = f.offset;
    }
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json path_json(const Trace& trace, const Graph& graph,
                         const std::vector<PathStep>& path) {
  nlohmann::json out = nlohmann::json::array();
  for (const PathStep& step : path) {
    const Segment& s = graph.segments[step.segment];
    nlohmann::json j = {{"pid", s.pid},
                        {"tid", s.tid},
                        {"comm", thread_comm(trace, s.tid)},
                        {"start_ns", s.start_ns},
                        {"end_ns", s.end_ns}};
    if (step.edge == kNoIndex) {
      j["edge_kind"] = nullptr;
      j["strength"] = nullptr;
    } else {
      const Edge& e = graph.edges[step.edge];
      j["edge_kind"] = graph.kind_name(e);
      j["strength"] = strength_name(e.strength);
    }
    out.push_back(std::move(j));
  }
  return out;
}

// The segment's first event that the thread did: markers written for it (the recorded
// command's, `causeway mark`'s) say nothing about what it was doing.
uint32_t first_action(const Trace& trace, const Segment& s) {
  const KindId marker = trace.schema.find("marker");
  for (uint32_t i = s.first; i <= s.last && i < trace.events.size(); ++i)
    if (trace.events[i].tid == s.tid && trace.events[i].kind != marker) return i;
  return s.first;
}

// One line per step: who, and when and what: the event that is the evidence of the edge to
// the next step (on the last step, the event that took the previous step's cause; on a
// lone step, the segment's first event other than a marker), then that edge.
void path_text(std::string& out, const Trace& trace, const Graph& graph, uint64_t start,
               const std::vector<PathStep>& path, std::string_view last_label) {
  for (size_t i = 0; i < path.size(); ++i) {
    const PathStep& step = path[i];
    const Segment& s = graph.segments[step.segment];
    uint32_t event = first_action(trace, s);
    if (step.edge != kNoIndex)
      event = graph.edges[step.edge].from_event;
    else if (i > 0 && path[i - 1].edge != kNoIndex)
      event = graph.edges[path[i - 1].edge].to_event;
    out += fmt::format("  {:>12}  {:<20}  {}", at(start, trace.events[event].ts),
                       thread_name(trace, s.tid), describe_event(trace, event));
    if (step.edge != kNoIndex) {
      const Edge& e = graph.edges[step.edge];
      out += fmt::format("  --{}, {}-->", graph.kind_name(e), strength_name(e.strength));
    } else if (i + 1 < path.size()) {
      // A culprit the next step waited for, with no recorded edge between them (the
      // wake-up that never came).
      out += "  (no recorded edge to the next step)";
    } else if (!last_label.empty()) {
      out += fmt::format("  ({})", last_label);
    }
    out += "\n";
  }
}

void stack_text(std::string& out, const Trace& trace, StackId stack, std::string_view indent) {
  auto frames = stack_frame_lines(trace, stack);
  if (frames.empty()) {
    out += fmt::format("{}stack: none recorded\n", indent);
    return;
  }
  out += fmt::format("{}stack:\n", indent);
  for (const auto& f : frames) out += fmt::format("{}  {}\n", indent, f);
}

// A busy root cause's costliest functions (RootCause::costliest).
void costliest_text(std::string& out, const RootCause& rc) {
  if (rc.kind != HangKind::LongRunning) return;
  if (rc.costliest.empty()) {
    out += rc.costliest_stacks == 0
               ? "  costliest functions: unknown (no stack was recorded while it ran)\n"
               : fmt::format(
                     "  costliest functions: unknown ({} stack{} while it ran; timing a "
                     "function takes two in the same context)\n",
                     rc.costliest_stacks, rc.costliest_stacks == 1 ? "" : "s");
    return;
  }
  out += fmt::format("  costliest functions (from its {} stacks, as `causeway latency`):",
                     rc.costliest_stacks);
  for (size_t i = 0; i < rc.costliest.size(); ++i)
    out += fmt::format("{} {} {}", i ? "," : "", rc.costliest[i].first,
                       duration(rc.costliest[i].second));
  out += "\n";
}

std::string source_text(const Query& q) {
  switch (q.answer.source) {
    case AnswerSource::User: return "answered by you";
    case AnswerSource::Answers: return "from the answers file";
    case AnswerSource::Rule: return fmt::format("by rule {}", q.answer.rule);
    case AnswerSource::Auto: break;
  }
  return fmt::format("AUTOMATIC: the best-scored of {} options, nobody was asked",
                     q.question.options.size());
}

std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '\n') c = ' ';
  return out;
}

void yield_text(std::string& out, const Trace& trace, const Diagnosis& d) {
  const Hang& h = d.hang;
  out += fmt::format(
      "\nno data flag explains this loop: {} repeated system calls for {} and no recorded "
      "event says what it was waiting for.\n",
      thread_name(trace, h.tid), duration(h.end_ns - h.start_ns));
  if (!d.yield_loop.syscalls.empty()) {
    out += "  the loop's system calls:\n";
    for (const SyscallCount& c : d.yield_loop.syscalls)
      out += fmt::format("    {} x{}\n", trace.strings.get(c.name), c.count);
  }
  if (!d.yield_loop.call_sites.empty()) {
    out += "  called from:\n";
    for (StackId s : d.yield_loop.call_sites) {
      auto frames = stack_frames(trace, s);
      std::string line;
      for (size_t i = 0; i < frames.size(); ++i) line += (i ? " <- " : "") + frames[i];
      out += fmt::format("    {}\n", line.empty() ? "(no stack recorded)" : line);
    }
  }
  const ProcessInfo* p = trace.process(h.pid);
  std::string binary = p && p->exe != 0 ? std::string(trace.strings.get(p->exe))
                                        : or_unknown(process_comm(trace, h.pid));
  out += fmt::format(
      "  If the loop waits for a global variable another thread sets, declare it as a data\n"
      "  flag in a pack (docs/rules.md, `flag`), fill in its symbol and re-run with\n"
      "  --rules PACK:\n"
      "\n"
      "    flag SYMBOL {{\n"
      "      symbol \"SYMBOL\"\n"
      "      binary \"{}\"\n"
      "      size 4\n"
      "      set value != 0\n"
      "    }}\n"
      "\n"
      "  `causeway flags suggest --pid {}` proposes candidate globals (it comes with the\n"
      "  in-process instrumentation).\n",
      binary, h.pid);
}

// Where the hung thread blocked: the call it waited in and its stack.
void hang_wait_text(std::string& out, const Trace& trace, const Hang& h) {
  const uint32_t call = h.profile.longest_block_call;
  if (h.kind != HangKind::LongWait || h.profile.longest_block_ns == 0) return;
  out += fmt::format(
      "  blocked: {} from {} in {}\n", duration(h.profile.longest_block_ns),
      at(trace_start_ns(trace), h.profile.longest_block_start),
      call == kNoIndex ? std::string("no recorded system call") : describe_event(trace, call));
  if (call != kNoIndex) stack_text(out, trace, trace.events[call].stack, "  ");
}

void hang_text(std::string& out, const Trace& trace, const Hang& h) {
  const uint64_t start = trace_start_ns(trace);
  out += fmt::format("hang: {} of thread {} (process {} {})\n", hang_kind_name(h.kind),
                     thread_name(trace, h.tid), or_unknown(process_comm(trace, h.pid)), h.pid);
  out += fmt::format("  when: {} to {} ({})\n", at(start, h.start_ns), at(start, h.end_ns),
                     duration(h.end_ns - h.start_ns));
  if (!h.chosen_by.empty()) out += fmt::format("  found by: {}\n", h.chosen_by);
  hang_wait_text(out, trace, h);
}

// The baseline's wait against the hang's, as measured: "its wait lasted 2.0 ms, the
// hang's 1500.0 ms".
std::string baseline_comparison(uint64_t baseline_wait_ns, const Hang& h) {
  const uint64_t hang_wait =
      h.profile.longest_block_ns > 0 ? h.profile.longest_block_ns : h.end_ns - h.start_ns;
  const std::string tail = fmt::format("its wait lasted {}, the hang's {}",
                                       duration(baseline_wait_ns), duration(hang_wait));
  if (baseline_wait_ns < hang_wait) return "whose wait ended sooner: " + tail;
  return "whose wait did not end sooner (it ended with another result): " + tail;
}

}  // namespace

std::string describe_event(const Trace& trace, uint32_t index) {
  const Event& e = trace.events[index];
  const KindDef& kind = trace.schema.kind(e.kind);
  // The call's name leads (`read(…)`), as perf trace shows it; other events by kind.
  std::string head = kind.name;
  std::vector<std::string> args;
  std::string fd, object;
  for (size_t f = 0; f < kind.fields.size(); ++f) {
    const FieldDef& field = kind.fields[f];
    const uint64_t v = trace.value(e, static_cast<int>(f));
    // 0 is the text form's default, mostly "not recorded"; -1 says "none" (peer, fd).
    if (v == 0 || (field.type == FieldType::Int && static_cast<int64_t>(v) < 0)) continue;
    if (field.type == FieldType::Str) {
      if (field.name == "name" && kind.span_role == SpanRole::Open && kind.span == "syscall") {
        head = std::string(trace.strings.get(static_cast<StrId>(v)));
        continue;
      }
      args.push_back(fmt::format("{}: {}", field.name, trace.strings.get(static_cast<StrId>(v))));
    } else if (field.type == FieldType::Int) {
      if (field.name == "fd")
        fd = fmt::format("{}", static_cast<int64_t>(v));
      else
        args.push_back(fmt::format("{}: {}", field.name, static_cast<int64_t>(v)));
    } else {
      // Identities and addresses: a kernel address (the top half) reads best in hex.
      std::string text = v >= (uint64_t{1} << 47) ? fmt::format("{:#x}", v) : fmt::format("{}", v);
      if (field.name == "object" || field.name == "resource")
        object = std::move(text);
      else
        args.push_back(fmt::format("{}: {}", field.name, text));
    }
  }
  // The descriptor with the object behind it: `fd: 3<object 0xffff8881…>`.
  if (!fd.empty())
    args.insert(args.begin(), object.empty() ? fmt::format("fd: {}", fd)
                                             : fmt::format("fd: {}<object {}>", fd, object));
  else if (!object.empty())
    args.insert(args.begin(), fmt::format("object: {}", object));
  std::string out = head + "(";
  for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
  return out + ")";
}

std::vector<Frame> stack_frame_list(const Trace& trace, StackId stack) {
  std::vector<Frame> out;
  if (stack == 0 || stack >= trace.stacks.size()) return out;
  for (Frame& f : frames_of(trace.stacks[stack])) {
    // Nothing is mapped that low: an unnamed frame there is the unwinder's junk (a
    // frame-pointer chain that ran off), not code. (A frame named by the trace itself
    // may have no address.)
    if (f.function == 0 && !f.kernel && f.ip < kFirstMappedAddress) continue;
    out.push_back(f);
  }
  return out;
}

std::vector<std::string> stack_frames(const Trace& trace, StackId stack) {
  std::vector<std::string> out;
  for (const Frame& f : stack_frame_list(trace, stack)) out.push_back(frame_name(trace.strings, f));
  return out;
}

std::vector<std::string> stack_frame_lines(const Trace& trace, StackId stack) {
  std::vector<std::string> out;
  for (const Frame& f : stack_frame_list(trace, stack)) {
    std::string line = frame_text(trace.strings, f);
    if (f.inlined) line += " [inlined]";
    if (f.kernel) line += " [kernel]";
    out.push_back(std::move(line));
  }
  return out;
}

std::string debug_text(const Trace& trace, const Graph& graph, const Diagnosis& d) {
  const uint64_t start = trace_start_ns(trace);
  const Hang& h = d.hang;
  std::string out;

  if (d.root_causes.empty())
    out += "root cause: none found (the trace shows no thread that held the hang up)\n";
  for (size_t i = 0; i < d.root_causes.size(); ++i) {
    const RootCause& rc = d.root_causes[i];
    const Segment& s = graph.segments[rc.segment];
    if (i == 0)
      out += "root cause";
    else
      out += fmt::format("\nalso blamed ({} of {})", i + 1, d.root_causes.size());
    out += fmt::format(": process {} {}, thread {}\n", or_unknown(process_comm(trace, s.pid)),
                       s.pid, thread_name(trace, s.tid));
    // The time `what` describes: the stretch or window it was measured over, which can
    // be longer than the segment that stands for it.
    const uint64_t from = rc.end_ns > rc.start_ns ? rc.start_ns : s.start_ns;
    const uint64_t to = rc.end_ns > rc.start_ns ? rc.end_ns : s.end_ns;
    out +=
        fmt::format("  when: {} to {} ({})\n", at(start, from), at(start, to), duration(to - from));
    out += fmt::format("  kind: {}{}\n", hang_kind_name(rc.kind),
                       rc.depth == 0   ? " (the hang itself)"
                       : rc.depth == 1 ? " (what the hang waited for)"
                                       : fmt::format(" ({} steps behind the hang)", rc.depth));
    out += fmt::format("  what: {}\n", rc.what);
    costliest_text(out, rc);
    stack_text(out, trace, rc.stack, "  ");
  }

  out += "\n";
  hang_text(out, trace, h);

  if (d.path.empty()) {
    const bool own =
        !d.root_causes.empty() && graph.segments[d.root_causes[0].segment].tid == h.tid;
    out += own ? "\ncausal path: none (the hang is its own root cause)\n"
               : "\ncausal path: none found\n";
  } else {
    out += "\ncausal path, from the root cause to the hang:\n";
    path_text(out, trace, graph, start, d.path, "the hang");
  }

  if (d.baseline != kNoIndex) {
    const Segment& b = graph.segments[d.baseline];
    out += fmt::format("\nbaseline: thread {} at {} ({}), a similar segment; {}\n",
                       thread_name(trace, b.tid), at(start, b.start_ns),
                       duration(b.end_ns - b.start_ns),
                       baseline_comparison(d.baseline_longest_block_ns, h));
    if (!d.baseline_path.empty()) path_text(out, trace, graph, start, d.baseline_path, "baseline");
  }

  if (d.yield_without_flag) yield_text(out, trace, d);

  size_t automatic = 0, by_rules = 0;
  for (const Query& q : d.queries) by_rules += q.answer.source == AnswerSource::Rule;
  out += fmt::format("\nquestions: {} asked", d.queries.size() - by_rules);
  out += by_rules ? fmt::format(", {} answered by rules\n", by_rules) : "\n";
  for (size_t i = 0; i < d.queries.size(); ++i) {
    const Query& q = d.queries[i];
    if (q.answer.source == AnswerSource::Auto) ++automatic;
    const Option& chosen = q.question.options.at(q.answer.option);
    out += fmt::format("  {}. [{}] {}\n", i + 1, question_kind_name(q.question.kind),
                       one_line(q.question.text));
    out += fmt::format("     -> {} ({})\n", one_line(chosen.label), source_text(q));
  }
  if (automatic > 0)
    out += fmt::format(
        "  {} of {} choices were made automatically; answer them in a terminal, or with "
        "--answers FILE.\n",
        automatic, d.queries.size());

  if (!d.notes.empty()) {
    out += "\nnotes:\n";
    for (const auto& n : d.notes) out += fmt::format("  - {}\n", n);
  }
  // What the recorder missed, every time: a diagnosis is only as whole as its trace.
  out += "\n" + losses_text(trace);
  return out;
}

std::string so_far_text(const Trace& trace, const Graph& graph, const Diagnosis& d,
                        bool with_hang) {
  const uint64_t start = trace_start_ns(trace);
  std::string out;
  if (with_hang) hang_text(out, trace, d.hang);
  if (!d.root_causes.empty()) {
    out += "found so far:\n";
    for (const RootCause& rc : d.root_causes) {
      const Segment& s = graph.segments[rc.segment];
      out += fmt::format("  {} (process {} {}): {}\n", thread_name(trace, s.tid),
                         or_unknown(process_comm(trace, s.pid)), s.pid, rc.what);
    }
  }
  if (!d.path.empty()) {
    out += "causal path so far, to the hang:\n";
    path_text(out, trace, graph, start, d.path, "the hang");
  } else if (!d.baseline_path.empty()) {
    out += "the baseline's causal path (the normal run it is compared with):\n";
    path_text(out, trace, graph, start, d.baseline_path, "baseline");
  }
  return out;
}

nlohmann::json queries_json(const Diagnosis& d) {
  nlohmann::json out = nlohmann::json::array();
  for (const Query& q : d.queries) {
    nlohmann::json options = nlohmann::json::array();
    for (const Option& o : q.question.options) options.push_back(o.label);
    nlohmann::json j = {{"question", q.question.text},
                        {"kind", question_kind_name(q.question.kind)},
                        {"options", std::move(options)},
                        {"chosen", q.question.options.at(q.answer.option).label},
                        {"source", answer_source_name(q.answer.source)}};
    if (q.answer.source == AnswerSource::Rule) j["rule"] = q.answer.rule;
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json debug_json(const Trace& trace, const Graph& graph, const Diagnosis& d) {
  const Hang& h = d.hang;
  nlohmann::json out;
  out["hang"] = {{"pid", h.pid},
                 {"tid", h.tid},
                 {"comm", thread_comm(trace, h.tid)},
                 {"kind", hang_kind_name(h.kind)},
                 {"start_ns", h.start_ns},
                 {"end_ns", h.end_ns}};
  {
    // Where a LongWait blocked, as the text's "blocked:" line and its stack.
    const uint32_t call = h.profile.longest_block_call;
    const bool blocked =
        h.kind == HangKind::LongWait && h.profile.longest_block_ns > 0 && call != kNoIndex;
    const StackId stack = blocked ? trace.events[call].stack : 0;
    out["hang"]["stack"] = frames_json(trace, stack);
    out["hang"]["stack_frames"] = frame_details_json(trace, stack);
  }
  out["root_causes"] = nlohmann::json::array();
  for (const RootCause& rc : d.root_causes) {
    const Segment& s = graph.segments[rc.segment];
    out["root_causes"].push_back({{"pid", s.pid},
                                  {"tid", s.tid},
                                  {"comm", thread_comm(trace, s.tid)},
                                  {"kind", hang_kind_name(rc.kind)},
                                  {"start_ns", s.start_ns},
                                  {"end_ns", s.end_ns},
                                  {"what", rc.what},
                                  {"stack", frames_json(trace, rc.stack)},
                                  {"stack_frames", frame_details_json(trace, rc.stack)}});
    if (rc.kind == HangKind::LongRunning) {
      nlohmann::json costliest = nlohmann::json::array();
      for (const auto& [function, own_ns] : rc.costliest)
        costliest.push_back({{"function", function}, {"own_ns", own_ns}});
      out["root_causes"].back()["costliest_functions"] = std::move(costliest);
    }
  }
  out["path"] = path_json(trace, graph, d.path);
  out["queries"] = queries_json(d);
  if (d.baseline != kNoIndex) {
    const Segment& b = graph.segments[d.baseline];
    out["baseline"] = {{"pid", b.pid},
                       {"tid", b.tid},
                       {"comm", thread_comm(trace, b.tid)},
                       {"start_ns", b.start_ns},
                       {"end_ns", b.end_ns},
                       {"path", path_json(trace, graph, d.baseline_path)}};
  }
  if (d.yield_without_flag) {
    nlohmann::json syscalls = nlohmann::json::array();
    for (const SyscallCount& c : d.yield_loop.syscalls)
      syscalls.push_back({{"name", trace.strings.get(c.name)}, {"count", c.count}});
    nlohmann::json sites = nlohmann::json::array();
    for (StackId s : d.yield_loop.call_sites) sites.push_back(frames_json(trace, s));
    out["yield_loop"] = {{"syscalls", std::move(syscalls)}, {"call_sites", std::move(sites)}};
  }
  out["notes"] = d.notes;
  nlohmann::json losses = nlohmann::json::object();
  for (const LossLine& l : loss_lines(trace)) losses[l.key] = l.count;
  out["losses"] = std::move(losses);
  return out;
}

}  // namespace cw::engine
