// `causeway debug TRACE [--rules PACK…] [--no-stdlib] [--hang auto|TID@SECONDS|NAME]
//                       [--answers FILE] [--save-answers PACK] [--auto] [--json]
//                       [--baseline] [--beam-width N] [--lookback N] [--watch]`
//
// Finds the hang, walks the event graph back to its root cause and reports it
// (docs/diagnosis.md). Questions at ambiguous points go to the user at a terminal, to an
// answers file, to the packs' `answer` rules, or to the best-scored option. With --watch it
// diagnoses again whenever a pack changes (watch_loop).
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/debug_session.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/pack_watch.h"
#include "cli/pipeline_options.h"
#include "cli/terminal_reporter.h"
#include "engine/diagnosis/debug_report.h"
#include "engine/diagnosis/diagnose.h"
#include "engine/session/answers.h"
#include "engine/session/pack_paths.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_session.h"
#include "rules/loader.h"

namespace cw::cli {
namespace {

using engine::Answer;
using engine::AnswerSource;
using engine::Question;
using session::option_number;
using session::stop_option;
using session::trim;

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// The prompt at a terminal: the question, the options best first with a line of evidence
// each; a number picks, Enter picks the first, `?` explains, `s` stops. At the end of
// input the remaining questions take the best-scored option.
class TerminalAnswerer : public engine::Answerer {
 public:
  TerminalAnswerer(std::istream& in, std::ostream& out, session::Reporter& reporter)
      : in_(in), out_(out), reporter_(reporter) {}

  Answer ask(const Question& q) override {
    if (closed_) return {0, AnswerSource::Auto, {}};
    reporter_.progress_done();
    ++asked_;
    out_ << fmt::format("\nquestion {} ({}): {}\n", asked_, engine::question_kind_name(q.kind),
                        q.text);
    for (size_t i = 0; i < q.options.size(); ++i) {
      out_ << fmt::format("  {}) {}\n", i + 1, q.options[i].label);
      std::string ev = first_line(q.options[i].evidence);
      if (!ev.empty()) out_ << fmt::format("       {}\n", ev);
    }
    for (;;) {
      out_ << fmt::format("answer [1-{}, Enter = 1, ? = explain, s = stop]: ", q.options.size());
      out_.flush();
      std::string line;
      if (!std::getline(in_, line)) {
        closed_ = true;
        out_ << "\nend of input: the remaining questions take the best-scored option\n";
        return {0, AnswerSource::Auto, {}};
      }
      line = trim(line);
      if (line.empty()) return {0, AnswerSource::User, {}};
      if (line == "?") {
        out_ << "\n" << q.help << "\n";
        for (size_t i = 0; i < q.options.size(); ++i)
          out_ << fmt::format("\n  {}) {}\n{}\n", i + 1, q.options[i].label, q.options[i].evidence);
        out_ << "\n";
        continue;
      }
      if (line == "s") {
        if (auto s = stop_option(q)) return {*s, AnswerSource::User, {}};
        out_ << "this question has no option to stop at; pick one of the options\n";
        continue;
      }
      if (auto n = option_number(line, q.options.size())) return {*n, AnswerSource::User, {}};
      out_ << fmt::format(
          "'{}' is not an answer: type a number from 1 to {}, Enter for 1, ? to "
          "explain, s to stop\n",
          line, q.options.size());
    }
  }

 private:
  std::istream& in_;
  std::ostream& out_;
  session::Reporter& reporter_;
  bool closed_ = false;
  size_t asked_ = 0;
};

struct DebugArgs : DiagnosisArgs {
  std::vector<std::string> join;  // other hosts' traces
  bool automatic = false;
  bool baseline = false;
  bool watch = false;
  uint32_t beam_width = 8;
  uint32_t lookback = 3;
  double min_hang = kDefaultMinHangSeconds;
};

// The traces joined and how their clocks were aligned to the first's (docs/json.md).
nlohmann::json join_json(const DebugArgs& a, const std::vector<ClockAlignment>& clocks) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t k = 0; k < clocks.size(); ++k) {
    const ClockAlignment& c = clocks[k];
    nlohmann::json j = {{"trace", k == 0 ? a.trace : a.join.at(k - 1)},
                        {"offset_ns", c.offset_ns},
                        {"messages_to", c.to_other},
                        {"messages_from", c.to_base},
                        {"low_ns", c.to_other ? nlohmann::json(c.low_ns) : nlohmann::json()},
                        {"high_ns", c.to_base ? nlohmann::json(c.high_ns) : nlohmann::json()}};
    out.push_back(std::move(j));
  }
  return out;
}

// One diagnosis of the session's trace with its packs: builds the graph, diagnoses, prints
// the report. Throws SessionError. `watch` (--watch: the run's number and the changed
// files) goes into the JSON report when not null.
void diagnose_once(const DebugArgs& a, const session::HangAndAnswers& given,
                   session::TraceSession& session, TerminalReporter& reporter,
                   const nlohmann::json& watch = nullptr) {
  // --watch --json: JSON Lines, one document per run on one line, for scripts that follow.
  const int lines = watch.is_null() ? 2 : -1;
  const Trace& trace = session.trace();
  const engine::Graph& graph = session.graph_to_diagnose().graph;
  session.thread_index();

  engine::DiagnoseOptions options;
  options.symptom = session::symptom_request(trace, given.hang, a.min_hang);
  options.beam_width = a.beam_width;
  options.lookback = a.lookback;
  options.baseline = a.baseline;

  const session::ProgressScope progress(reporter, "diagnosing");
  options.progress = progress.callback();
  const bool interactive = !a.automatic && isatty(STDIN_FILENO) != 0 && isatty(STDERR_FILENO) != 0;
  engine::AutoAnswerer automatic;
  TerminalAnswerer terminal(std::cin, std::cerr, reporter);
  engine::Answerer& fallback = interactive ? static_cast<engine::Answerer&>(terminal) : automatic;
  std::optional<session::FileAnswerer> from_file;
  if (!a.answers.empty()) from_file.emplace(a.answers, given.answer_lines, fallback);
  options.answerer = from_file ? &*from_file : &fallback;
  // At a terminal a question comes after the hang and what was found so far: a
  // recurse question is about a culprit on the path the user has not seen yet.
  bool hang_shown = false;
  if (interactive)
    options.before_asking = [&](const engine::Diagnosis& so_far, const Question& q) {
      const bool with_hang = !hang_shown;
      if (!with_hang && q.kind != engine::QuestionKind::Recurse) return;
      reporter.progress_done();
      std::cerr << "\n" << engine::so_far_text(trace, graph, so_far, with_hang);
      hang_shown = true;
    };

  const session::DiagnosisRun run = session.diagnose(options);
  reporter.progress_done();
  if (run.no_hang) {
    // Nothing to diagnose is an answer, not an error.
    if (a.json) {
      nlohmann::json j{{"hang", nullptr}, {"no_hang", *run.no_hang}};
      if (!watch.is_null()) j["watch"] = watch;
      std::cout << json_text(with_schema_version(std::move(j)), lines) << "\n";
    } else
      std::cout << *run.no_hang << "\n(`causeway hangs " << a.trace
                << "` lists the candidates; --min-hang lowers the threshold)\n";
    return;
  }
  const engine::Diagnosis& diagnosis = *run.diagnosis;
  if (from_file)
    if (auto note = from_file->unused_note()) reporter.message(*note);
  if (auto note = session::unnamed_frames_note(a.trace, graph, diagnosis, session.symbols()))
    reporter.message(*note);

  if (!a.save_answers.empty())
    reporter.message(session::save_answers(a.save_answers, a.trace, a.hang, session.rules(), trace,
                                           graph, diagnosis));

  if (a.json) {
    nlohmann::json j = debug_report_json(trace, graph, diagnosis);
    if (!a.join.empty()) j["join"] = join_json(a, session.clocks());
    if (!watch.is_null()) j["watch"] = watch;
    std::cout << json_text(with_schema_version(std::move(j)), lines) << "\n";
  } else
    std::cout << engine::debug_text(trace, graph, diagnosis);
  // Out before the graph and the diagnosis are freed on return, which takes a while at
  // scale: under --watch the report is what the user waits for.
  std::cout.flush();
}

// --watch: the read end of the pipe the SIGINT handler writes to, and whether a run is
// under way. A run is not waited for: what it would print is stale once the user
// interrupts, so the handler ends the process at once (every earlier report was flushed).
int g_interrupt_pipe[2] = {-1, -1};
volatile sig_atomic_t g_running = 0;

extern "C" void on_interrupt(int) {
  if (g_running) _exit(kExitOk);
  char c = 0;
  [[maybe_unused]] ssize_t n = write(g_interrupt_pipe[1], &c, 1);
}

std::string clock_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

// The pack errors of a run under --watch --json: one document per run, as a diagnosis.
nlohmann::json pack_errors_json(const rules::LoadResult& loaded, const nlohmann::json& watch) {
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& d : loaded.diagnostics)
    if (d.severity == Severity::Error)
      errors.push_back({{"file", d.source ? d.source->path : std::string()},
                        {"line", d.loc.line},
                        {"column", d.loc.col},
                        {"message", d.message}});
  return with_schema_version(
      nlohmann::json{{"hang", nullptr}, {"pack_errors", errors}, {"watch", watch}});
}

// --watch: SIGINT ends the session with exit 0 from here on, the trace's reading included
// (g_running: at once). Returns false, having said why, when the pipe cannot be made.
bool exit_zero_on_interrupt() {
  if (pipe2(g_interrupt_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::cerr << "causeway: --watch: " << std::strerror(errno) << "\n";
    return false;
  }
  g_running = 1;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  return true;
}

// `causeway debug --watch`: diagnoses the trace (read once, by the caller), then again each
// time a pack it loads changes, until SIGINT (exit 0). A run that fails (a pack with an
// error, a symptom not in the trace) says why and the watch goes on: the next save may
// fix it.
int watch_loop(const DebugArgs& a, const session::HangAndAnswers& given,
               session::TraceSession& session, TerminalReporter& reporter) {
  std::optional<PackWatcher> watcher;
  try {
    watcher.emplace();
  } catch (const std::system_error& e) {
    std::cerr << "causeway: --watch: cannot watch the packs: " << e.what() << "\n";
    return kExitEnvironment;
  }
  std::vector<std::string> changed;
  for (size_t run = 1;; ++run) {
    g_running = 1;
    if (run > 1) {
      std::string what = changed.front();
      if (changed.size() > 1) what += fmt::format(" and {} more", changed.size() - 1);
      (a.json ? std::cerr : std::cout)
          << fmt::format("\n=== {} {} changed: run {} ===\n\n", clock_now(), what, run);
    }
    const nlohmann::json watch{{"run", run}, {"changed", changed}};
    // Watched before they are read: a save while this run works makes the next run.
    std::vector<std::string> paths;
    std::optional<rules::LoadResult> loaded;
    try {
      session::PackPaths pp = session::pack_paths(a.rules, a.no_stdlib);
      paths = pp.standard;
      paths.insert(paths.end(), pp.added.begin(), pp.added.end());
      watcher->watch(paths);
      loaded = rules::load_packs(pp.standard, pp.added);
    } catch (const session::MissingPacksError& e) {
      std::cerr << e.what() << "\n";
      watcher->watch(a.rules);
    }
    if (loaded) {
      const nlohmann::json pack_errors =
          loaded->ok() ? nlohmann::json() : pack_errors_json(*loaded, watch);
      try {
        session.use_packs(std::move(*loaded));
        diagnose_once(a, given, session, reporter, watch);
      } catch (const session::SessionError& e) {
        if (!pack_errors.is_null()) {
          if (a.json) std::cout << json_text(pack_errors, -1) << "\n";
          std::cerr << "no diagnosis: the packs have errors; waiting for the next change\n";
        } else {
          const std::string text = e.what();
          std::cerr << text << (text.empty() || text.back() == '\n' ? "" : "\n");
          if (a.json)
            std::cout << json_text(with_schema_version(nlohmann::json{
                                       {"hang", nullptr},
                                       {"error",
                                        "the diagnosis failed; its message is on standard error"},
                                       {"watch", watch}}),
                                   -1)
                      << "\n";
        }
      }
    }
    std::cout.flush();
    std::cerr.flush();
    if (run == 1)
      std::cerr << fmt::format("watching {} pack{} for changes; Ctrl-C ends\n", paths.size(),
                               paths.size() == 1 ? "" : "s");
    g_running = 0;
    auto next = watcher->wait(g_interrupt_pipe[0], std::chrono::milliseconds(100));
    if (!next) return kExitOk;
    changed = std::move(*next);
  }
}

}  // namespace

Command add_debug(CLI::App& app) {
  auto args = std::make_shared<DebugArgs>();
  auto* cmd = app.add_subcommand("debug",
                                 "find why a thread hung: walk the graph back to the "
                                 "root cause, asking where the trace is ambiguous");
  add_graph_input_options(cmd, args->trace, args->rules, args->no_stdlib);
  cmd->add_option("OTHER", args->join,
                  "other hosts' traces, joined to TRACE by the TCP messages between them: "
                  "their clocks aligned to TRACE's (the offsets are said), the walk goes from "
                  "one host into another (docs/fleet.md, \"Hangs across hosts\")")
      ->type_name("TRACE")
      ->check(CLI::ExistingPath);
  cmd->add_option("--hang", args->hang,
                  "the symptom: auto (the longest stretch a main thread or event-loop thread did "
                  "not return to its loop), TID@SECONDS (thread TID at SECONDS since the "
                  "trace started), or NAME (the longest stretch of the threads named NAME)")
      ->type_name("auto|TID@SECONDS|NAME")
      ->default_str("auto");
  cmd->add_option("--answers", args->answers,
                  "answer the questions from FILE: one option number or 's' (stop) per "
                  "line, '#' comments; then ask (terminal) or choose the best (otherwise)")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  auto* save_answers =
      cmd->add_option("--save-answers", args->save_answers,
                      "write every answer as an `answer` rule in folder PACK (PACK/pack.cw, with "
                      "a test): --rules PACK then asks nothing")
          ->type_name("PACK");
  cmd->add_flag("--watch", args->watch,
                "read the trace once, then diagnose it again each time a pack file it loads "
                "changes, until Ctrl-C (exit 0); implies --auto (--answers still answers "
                "first); with --json, one JSON document per run, one per line")
      ->excludes(save_answers);
  cmd->add_flag("--auto", args->automatic,
                "never ask: take the best-scored option (also without a terminal); the "
                "report lists each such choice");
  add_trace_format_option(cmd, args->format);
  add_no_cache_option(cmd, args->no_cache);
  cmd->add_flag("--json", args->json, "print the diagnosis as JSON (docs/json.md)");
  cmd->add_flag("--baseline", args->baseline,
                "compare the hang's wait with a quick run of the same wait before it even "
                "when another thread's wake-up ended it (by default only a wait nobody woke "
                "is compared)");
  cmd->add_option("--beam-width", args->beam_width, "paths kept by the beam search")
      ->type_name("N")
      ->default_val(8)
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--lookback", args->lookback, "steps between prunings of the beam to its width")
      ->type_name("N")
      ->default_val(3)
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--min-hang", args->min_hang,
                  "with --hang auto or NAME: when no candidate went this many seconds without "
                  "a response, say \"no hang found\" (exit 0) instead of diagnosing")
      ->type_name("SECONDS")
      ->default_val(kDefaultMinHangSeconds)
      ->check(CLI::Range(0.0, 1e6));
  cmd->footer(
      "Questions: at a terminal, type an option's number, Enter for the first (best), ? to "
      "explain, s to stop. See docs/diagnosis.md.\nCache: a binary trace's decoded events and "
      "the graph are kept in TRACE.cwcache/ (else ~/.cache/causeway) and used when the trace "
      "(and for the graph the packs) and causeway are the same (docs/cache.md); --no-cache or "
      "CAUSEWAY_CACHE=off turns it off.\nExit status: 0 done, 1 the "
      "input was "
      "wrong (bad trace, pack, --hang, answers file, or no such hang), 2 the environment "
      "cannot do it.");
  return {cmd, [args] {
            // Nobody can answer at the terminal while the reports scroll by.
            if (args->watch) args->automatic = true;
            const session::HangAndAnswers given =
                session::read_hang_and_answers(args->hang, args->answers);
            TerminalReporter reporter;
            session::SessionConfig config = session_config(*args, true);
            config.join_paths = args->join;
            session::TraceSession session(std::move(config), reporter);
            // Packs before the trace, which takes longer to read: a pack's error shows at once.
            // --watch loads them for each run, in watch_loop.
            if (!args->watch) {
              session.load_packs();
              diagnose_once(*args, given, session, reporter);
              return kExitOk;
            }
            if (!exit_zero_on_interrupt()) return kExitEnvironment;
            session.trace();
            return watch_loop(*args, given, session, reporter);
          }};
}

}  // namespace cw::cli
