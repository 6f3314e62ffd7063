#include "eval/suite_summary.h"

#include <fmt/format.h>

#include <algorithm>

namespace cw::eval {

using nlohmann::json;

bool better_than(const Outcome& with, const Outcome& without) {
  return with.match && (!without.match || without.columns.questions > with.columns.questions);
}

bool ScenarioResult::passed() const {
  if (!error.empty() || !with_rules || !with_rules->match) return false;
  if (scenario.needs_pack) return without_pack && !without_pack->match;
  if (!scenario.uses_pack.empty()) return without_pack && better_than(*with_rules, *without_pack);
  return true;
}

std::string without_pack_summary(const ScenarioResult& r) {
  if (!r.pack_dependent()) return "";
  if (!r.without_pack) return "not run";
  const Outcome& w = *r.without_pack;
  if (!w.match) return fmt::format("misses: {} {}", w.root_comm, w.root_kind);
  if (r.scenario.needs_pack) return "MATCHES ANYWAY (the rule is not needed)";
  if (r.with_rules && better_than(*r.with_rules, w))
    return fmt::format("matches after {} question{} ({} with it)", w.columns.questions,
                       w.columns.questions == 1 ? "" : "s", r.with_rules->columns.questions);
  return "AS GOOD WITHOUT IT (the pack is not shown to help)";
}

Summary summarize(const std::vector<ScenarioResult>& results) {
  Summary s;
  std::vector<uint32_t> questions;
  for (const ScenarioResult& r : results) {
    ++s.scenarios;
    if (r.passed()) ++s.passed;
    if (r.with_rules) questions.push_back(r.with_rules->columns.questions);
    if (r.pack_dependent()) {
      ++s.rule_dependent;
      if (r.without_pack && r.with_rules && better_than(*r.with_rules, *r.without_pack))
        ++s.failing_without_rule;
    }
  }
  if (!questions.empty()) {
    std::sort(questions.begin(), questions.end());
    size_t n = questions.size();
    s.median_questions = n % 2 ? questions[n / 2] : (questions[n / 2 - 1] + questions[n / 2]) / 2.0;
  }
  return s;
}

namespace {

std::string portion(uint64_t part, uint64_t whole) {
  if (whole == 0) return fmt::format("0 ({}/0)", part);
  return fmt::format("{:.3f} ({}/{})", static_cast<double>(part) / static_cast<double>(whole), part,
                     whole);
}

json outcome_json(const Outcome& o) {
  const Columns& c = o.columns;
  json queries = json::array();
  for (const engine::Query& q : o.queries)
    queries.push_back({{"kind", std::string(engine::question_kind_name(q.question.kind))},
                       {"question", q.question.text},
                       {"chosen", q.question.options[q.answer.option].label},
                       {"source", std::string(engine::answer_source_name(q.answer.source))}});
  return {{"match", o.match},
          {"mismatches", o.mismatches},
          {"hang", o.hang},
          {"root_cause", o.root_cause},
          {"path", o.path},
          {"notes", o.notes},
          {"queries", queries},
          {"columns",
           {{"connections", c.connections},
            {"filtered_out", c.filtered_out},
            {"through_connections_without_cuts", c.without_cuts},
            {"added_by_rules", c.added},
            {"data_flags", c.data_flags},
            {"questions", c.questions},
            {"baseline", c.baseline},
            {"interactive_slice", c.interactive},
            {"automatic_slice", c.automatic}}}};
}

}  // namespace

std::string render_markdown(const std::vector<ScenarioResult>& results) {
  std::string out =
      "| scenario | connections filtered out by splitting | connections added by rules | "
      "data flags | questions | baseline | interactive slice | automatic slice | interactive / "
      "automatic | root cause | without its rule |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n";
  for (const ScenarioResult& r : results) {
    if (!r.with_rules) {
      out += fmt::format("| {} | | | | | | | | | **error**: {} | |\n", r.scenario.name, r.error);
      continue;
    }
    const Outcome& o = *r.with_rules;
    const Columns& c = o.columns;
    std::string without = r.pack_dependent() ? without_pack_summary(r) : "—";
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} | {} {} {} | {} |\n",
                       r.scenario.name, portion(c.filtered_out, c.without_cuts),
                       portion(c.added, c.connections), c.data_flags, c.questions, c.baseline,
                       c.interactive, c.automatic,
                       c.automatic ? static_cast<double>(c.interactive) / c.automatic : 0.0,
                       o.match ? "**match**:" : "**MISMATCH**:", o.root_comm, o.root_kind, without);
  }
  Summary s = summarize(results);
  out += fmt::format(
      "\n{} of {} scenarios match their ground truth; median questions {} (target ≤ 3); {} of "
      "{} pack-dependent scenarios do worse without their pack.\n",
      s.passed, s.scenarios, s.median_questions, s.failing_without_rule, s.rule_dependent);
  for (const ScenarioResult& r : results) {
    if (r.passed()) continue;
    out += fmt::format("\n{}: ", r.scenario.name);
    if (!r.error.empty()) {
      out += r.error + "\n";
      continue;
    }
    out += "\n";
    if (r.with_rules)
      for (const std::string& m : r.with_rules->mismatches) out += "  - " + m + "\n";
    if (r.scenario.needs_pack && r.without_pack && r.without_pack->match)
      out += "  - without its pack the diagnosis matches too: the pack is not what finds it\n";
    if (!r.scenario.uses_pack.empty() && r.without_pack && r.with_rules && r.with_rules->match &&
        !better_than(*r.with_rules, *r.without_pack))
      out += fmt::format(
          "  - without {} the diagnosis is as good (it matches too, after {} question{}): the "
          "pack is not shown to help\n",
          r.scenario.uses_pack, r.without_pack->columns.questions,
          r.without_pack->columns.questions == 1 ? "" : "s");
  }
  return out;
}

json render_json(const std::vector<ScenarioResult>& results) {
  json list = json::array();
  for (const ScenarioResult& r : results) {
    json j = {
        {"name", r.scenario.name},
        {"title", r.scenario.title},
        {"case", r.scenario.case_name},
        {"trace", r.trace},
        {"needs_pack", r.scenario.needs_pack},
        {"uses_pack", r.scenario.uses_pack.empty() ? json(nullptr) : json(r.scenario.uses_pack)},
        {"passed", r.passed()},
        {"record_seconds", r.record_seconds},
        {"error", r.error.empty() ? json(nullptr) : json(r.error)}};
    j["with_rules"] = r.with_rules ? outcome_json(*r.with_rules) : json(nullptr);
    j["without_pack"] = r.without_pack ? outcome_json(*r.without_pack) : json(nullptr);
    if (!r.lost_switch_runs.empty()) {
      json runs = json::array();
      for (const ScenarioResult::LostSwitchRun& l : r.lost_switch_runs)
        runs.push_back(
            {{"ts", l.ts}, {"out", l.out}, {"in", l.in}, {"match", l.match}, {"result", l.result}});
      j["lost_switch_runs"] = std::move(runs);
    }
    list.push_back(std::move(j));
  }
  Summary s = summarize(results);
  return {{"scenarios", list},
          {"summary",
           {{"scenarios", s.scenarios},
            {"passed", s.passed},
            {"median_questions", s.median_questions},
            {"rule_dependent", s.rule_dependent},
            {"failing_without_rule", s.failing_without_rule}}}};
}

}  // namespace cw::eval
