#include "eval/scenario_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <vector>

#include "engine/diagnosis/diagnose.h"
#include "engine/session/pack_paths.h"
#include "engine/session/pack_selection.h"
#include "engine/session/session_error.h"
#include "engine/session/trace_load.h"
#include "eval/command_run.h"
#include "eval/evaluate.h"
#include "eval/lost_switch.h"

namespace cw::eval {

namespace {

namespace fs = std::filesystem;

// How long one scenario's recording may take before it is stopped.
constexpr auto kRecordTimeout = std::chrono::seconds(120);

// `causeway record -o TRACE [--rules PACK] RECORD... -- COMMAND`, its stderr in LOG.
// Returns "" or why it failed.
std::string record(const Scenario& s, const ScenarioRun& run, const std::string& trace,
                   const std::string& log) {
  const std::string& programs = run.programs;
  std::vector<std::string> options;
  if (!s.pack.empty()) options.insert(options.end(), {"--rules", s.pack});
  options.insert(options.end(), s.record.begin(), s.record.end());
  options.insert(options.end(), run.record_options.begin(), run.record_options.end());
  std::vector<std::string> command = s.command;
  if (command[0].find('/') == std::string::npos && fs::exists(fs::path(programs) / command[0]))
    command[0] = (fs::path(programs) / command[0]).string();
  return record_command(options, command, trace, log, {}, programs, kRecordTimeout);
}

// The id of the pack loaded from `path` (a file or a folder), "" if none.
std::string pack_id_of(const rules::RuleSet& rules, const std::string& path) {
  std::error_code ec;
  const fs::path want = fs::weakly_canonical(path, ec);
  for (const rules::PackInfo& p : rules.packs)
    for (const std::string& f : p.files) {
      fs::path have = fs::weakly_canonical(f, ec);
      if (have == want || have.parent_path() == want) return p.id;
    }
  return {};
}

// The packs of `rules` that require `id`, directly or through others, and `id` itself.
std::vector<std::string> requiring(const rules::RuleSet& rules, const std::string& id) {
  std::vector<std::string> out = {id};
  for (bool grew = true; grew;) {
    grew = false;
    for (const rules::PackInfo& p : rules.packs) {
      if (std::find(out.begin(), out.end(), p.id) != out.end()) continue;
      for (const std::string& need : p.requires_)
        if (std::find(out.begin(), out.end(), need) != out.end()) {
          out.push_back(p.id);
          grew = true;
          break;
        }
    }
  }
  return out;
}

// Diagnoses one recording under the packs found (those that apply to it, as `debug`
// chooses them) and `packs`; with `leave_out`, without that pack and the packs that need
// it. The error goes into `r.error`.
std::optional<Outcome> diagnose(const Scenario& s, const Trace& trace,
                                const std::vector<std::string>& packs, ScenarioResult& r,
                                const std::string& leave_out = "") {
  auto loaded = session::load_rule_packs(packs, false);
  if (!loaded.ok()) {
    r.error = "rules: " + loaded.render();
    return std::nullopt;
  }
  session::keep_applying(loaded, trace, packs);
  if (!s.uses_pack.empty()) {
    const bool applied = std::any_of(loaded.rules.packs.begin(), loaded.rules.packs.end(),
                                     [&](const rules::PackInfo& p) { return p.id == s.uses_pack; });
    if (!applied) {
      r.error = fmt::format(
          "pack {} does not apply to this recording (`causeway rules list {}` "
          "says why)",
          s.uses_pack, r.trace);
      return std::nullopt;
    }
  }
  if (!leave_out.empty()) {
    const std::vector<std::string> gone = requiring(loaded.rules, leave_out);
    std::vector<std::string> keep;
    for (const rules::PackInfo& p : loaded.rules.packs)
      if (std::find(gone.begin(), gone.end(), p.id) == gone.end()) keep.push_back(p.id);
    loaded.rules = rules::select_packs(loaded.rules, keep);
  }
  try {
    std::string added_by = s.pack.empty() ? "" : pack_id_of(loaded.rules, s.pack);
    if (!s.uses_pack.empty() && leave_out.empty()) added_by = s.uses_pack;
    return evaluate(s, trace, loaded.rules, added_by);
  } catch (const engine::DiagnoseError& e) {
    r.error = std::string("no hang: ") + e.what();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return std::nullopt;
}

// The packs a scenario is diagnosed with besides those that apply: its own.
std::vector<std::string> with_packs(const Scenario& s) {
  std::vector<std::string> with;
  if (!s.pack.empty()) with.push_back(s.pack);
  return with;
}

}  // namespace

ScenarioResult run_scenario(const Scenario& s, const ScenarioRun& run,
                            session::Reporter& reporter) {
  ScenarioResult r;
  r.scenario = s;
  r.trace = (fs::path(run.out_dir) / (s.name + ".cwt")).string();
  const std::string log = (fs::path(run.out_dir) / (s.name + ".record.log")).string();
  if (run.record) {
    auto t0 = std::chrono::steady_clock::now();
    r.error = record(s, run, r.trace, log);
    r.record_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  Trace trace;
  // Taken, not shown: a note on frames left unnamed names every process of the machine (a
  // JIT's /memfd: region in an unrelated one), not this scenario.
  SymbolizeReport symbols;
  if (r.error.empty()) {
    try {
      session::read_trace(r.trace, trace, reporter, &symbols);
    } catch (const session::SessionError& e) {
      reporter.message(e.what());
      r.error = "cannot read the recording " + r.trace;
    }
  }
  if (r.error.empty()) r.error = command_failure(trace, log, "the scenario's");
  if (r.error.empty()) {
    const std::vector<std::string> with = with_packs(s);
    r.with_rules = diagnose(s, trace, with, r);
    if (r.error.empty() && s.needs_pack) r.without_pack = diagnose(s, trace, {}, r);
    if (r.error.empty() && !s.uses_pack.empty())
      r.without_pack = diagnose(s, trace, with, r, s.uses_pack);
  }
  if (r.error.empty() && run.lose_switches > 0) {
    // The switches of the program's threads (not the kernel's), evenly spread over them:
    // the same ones every run.
    std::vector<Tid> threads;
    for (const ThreadInfo& t : trace.threads)
      if (!t.kernel) threads.push_back(t.tid);
    const std::vector<SwitchRecord> records = switch_records(trace, threads);
    const KindId switch_out = trace.schema.find("switch_out");
    const size_t n = std::min<size_t>(run.lose_switches, records.size());
    for (size_t k = 0; k < n; ++k) {
      const SwitchRecord& lost = records[(2 * k + 1) * records.size() / (2 * n)];
      ScenarioResult::LostSwitchRun one;
      one.ts = trace.events[lost.front()].ts;
      for (uint32_t i : lost)
        (trace.events[i].kind == switch_out ? one.out : one.in) = trace.events[i].tid;
      const Trace changed = lose_switch(trace, lost);
      ScenarioResult scratch = r;
      const std::optional<Outcome> o = diagnose(s, changed, with_packs(s), scratch);
      one.match = o && o->match;
      one.result = o ? o->root_cause : scratch.error;
      r.lost_switch_runs.push_back(std::move(one));
    }
  }
  return r;
}

}  // namespace cw::eval
