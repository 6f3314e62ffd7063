#include "cli/eval_latency.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/temp_dir.h"
#include "cli/eval_run.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/terminal_reporter.h"
#include "engine/latency/infer.h"
#include "engine/latency/rank.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_load.h"
#include "eval/latency_pair.h"
#include "eval/scenario.h"
#include "trace/command_marker.h"

namespace cw::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// How every pair is recorded: on-CPU samples at 999 Hz beside the stacks taken when system
// calls block, all unwound from a copy of the user stack (DWARF CFI), so that both the
// busy and the waiting time have deep stacks (docs/latency.md).
const std::vector<std::string> kRecordOptions = {"--sample", "999", "--call-graph", "dwarf"};
constexpr auto kRunTimeout = std::chrono::seconds(300);

// $CAUSEWAY_LATENCY_PAIRS, else share/causeway/latency-pairs under the binary's prefix (the
// build tree links it to tests/latency-pairs).
std::string default_suite() {
  if (const char* env = std::getenv("CAUSEWAY_LATENCY_PAIRS"); env && *env) return env;
  return (fs::path(self_exe()).parent_path().parent_path() / "share/causeway/latency-pairs")
      .lexically_normal()
      .string();
}

struct PairResult {
  eval::LatencyPair pair;
  std::string error;
  eval::PairScore score;     // normalised ranking
  eval::PairScore unscaled;  // the same without --normalize
  eval::ContextShape shape;
  std::string hottest;  // the costliest function of the first context
  int64_t first_cost_ns = 0;
  uint64_t base_ns = 0, slow_ns = 0;  // the time each recording of the program covered
  double seconds = 0;                 // preparing and recording both runs
};

std::string why_command_failed(const Trace& trace, const std::string& log) {
  std::optional<int> code = command_exit_code(trace);
  if (!code || *code == 0) return {};
  std::string how = (*code & 0x7f) != 0 ? fmt::format("signal {}", *code & 0x7f)
                                        : fmt::format("exit {}", (*code >> 8) & 0xff);
  return fmt::format("the pair's command failed ({}): {} (log: {})", how, failure_line(log), log);
}

std::optional<latency::Profile> profile_of(const std::string& trace_file, const std::string& log,
                                           const std::string& comm, Trace& trace,
                                           std::string& error) {
  ReadReport report;
  SymbolizeReport symbols;  // frames left unnamed are the table's business, not a note
  TerminalReporter reporter;
  try {
    report = session::read_trace(trace_file, trace, reporter, &symbols);
  } catch (const session::SessionError& e) {
    reporter.message(e.what());
    error = "cannot read the recording " + trace_file;
    return std::nullopt;
  }
  error = why_command_failed(trace, log);
  if (!error.empty()) return std::nullopt;
  latency::Selection selection;
  selection.comm = comm;
  latency::Profile p = latency::infer(trace, selection);
  if (p.stacks == 0) {
    error = fmt::format("no stacks of '{}' in {}", comm, trace_file);
    return std::nullopt;
  }
  return p;
}

// The pair's folder (its inputs, the plug-in it built) stays until its recordings are
// read: frames are named from the files they map, and a removed plug-in names nothing.
// With --keep it stays for `--from` runs too.
void run_pair(PairResult& r, const std::string& out_dir, bool record) {
  const eval::LatencyPair& p = r.pair;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string run = (fs::path(p.dir) / "run.sh").string();
  auto file = [&](const char* what) { return (fs::path(out_dir) / (p.name + what)).string(); };
  if (record) {
    // The pair's inputs (made by `prepare`, unrecorded) live in one folder for its runs.
    const std::string work = file(".work");
    std::error_code ec;
    fs::remove_all(work, ec);
    fs::create_directories(work, ec);
    const EnvVars env = {{"CW_PAIR_DIR", work}};
    r.error = run_logged({run, "prepare"}, file(".prepare.log"), env, "", kRunTimeout);
    if (!r.error.empty()) r.error = "run.sh prepare: " + r.error;
    std::vector<std::string> options = kRecordOptions;
    options.insert(options.end(), p.record.begin(), p.record.end());
    for (const char* mode : {"base", "slow"}) {
      if (!r.error.empty()) break;
      r.error = record_command(options, {run, mode}, file(fmt::format(".{}.cwt", mode).c_str()),
                               file(fmt::format(".{}.log", mode).c_str()), env, "", kRunTimeout);
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.error.empty()) return;
  Trace base_trace, slow_trace;
  auto base = profile_of(file(".base.cwt"), file(".base.log"), p.program, base_trace, r.error);
  if (!base) return;
  auto slow = profile_of(file(".slow.cwt"), file(".slow.log"), p.program, slow_trace, r.error);
  if (!slow) return;
  // Ranked as `latency --base --buggy --normalize`: the two runs differ in length, and a
  // server's threads that wait for work all along would otherwise rank as slower by as
  // much as the slowdown itself (docs/latency.md). The unscaled ranking is scored too.
  latency::RankOptions options;
  options.top = SIZE_MAX;
  options.normalize = true;
  const std::vector<latency::RankedPath> ranking =
      latency::diff_rank_paths(base->cct, slow->cct, options);
  r.score = eval::score_pair(ranking, p.truth);
  options.normalize = false;
  r.unscaled = eval::score_pair(latency::diff_rank_paths(base->cct, slow->cct, options), p.truth);
  r.shape = eval::context_shape(slow_trace, slow->cct, p.program);
  if (!ranking.empty()) {
    r.hottest = ranking[0].frames[ranking[0].costliest].function;
    r.first_cost_ns = ranking[0].cost;
  }
  r.base_ns = base->end_ns - base->start_ns;
  r.slow_ns = slow->end_ns - slow->start_ns;
}

void remove_work(const PairResult& r, const std::string& out_dir) {
  std::error_code ec;
  fs::remove_all(fs::path(out_dir) / (r.pair.name + ".work"), ec);
}

std::string cell(const std::optional<size_t>& v) {
  return v ? std::to_string(*v) : "—";
}
std::string cell(const std::optional<uint32_t>& v) {
  return v ? std::to_string(*v) : "—";
}

std::string render_markdown(const std::vector<PairResult>& results) {
  std::string out =
      "| pair | kind | \\|I\\| | \\|P\\| | \\|F\\| | l | p_min | f_min | p_min unscaled | "
      "root-cause binary | root-cause function | first context's costliest | base → slow |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const PairResult& r : results) {
    if (!r.error.empty()) {
      out += fmt::format("| {} | {} | error: {} |\n", r.pair.name, r.pair.kind, r.error);
      continue;
    }
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {:.1f} | {} | {} | {} | {} | {} | {} | {:.2f} s → {:.2f} s |\n",
        r.pair.name, r.pair.kind, r.shape.binaries, r.shape.contexts, r.shape.functions,
        r.shape.mean_length, cell(r.score.p_min), cell(r.score.f_min), cell(r.unscaled.p_min),
        r.pair.truth_binary, fmt::join(r.pair.truth, ", "), r.hottest,
        static_cast<double>(r.base_ns) / 1e9, static_cast<double>(r.slow_ns) / 1e9);
  }
  size_t ran = 0, top = 0;
  for (const PairResult& r : results) {
    if (!r.error.empty()) continue;
    ++ran;
    if (r.score.p_min == 1) ++top;
  }
  out += fmt::format("\np_min = 1 on {} of {} pairs ({} ran)\n", top, results.size(), ran);
  return out;
}

json render_json(const std::vector<PairResult>& results) {
  json pairs = json::array();
  size_t top = 0;
  for (const PairResult& r : results) {
    json j = {{"name", r.pair.name},
              {"kind", r.pair.kind},
              {"program", r.pair.program},
              {"truth", r.pair.truth},
              {"truth_binary", r.pair.truth_binary},
              {"seconds", r.seconds}};
    if (!r.error.empty()) {
      j["error"] = r.error;
    } else {
      j["error"] = nullptr;
      j["p_min"] = r.score.p_min ? json(*r.score.p_min) : json(nullptr);
      j["f_min"] = r.score.f_min ? json(*r.score.f_min) : json(nullptr);
      j["matched_function"] = r.score.function;
      j["p_min_unscaled"] = r.unscaled.p_min ? json(*r.unscaled.p_min) : json(nullptr);
      j["f_min_unscaled"] = r.unscaled.f_min ? json(*r.unscaled.f_min) : json(nullptr);
      j["binaries"] = r.shape.binaries;
      j["contexts"] = r.shape.contexts;
      j["functions"] = r.shape.functions;
      j["mean_context_length"] = r.shape.mean_length;
      j["first_context_costliest"] = r.hottest;
      j["first_context_cost_ns"] = r.first_cost_ns;
      j["base_ns"] = r.base_ns;
      j["slow_ns"] = r.slow_ns;
      if (r.score.p_min == 1) ++top;
    }
    pairs.push_back(std::move(j));
  }
  return {{"pairs", pairs}, {"p_min_1", top}, {"total", results.size()}};
}

}  // namespace

int run_latency_eval(const LatencyEvalArgs& args) {
  const std::string suite = args.suite.empty() ? default_suite() : args.suite;
  std::error_code missing;
  if (!fs::is_directory(suite, missing)) {
    std::cerr << fmt::format(
        "causeway: eval: no latency pairs at {}: give --suite DIR (tests/latency-pairs of a "
        "checkout) or set CAUSEWAY_LATENCY_PAIRS\n",
        suite);
    return kExitEnvironment;
  }
  std::vector<std::string> dirs = eval::latency_pair_dirs(suite);
  if (dirs.empty()) {
    std::cerr << fmt::format("causeway: eval: no pair folders (with a pair.json) in {}\n", suite);
    return kExitBadInput;
  }
  if (!args.names.empty()) {
    std::vector<std::string> chosen;
    for (const std::string& n : args.names) {
      std::string why;
      auto d = find_folder(dirs, n, "latency pair", &why);
      if (!d) {
        std::cerr << "causeway: eval: " << why << "\n";
        return kExitBadInput;
      }
      chosen.push_back(*d);
    }
    dirs = std::move(chosen);
  }
  std::vector<PairResult> results;
  for (const std::string& d : dirs) {
    try {
      results.push_back({eval::load_latency_pair(fs::absolute(d).string())});
    } catch (const eval::ScenarioError& e) {
      std::cerr << "causeway: " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  std::optional<TempDir> temp;
  std::string out_dir = !args.from.empty() ? args.from : args.keep;
  if (out_dir.empty()) {
    temp.emplace("causeway-eval");
    out_dir = temp->path();
    // A pair's program may run as another user (PostgreSQL refuses root) and must reach
    // its folder below: let others through the temp dir, not list it.
    chmod(out_dir.c_str(), 0711);
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  for (size_t i = 0; i < results.size(); ++i) {
    PairResult& r = results[i];
    run_pair(r, out_dir, args.from.empty());
    if (args.keep.empty() && args.from.empty()) remove_work(r, out_dir);
    const std::string progress =
        fmt::format("eval [{}/{}] {}: ", i + 1, results.size(), r.pair.name);
    if (!r.error.empty())
      std::cerr << progress << "error: " << r.error << "\n";
    else
      std::cerr << progress
                << fmt::format("p_min {}, f_min {} ({:.1f} s)\n", cell(r.score.p_min),
                               cell(r.score.f_min), r.seconds);
  }
  if (args.json)
    std::cout << json_text(with_schema_version(render_json(results))) << "\n";
  else
    std::cout << render_markdown(results);
  for (const PairResult& r : results)
    if (!r.error.empty() || !r.score.p_min) return kExitMismatch;
  return kExitOk;
}

}  // namespace cw::cli
