// `causeway ui TRACE [--rules PACK…] [--no-stdlib] [--hang …] [--answers FILE]
//                    [--save-answers PACK] [--port N] [--no-browser] [--json]`
//
// The diagnosis of `causeway debug` in a browser (docs/ui.md): a server on 127.0.0.1 with
// a random token in its address serves a page with the timeline of the threads on the
// causal path, the report, the questions as the diagnosis asks them (answered by click)
// and the latency heat map. It serves until Ctrl-C or the page's Quit.
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/debug_session.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/pipeline_options.h"
#include "cli/terminal_reporter.h"
#include "engine/diagnosis/answer_pack.h"
#include "engine/diagnosis/debug_report.h"
#include "engine/export/latency_html.h"
#include "engine/latency/infer.h"
#include "engine/latency/rank.h"
#include "engine/latency/ranking_json.h"
#include "engine/session/answers.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_session.h"
#include "trace/command_marker.h"
#include "ui/server.h"
#include "ui/session.h"
#include "ui/timeline_json.h"

extern char** environ;

namespace cw::cli {
namespace {

struct UiArgs : DiagnosisArgs {
  int port = 0;
  bool no_browser = false;
};

// What the diagnosis left for the server's threads: set once, when it is done.
struct Outcome {
  std::mutex mu;
  bool done = false;
  engine::Diagnosis diagnosis;
};

// The heat map of the trace's costliest calling contexts (`causeway latency --html`), or
// nullopt with `*why` when its events carry no stacks.
std::optional<std::string> latency_page(const Trace& trace, const std::string& title,
                                        std::string* why) {
  // A recording of a command is about the command's processes, as `causeway latency` takes it.
  latency::Selection selection;
  if (const Pid command = command_pid(trace); command != 0) selection.tree = command;
  const latency::Profile profile = latency::infer(trace, selection);
  if (profile.stacks == 0) {
    *why = "no latency data: the trace's events carry no stacks";
    return std::nullopt;
  }
  const latency::RankOptions options;
  const auto ranked = latency::rank_paths(profile.cct, options);
  if (ranked.empty()) {
    *why = "no latency data: no calling context took any time";
    return std::nullopt;
  }
  return engine::latency_html(latency::ranking_json(options, profile, nullptr, ranked),
                              latency::ranked_tree_json(ranked, false), title);
}

// Opens `url` in the desktop's browser (xdg-open) without putting the token on a command
// line other users can read (/proc/PID/cmdline): the browser is given a file only this
// user can read that forwards to the address, as Jupyter does. Returns the folder made for
// it (removed when the server ends: the browser may read the file late), or "".
std::string open_browser(const std::string& url) {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  std::string dir_template =
      std::string(runtime && *runtime ? runtime : "/tmp") + "/causeway-ui-XXXXXX";
  if (!mkdtemp(dir_template.data())) {
    std::cerr << "causeway ui: cannot open a browser; open the address above\n";
    return "";
  }
  const std::string file = dir_template + "/open.html";
  {
    std::ofstream out(file);
    out << "<!doctype html><meta http-equiv=\"refresh\" content=\"0; url=" << url << "\"><a href=\""
        << url << "\">causeway ui</a>\n";
  }
  chmod(file.c_str(), 0600);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string program = "xdg-open";
  char* argv[] = {program.data(), const_cast<char*>(file.c_str()), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "xdg-open", &actions, nullptr, argv, environ) != 0)
    std::cerr << "causeway ui: no xdg-open to start a browser with; open the address above\n";
  else
    std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();  // no zombie while serving
  posix_spawn_file_actions_destroy(&actions);
  return dir_template;
}

int run_ui(const UiArgs& a) {
  const session::HangAndAnswers given = session::read_hang_and_answers(a.hang, a.answers);
  const rules::HangSpec& hang = given.hang;
  const std::vector<std::string>& answer_lines = given.answer_lines;
  std::string why;

  TerminalReporter reporter;
  session::TraceSession pipeline(session_config(a, true), reporter);
  const rules::RuleSet& ruleset = pipeline.load_packs();
  const Trace& trace = pipeline.trace();
  const engine::BuildResult& built = pipeline.graph();
  // Made and saved here, while this process runs one thread: a graph and a thread index
  // made afresh (and events read afresh) are saved by a copy of the process
  // (CacheSession::save_queued).
  pipeline.thread_index();
  pipeline.save_graph();

  ui::Session session;
  session.merge(
      {{"phase", "diagnosing"},
       {"trace", a.trace},
       {"save_to", a.save_answers.empty() ? nlohmann::json() : nlohmann::json(a.save_answers)}});
  Outcome outcome;

  // Ended by the page's Quit or by SIGINT/SIGTERM, which only the signal thread takes. That
  // thread is never joined (it waits for a signal that may not come): what it touches is
  // shared, not on this stack.
  struct Quit {
    std::mutex mu;
    std::condition_variable cv;
    bool requested = false;
    void request() {
      {
        std::lock_guard lock(mu);
        requested = true;
      }
      cv.notify_all();
    }
  };
  auto quit = std::make_shared<Quit>();

  ui::ServerConfig config;
  try {
    config.token = ui::random_token();
  } catch (const std::system_error& e) {
    std::cerr << "causeway ui: no random token: " << e.what() << "\n";
    return kExitEnvironment;
  }
  config.port = a.port;
  config.quit = [quit] { quit->request(); };
  if (!a.save_answers.empty())
    config.save = [&]() -> nlohmann::json {
      std::lock_guard lock(outcome.mu);
      if (!outcome.done) return {{"ok", false}, {"message", "the diagnosis is not done yet"}};
      try {
        const std::string saved = session::save_answers(a.save_answers, a.trace, a.hang, ruleset,
                                                        trace, built.graph, outcome.diagnosis);
        reporter.message(saved);
        return {{"ok", true}, {"message", saved}};
      } catch (const session::SessionError& e) {
        reporter.message(e.what());
        return {{"ok", false}, {"message", e.what()}};
      }
    };
  config.pack_text = [&]() -> std::optional<std::string> {
    std::lock_guard lock(outcome.mu);
    if (!outcome.done) return std::nullopt;
    // Downloaded, the pack lives wherever the browser puts it: its test names the trace
    // by its absolute path.
    engine::AnswerPackSpec spec{
        engine::answer_pack_id(std::filesystem::path(a.trace).stem().string()),
        std::filesystem::absolute(a.trace).lexically_normal().string(),
        a.hang,
        {}};
    for (const auto& p : ruleset.packs) spec.requires_.push_back(p.id);
    return engine::answer_pack_text(trace, built.graph, outcome.diagnosis, spec);
  };
  std::optional<std::string> heat_map;
  config.latency_page = [&]() -> std::optional<std::string> {
    std::lock_guard lock(outcome.mu);
    return heat_map;
  };

  ui::Server server(session, config);
  if (!server.bind(&why)) {
    std::cerr << "causeway ui: " << why << "\n";
    return kExitEnvironment;
  }
  if (a.json)
    std::cout << json_text(with_schema_version(
                               nlohmann::json{{"url", server.url()}, {"port", server.port()}}),
                           -1)
              << std::endl;
  else
    std::cout << "causeway ui: " << server.url() << "\n(Ctrl-C or the page's Quit ends it)"
              << std::endl;

  // The threads started below inherit the mask: only the waiter takes the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals, quit] {
    int sig = 0;
    sigwait(&signals, &sig);
    quit->request();
  }).detach();

  std::thread serving([&] { server.run(); });

  std::atomic<bool> worker_finished = false;
  std::thread worker([&] {
    ui::WebAnswerer web(session);
    std::optional<session::FileAnswerer> from_file;
    if (!a.answers.empty()) from_file.emplace(a.answers, answer_lines, web);
    engine::DiagnoseOptions options;
    options.symptom = session::symptom_request(trace, hang, kDefaultMinHangSeconds);
    options.answerer = from_file ? static_cast<engine::Answerer*>(&*from_file) : &web;
    // Each question comes with what was found so far, as text and on the timeline, where
    // the segment it asks about and its options' segments and edges are marked.
    uint64_t timelines = 0;
    options.before_asking = [&](const engine::Diagnosis& so_far, const engine::Question& q) {
      web.set_context({{"so_far", engine::so_far_text(trace, built.graph, so_far, true)}});
      session.set("timeline", ui::diagnosis_timeline(trace, built.graph, so_far, ++timelines, &q));
    };
    std::string latency_why;
    std::optional<std::string> page = latency_page(trace, a.trace, &latency_why);
    {
      std::lock_guard lock(outcome.mu);
      heat_map = page;
    }
    session.set("latency", page ? nlohmann::json{{"available", true}}
                                : nlohmann::json{{"available", false}, {"note", latency_why}});
    try {
      session::DiagnosisRun run = pipeline.diagnose(options);
      if (run.no_hang) {
        session.merge({{"phase", "no_hang"}, {"message", *run.no_hang}});
        worker_finished = true;
        return;
      }
      engine::Diagnosis diagnosis = std::move(*run.diagnosis);
      if (auto note =
              session::unnamed_frames_note(a.trace, built.graph, diagnosis, pipeline.symbols()))
        reporter.message(*note);
      nlohmann::json done{
          {"phase", "done"},
          {"report",
           {{"text", engine::debug_text(trace, built.graph, diagnosis)},
            {"json", with_schema_version(debug_report_json(trace, built.graph, diagnosis))}}},
          {"timeline", ui::diagnosis_timeline(trace, built.graph, diagnosis, ++timelines)}};
      if (from_file && from_file->unused() > 0)
        done["notes"] = {
            fmt::format("{}: {} answer(s) not used: the diagnosis asked fewer questions", a.answers,
                        from_file->unused())};
      {
        std::lock_guard lock(outcome.mu);
        outcome.diagnosis = std::move(diagnosis);
        outcome.done = true;
      }
      session.merge(done);
    } catch (const ui::Cancelled&) {
    } catch (const std::exception& e) {
      // A symptom not in the trace, a wrong answers file, a failing Lua hook, …: the page
      // says what `debug` would say, and the server goes on until the user ends it.
      std::string message = e.what();
      if (message.rfind("causeway: ", 0) == 0) message.erase(0, 10);
      while (!message.empty() && message.back() == '\n') message.pop_back();
      reporter.message("causeway ui: no diagnosis: " + message);
      session.merge({{"phase", "error"}, {"message", message}});
    }
    worker_finished = true;
  });

  const std::string opener = a.no_browser ? "" : open_browser(server.url());

  {
    std::unique_lock lock(quit->mu);
    quit->cv.wait(lock, [&] { return quit->requested; });
  }
  session.cancel();
  server.stop();
  serving.join();
  if (!opener.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(opener, ec);
  }
  std::cerr << "causeway ui: ended\n";
  if (!worker_finished) {
    // A diagnosis at work (not waiting for an answer, which cancel() ended) is not waited
    // for: nobody is left to show its result to, and at scale it takes a while.
    std::cout.flush();
    std::_Exit(kExitOk);
  }
  worker.join();
  return kExitOk;
}

}  // namespace

Command add_ui(CLI::App& app) {
  auto args = std::make_shared<UiArgs>();
  auto* cmd = app.add_subcommand(
      "ui",
      "diagnose a hang in a browser: a page on 127.0.0.1 with the timeline of the threads on "
      "the causal path, the report, and the questions answered by click");
  add_graph_input_options(cmd, args->trace, args->rules, args->no_stdlib);
  cmd->add_option("--hang", args->hang, "the symptom, as `causeway debug --hang` takes it")
      ->type_name("auto|TID@SECONDS|NAME")
      ->default_str("auto");
  cmd->add_option("--answers", args->answers,
                  "answer the first questions from FILE (as `causeway debug --answers`); the "
                  "page answers the rest")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  cmd->add_option("--save-answers", args->save_answers,
                  "the page's \"save answers\" writes them as a pack in folder PACK (else it "
                  "offers the pack as a download)")
      ->type_name("PACK");
  cmd->add_option("--port", args->port, "the port on 127.0.0.1 to serve on; 0: any free one")
      ->type_name("N")
      ->default_val(0)
      ->check(CLI::Range(0, 65535));
  cmd->add_flag("--no-browser", args->no_browser, "only print the address; do not open a browser");
  cmd->add_flag("--json", args->json, "print the address as a JSON line ({\"url\", \"port\"})");
  add_trace_format_option(cmd, args->format);
  add_no_cache_option(cmd, args->no_cache);
  cmd->footer(
      "The page is served on 127.0.0.1 only, under a random token in its address: any request "
      "without it gets 403. It serves until Ctrl-C or the page's Quit (docs/ui.md).\nExit "
      "status: 0 ended, 1 the input was wrong (bad trace, pack, --hang, answers file), 2 the "
      "environment cannot do it (no port).");
  return {cmd, [args] { return run_ui(*args); }};
}

}  // namespace cw::cli
