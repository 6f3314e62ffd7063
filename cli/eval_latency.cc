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
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "cli/terminal_reporter.h"
#include "eval/command_run.h"
#include "eval/latency_pair.h"
#include "eval/latency_suite.h"
#include "eval/scenario.h"

namespace cw::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// $CAUSEWAY_LATENCY_PAIRS, else share/causeway/latency-pairs under the binary's prefix (the
// build tree links it to tests/latency-pairs).
std::string default_suite() {
  if (const char* env = std::getenv("CAUSEWAY_LATENCY_PAIRS"); env && *env) return env;
  return (fs::path(eval::self_exe()).parent_path().parent_path() / "share/causeway/latency-pairs")
      .lexically_normal()
      .string();
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
      auto d = eval::find_folder(dirs, n, "latency pair", &why);
      if (!d) {
        std::cerr << "causeway: eval: " << why << "\n";
        return kExitBadInput;
      }
      chosen.push_back(*d);
    }
    dirs = std::move(chosen);
  }
  std::vector<eval::PairResult> results;
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
  TerminalReporter reporter;
  for (size_t i = 0; i < results.size(); ++i) {
    eval::PairResult& r = results[i];
    eval::run_pair(r, out_dir, args.from.empty(), reporter);
    if (args.keep.empty() && args.from.empty()) eval::remove_pair_work(r, out_dir);
    const std::string progress =
        fmt::format("eval [{}/{}] {}: ", i + 1, results.size(), r.pair.name);
    if (!r.error.empty())
      std::cerr << progress << "error: " << r.error << "\n";
    else
      std::cerr << progress
                << fmt::format("p_min {}, f_min {} ({:.1f} s)\n", eval::score_cell(r.score.p_min),
                               eval::score_cell(r.score.f_min), r.seconds);
  }
  if (args.json)
    std::cout << json_text(with_schema_version(eval::render_latency_json(results))) << "\n";
  else
    std::cout << eval::render_latency_markdown(results);
  for (const eval::PairResult& r : results)
    if (!r.error.empty() || !r.score.p_min) return kExitMismatch;
  return kExitOk;
}

}  // namespace cw::cli
