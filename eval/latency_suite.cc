#include "eval/latency_suite.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "engine/latency/infer.h"
#include "engine/latency/rank.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_load.h"
#include "eval/command_run.h"

namespace cw::eval {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// How every pair is recorded: on-CPU samples at 999 Hz beside the stacks taken when system
// calls block, all unwound from a copy of the user stack (DWARF CFI), so that both the
// busy and the waiting time have deep stacks (docs/latency.md).
const std::vector<std::string> kRecordOptions = {"--sample", "999", "--call-graph", "dwarf"};
constexpr auto kRunTimeout = std::chrono::seconds(300);

std::optional<latency::Profile> profile_of(const std::string& trace_file, const std::string& log,
                                           const std::string& comm, Trace& trace,
                                           std::string& error, session::Reporter& reporter) {
  ReadReport report;
  SymbolizeReport symbols;  // frames left unnamed are the table's business, not a note
  try {
    report = session::read_trace(trace_file, trace, reporter, &symbols);
  } catch (const session::SessionError& e) {
    reporter.message(e.what());
    error = "cannot read the recording " + trace_file;
    return std::nullopt;
  }
  error = command_failure(trace, log, "the pair's");
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

}  // namespace

// The pair's folder (its inputs, the plug-in it built) stays until its recordings are
// read: frames are named from the files they map, and a removed plug-in names nothing.
// With --keep it stays for `--from` runs too.
void run_pair(PairResult& r, const std::string& out_dir, bool record, session::Reporter& reporter) {
  const LatencyPair& p = r.pair;
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
  auto base =
      profile_of(file(".base.cwt"), file(".base.log"), p.program, base_trace, r.error, reporter);
  if (!base) return;
  auto slow =
      profile_of(file(".slow.cwt"), file(".slow.log"), p.program, slow_trace, r.error, reporter);
  if (!slow) return;
  // Ranked as `latency --base --buggy --normalize`: the two runs differ in length, and a
  // server's threads that wait for work all along would otherwise rank as slower by as
  // much as the slowdown itself (docs/latency.md). The unscaled ranking is scored too.
  latency::RankOptions options;
  options.top = SIZE_MAX;
  options.normalize = true;
  const std::vector<latency::RankedPath> ranking =
      latency::diff_rank_paths(base->cct, slow->cct, options);
  r.score = score_pair(ranking, p.truth);
  options.normalize = false;
  r.unscaled = score_pair(latency::diff_rank_paths(base->cct, slow->cct, options), p.truth);
  r.shape = context_shape(slow_trace, slow->cct, p.program);
  if (!ranking.empty()) {
    r.hottest = ranking[0].frames[ranking[0].costliest].function;
    r.first_cost_ns = ranking[0].cost;
  }
  r.base_ns = base->end_ns - base->start_ns;
  r.slow_ns = slow->end_ns - slow->start_ns;
}

void remove_pair_work(const PairResult& r, const std::string& out_dir) {
  std::error_code ec;
  fs::remove_all(fs::path(out_dir) / (r.pair.name + ".work"), ec);
}

std::string score_cell(const std::optional<size_t>& v) {
  return v ? std::to_string(*v) : "—";
}

std::string render_latency_markdown(const std::vector<PairResult>& results) {
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
        r.shape.mean_length, score_cell(r.score.p_min), score_cell(r.score.f_min),
        score_cell(r.unscaled.p_min), r.pair.truth_binary, fmt::join(r.pair.truth, ", "), r.hottest,
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

json render_latency_json(const std::vector<PairResult>& results) {
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

}  // namespace cw::eval
