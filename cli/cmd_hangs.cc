// `causeway hangs TRACE [--rules PACK…] [--no-stdlib] [--top N] [--json]`
//
// The candidates `debug --hang auto` chooses from, ranked as it ranks them: each
// candidate thread's longest stretch without a response, what it waited on, and the
// `--hang` argument that selects it (docs/diagnosis.md, "Choosing the hang").
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/pipeline_options.h"
#include "cli/terminal_reporter.h"
#include "engine/diagnosis/debug_report.h"
#include "engine/diagnosis/symptom.h"
#include "engine/graph/builder.h"
#include "engine/session/trace_session.h"
#include "rules/loader.h"

namespace cw::cli {
namespace {

double seconds(uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

std::string comm_of(const Trace& trace, Tid tid) {
  const ThreadInfo* t = trace.thread(tid);
  return t ? std::string(trace.strings.get(t->comm)) : std::string("?");
}

// What the candidate waited on: its longest wait's call, or nothing for a thread that
// ran or looped.
std::string waited_on(const Trace& trace, const engine::HangCandidate& c) {
  const auto& p = c.hang.profile;
  if (c.hang.kind != engine::HangKind::LongWait || p.longest_block_ns == 0) return {};
  return p.longest_block_call == engine::kNoIndex
             ? std::string("outside a recorded system call")
             : engine::describe_event(trace, p.longest_block_call);
}

nlohmann::json candidate_json(const Trace& trace, uint64_t t0, const engine::HangCandidate& c) {
  const engine::Hang& h = c.hang;
  nlohmann::json j = {{"pid", h.pid},
                      {"tid", h.tid},
                      {"comm", comm_of(trace, h.tid)},
                      {"kind", engine::hang_kind_name(h.kind)},
                      {"start_ns", h.start_ns},
                      {"end_ns", h.end_ns},
                      {"start_s", seconds(h.start_ns - std::min(h.start_ns, t0))},
                      {"unresponsive_ns", c.score_ns},
                      {"hang_arg", c.hang_arg}};
  const std::string on = waited_on(trace, c);
  j["waited_on"] = on.empty() ? nlohmann::json(nullptr) : nlohmann::json(on);
  j["woken_by"] = c.woken_by == 0
                      ? nlohmann::json(nullptr)
                      : nlohmann::json{{"tid", c.woken_by}, {"comm", comm_of(trace, c.woken_by)}};
  j["by_design"] = c.by_design.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.by_design);
  return j;
}

}  // namespace

Command add_hangs(CLI::App& app) {
  struct Args : TraceArgs {
    size_t top = 10;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "hangs",
      "list the candidates for `debug --hang auto`: each thread's longest stretch "
      "without a response, ranked");
  add_graph_input_options(cmd, args->trace, args->rules, args->no_stdlib);
  cmd->add_option("--top", args->top, "list at most N candidates")
      ->type_name("N")
      ->default_val(10)
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  add_trace_format_option(cmd, args->format);
  cmd->add_flag("--json", args->json, "print the candidates as JSON (docs/json.md)");
  add_no_cache_option(cmd, args->no_cache);
  cmd->footer(
      "Pass a candidate's TID@SECONDS to `causeway debug --hang`. See docs/diagnosis.md.\n"
      "Exit status: 0 done, 1 the input was wrong, 2 the environment cannot do it.");
  return {cmd, [args] {
            TerminalReporter reporter;
            session::TraceSession session(session_config(*args), reporter);
            session.load_packs();
            const Trace& trace = session.trace();
            const engine::BuildResult& built = session.graph();
            const engine::ThreadEvents& events = session.thread_index();
            std::string why;
            auto list = engine::list_hangs(trace, built.graph, events, {}, &why);
            if (list.size() > args->top) list.resize(args->top);
            const uint64_t t0 = engine::trace_start_ns(trace);
            if (args->json) {
              nlohmann::json out = {{"candidates", nlohmann::json::array()}};
              for (const auto& c : list) out["candidates"].push_back(candidate_json(trace, t0, c));
              if (list.empty()) out["none"] = why;
              std::cout << json_text(with_schema_version(std::move(out))) << "\n";
              return kExitOk;
            }
            if (list.empty()) {
              std::cout << "no candidate: " << why << "\n";
              return kExitOk;
            }
            std::cout << "candidates for --hang auto, best first:\n";
            for (size_t i = 0; i < list.size(); ++i) {
              const auto& c = list[i];
              const auto& h = c.hang;
              std::cout << fmt::format(
                  "{:>3}. {} (pid {}, tid {})  {}  at {:.6f} s, {:.3f} s without a response  "
                  "--hang {}\n",
                  i + 1, terminal_text(comm_of(trace, h.tid)), h.pid, h.tid,
                  engine::hang_kind_name(h.kind), seconds(h.start_ns - std::min(h.start_ns, t0)),
                  seconds(c.score_ns), c.hang_arg);
              if (std::string on = waited_on(trace, c); !on.empty()) {
                std::cout << "     waited in " << on;
                if (c.woken_by != 0)
                  std::cout << fmt::format(", ended by {} {}",
                                           terminal_text(comm_of(trace, c.woken_by)), c.woken_by);
                std::cout << "\n";
              }
              if (!c.by_design.empty())
                std::cout << "     waits by design: " << c.by_design << "\n";
            }
            return kExitOk;
          }};
}

}  // namespace cw::cli
