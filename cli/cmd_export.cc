// `causeway export TRACE --format perfetto|chrome|dot -o FILE [--rules PACK…] [--no-stdlib]
//                        [--hang auto|TID@SECONDS|NAME] [--answers FILE]`
//
// The graph and its diagnosis for a viewer (docs/export.md): a Perfetto trace or Chrome
// trace JSON of every thread, or DOT of the causal path's neighbourhood. The hang is found
// as `debug` finds it; its questions are answered from --answers, then by the best-scored
// option, never at the terminal.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "base/output_file.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/pipeline_options.h"
#include "cli/terminal_reporter.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/export/chrome_trace.h"
#include "engine/export/perfetto.h"
#include "engine/export/timeline.h"
#include "engine/export/timeline_dot.h"
#include "engine/session/answers.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_session.h"
#include "trace/command_marker.h"

namespace cw::cli {
namespace {

struct ExportArgs {
  std::string trace;
  std::string format;
  std::string output;
  std::string trace_format = "auto";
  std::vector<std::string> rules;
  bool no_stdlib = false;
  std::string hang = "auto";
  std::string answers;
  bool no_cache = false;
  bool all_processes = false;
  double min_hang = 0.5;
};

// The formats `export` writes: what each holds and how its file is made. A new format is
// an entry here (and its writer in engine/export).
struct ExportFormat {
  std::string_view name;
  // Only the causal path and its neighbours (not every thread): it needs a diagnosis,
  // and holds no other thread's activity.
  bool path_only;
  // The file's bytes; `notes` gets what the writer has to say.
  std::string (*render)(const Trace& trace, const engine::Timeline& tl,
                        std::vector<std::string>& notes);
};

constexpr ExportFormat kExportFormats[] = {
    {"perfetto", false,
     [](const Trace& trace, const engine::Timeline& tl, std::vector<std::string>& notes) {
       return engine::perfetto_trace(trace, tl, &notes);
     }},
    // json_text: a name that is not UTF-8 becomes U+FFFD instead of failing the dump.
    {"chrome", false,
     [](const Trace&, const engine::Timeline& tl, std::vector<std::string>&) {
       return json_text(engine::chrome_trace_json(tl), -1) + "\n";
     }},
    {"dot", true,
     [](const Trace& trace, const engine::Timeline& tl, std::vector<std::string>&) {
       std::ostringstream dot;
       engine::write_timeline_dot(dot, tl, engine::trace_start_ns(trace));
       return dot.str();
     }},
};

const ExportFormat& export_format(std::string_view name) {
  for (const ExportFormat& f : kExportFormats)
    if (f.name == name) return f;
  throw std::logic_error("export: no format " + std::string(name));  // the option checks it
}

int run_export(const ExportArgs& a) {
  const ExportFormat& format = export_format(a.format);
  const session::HangAndAnswers given = session::read_hang_and_answers(a.hang, a.answers);
  std::string why;
  TerminalReporter reporter;
  session::TraceSession session({a.trace, a.trace_format, a.rules, a.no_stdlib,
                                 cache_use(a.no_cache), /*unnamed_frames_per_diagnosis=*/true},
                                reporter);
  session.load_packs();
  const Trace& trace = session.trace();
  const engine::BuildResult& built = session.graph();
  session.thread_index();

  engine::DiagnoseOptions options;
  options.symptom = session::symptom_request(trace, given.hang, a.min_hang);
  engine::AutoAnswerer automatic;
  std::optional<session::FileAnswerer> from_file;
  if (!a.answers.empty()) from_file.emplace(a.answers, given.answer_lines, automatic);
  options.answerer = from_file ? static_cast<engine::Answerer*>(&*from_file) : &automatic;
  // Perfetto and Chrome files are of use without a diagnosis: when auto finds no thread
  // to diagnose they are written unmarked. A --hang that names a thread must find it.
  const bool optional = given.hang.automatic && given.hang.thread_name.empty() && !format.path_only;
  session::DiagnosisRun run;
  {
    const session::ProgressScope progress(reporter, "diagnosing");
    options.progress = progress.callback();
    run = session.diagnose(options, optional);
  }
  if (from_file)
    if (auto note = from_file->unused_note()) reporter.message(*note);
  const engine::Diagnosis* diagnosis = run.diagnosis ? &*run.diagnosis : nullptr;
  if (!diagnosis && format.path_only)
    throw session::SessionError(
        session::SessionError::Kind::BadInput,
        fmt::format("causeway: {}; --format dot draws the causal path of a hang (`causeway hangs "
                    "{}` lists the candidates; --hang or --min-hang picks one)",
                    *run.no_hang, a.trace));
  if (!diagnosis)
    reporter.message(
        fmt::format("{}: note: {}; the export marks no causal path", a.trace, *run.no_hang));

  // A recording of a command is about the command's processes (and those the diagnosis
  // reaches): the rest of the machine only with --all-processes.
  engine::TimelineScope scope;
  if (format.path_only)
    scope = engine::neighbourhood(built.graph, *diagnosis);
  else if (const Pid command = command_pid(trace); command != 0 && !a.all_processes)
    scope = engine::process_tree_scope(trace, built.graph, diagnosis, command);
  const engine::Timeline tl = engine::build_timeline(trace, built.graph, diagnosis, scope);
  std::vector<std::string> notes;
  const std::string data = format.render(trace, tl, notes);
  for (const std::string& n : notes) std::cerr << fmt::format("{}: note: {}\n", a.trace, n);
  // 0600 like a trace for the files that hold every thread's activity (traces hold other
  // users' data); DOT, the path alone, as `graph --dot` writes its file.
  const mode_t mode = format.path_only ? 0644 : 0600;
  if (!write_output_file(a.output, data, mode, &why)) {
    std::cerr << "causeway: " << why << "\n";
    return kExitEnvironment;
  }
  std::cerr << fmt::format("wrote {} ({}): {} thread{}, {} slices, {} flows, {} markers\n",
                           a.output, a.format, tl.tracks.size(), tl.tracks.size() == 1 ? "" : "s",
                           tl.slices.size(), tl.flows.size(), tl.instants.size());
  return kExitOk;
}

}  // namespace

Command add_export(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "write the graph and its diagnosis for a viewer: Perfetto, Chrome JSON or DOT");
  cmd->add_option("TRACE", args->trace, "trace file (binary or text form)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--format", args->format,
                  "perfetto: a Perfetto trace (ui.perfetto.dev) with the scheduler events; "
                  "chrome: Chrome trace JSON; dot: Graphviz DOT of the causal path and its "
                  "neighbours")
      ->required()
      ->check(CLI::IsMember([] {
        std::vector<std::string> names;
        for (const ExportFormat& f : kExportFormats) names.emplace_back(f.name);
        return names;
      }()));
  cmd->add_option("-o,--output", args->output, "the file to write")->type_name("FILE")->required();
  cmd->add_option("--rules", args->rules, "add rule packs (files or folders), in order")
      ->type_name("PACK")
      ->check(CLI::ExistingPath);
  cmd->add_flag("--no-stdlib", args->no_stdlib, "do not load stdlib-rules");
  cmd->add_option("--hang", args->hang,
                  "the hang whose causal path is marked, as `debug --hang` takes it: auto, "
                  "TID@SECONDS or NAME")
      ->type_name("auto|TID@SECONDS|NAME")
      ->default_str("auto");
  cmd->add_option("--answers", args->answers,
                  "answer the diagnosis's questions from FILE as `debug --answers` does; the "
                  "rest take the best-scored option")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  cmd->add_option("--min-hang", args->min_hang,
                  "with --hang auto or NAME: a stretch shorter than this is no hang (perfetto "
                  "and chrome then mark no path; dot fails)")
      ->type_name("SECONDS")
      ->default_val(0.5)
      ->check(CLI::Range(0.0, 1e6));
  add_trace_format_option(cmd, args->trace_format, /*format_alias=*/false);
  cmd->add_flag("--all-processes", args->all_processes,
                "perfetto and chrome: every recorded process (by default, in a recording of a "
                "command, its processes and those the diagnosis names)");
  add_no_cache_option(cmd, args->no_cache);
  cmd->footer(
      "perfetto and chrome hold every thread's segments as slices and every edge between "
      "threads as a flow, with the causal path and root cause marked; dot only the path and "
      "its neighbours. Questions are never asked: --answers, then the best-scored option. See "
      "docs/export.md.\n"
      "Exit status: 0 written, 1 the input was wrong (bad trace, pack, --hang, answers file, "
      "no such hang; for dot also no hang found), 2 the environment cannot do it (cannot "
      "write FILE).");
  return {cmd, [args] { return run_export(*args); }};
}

}  // namespace cw::cli
