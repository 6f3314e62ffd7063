#include "eval/evaluate.h"

#include <doctest/doctest.h>

#include "base/source.h"
#include "eval/suite_summary.h"
#include "rules/loader.h"
#include "trace/text_format.h"

namespace cw::eval {
namespace {

// examples/slow-server.trace under stdlib-rules: cw-client waits 800 ms for cw-server's
// worker, which computes (docs/json.md shows its diagnosis).
struct Fixture {
  Trace trace =
      parse_text_trace(read_source(std::string(CW_SOURCE_DIR) + "/examples/slow-server.trace"));
  rules::LoadResult loaded = rules::load_packs({std::string(CW_SOURCE_DIR) + "/stdlib-rules"});
};

Scenario slow_server() {
  Scenario s;
  s.name = "slow-server";
  s.hang_truth = {"cw-client", "LongWait"};
  s.root_truth = {"cw-srv-worker", "LongRunning", "^ran 799\\.[0-9] ms on a CPU", ""};
  s.path_truth = {"cw-srv-worker", "cw-client"};
  s.edges = {{"cw-srv-worker", "cw-client", "message"}};
  return s;
}

TEST_CASE("a diagnosis that agrees with the truth matches, and its columns are measured") {
  Fixture f;
  REQUIRE(f.loaded.ok());
  Outcome o = evaluate(slow_server(), f.trace, f.loaded.rules, "");
  CHECK(o.mismatches.empty());
  CHECK(o.match);
  CHECK(o.root_comm == "cw-srv-worker");
  CHECK(o.path == std::vector<std::string>{"cw-srv-worker", "cw-client"});
  CHECK(o.columns.questions == 1);  // whether to diagnose the worker too
  CHECK(o.columns.interactive == 2);
  CHECK(o.columns.automatic >= 2);
  CHECK(o.columns.connections > 0);
  CHECK(o.columns.filtered_out <= o.columns.without_cuts);
  CHECK(o.report.starts_with("root cause: process cw-server"));
}

TEST_CASE("each part of the truth that differs is a mismatch, said in a line") {
  Fixture f;
  Scenario s = slow_server();
  s.hang_truth.kind = "LongRunning";
  s.root_truth.comm = "cw-client";
  s.root_truth.what = "^blocked";
  s.root_truth.stack = "compute";
  s.path_truth = {"cw-client", "cw-srv-worker"};
  s.edges = {{"cw-client", "cw-srv-worker", "flag"}};
  s.not_edges = {{"cw-srv-worker", "cw-client", ""}};
  Outcome o = evaluate(s, f.trace, f.loaded.rules, "");
  CHECK_FALSE(o.match);
  REQUIRE(o.mismatches.size() == 7);
  CHECK(o.mismatches[0] == "hang: cw-client LongWait, expected cw-client LongRunning");
  CHECK(o.mismatches[1] == "root cause: cw-srv-worker LongRunning, expected cw-client LongRunning");
  CHECK(o.mismatches[2].starts_with("root cause: 'ran 799.9 ms on a CPU"));
  CHECK(o.mismatches[3] == "root cause: stack [recvfrom <- serve <- main] has no compute");
  CHECK(o.mismatches[4] ==
        "path: [cw-srv-worker, cw-client] does not pass through [cw-client, cw-srv-worker] in "
        "that order");
  CHECK(o.mismatches[5] == "edges: no edge cw-client -> cw-srv-worker (flag)");
  CHECK(o.mismatches[6] == "not_edges: the graph has the edge cw-srv-worker -> cw-client");
}

TEST_CASE("scripted answers pick the option whose label holds their text, once each") {
  engine::Question q;
  q.kind = engine::QuestionKind::Recurse;
  q.options.resize(2);
  q.options[0].label = "diagnose cw-a 1";
  q.options[1].label = "stop: it is the root cause";
  q.options[1].stop = true;
  ScriptedAnswerer user({{"edge", "cw-a"}, {"recurse", "stop"}, {"recurse", "diagnose cw-a"}});
  engine::Answer a = user.ask(q);
  CHECK(a.option == 1);
  CHECK(a.source == engine::AnswerSource::Answers);
  CHECK(user.ask(q).option == 0);                           // the next recurse answer
  CHECK(user.ask(q).source == engine::AnswerSource::Auto);  // none left: best-scored
  q.options[0].label = "diagnose cw-b 2";
  ScriptedAnswerer none(std::vector<ScriptedAnswer>{{"recurse", "cw-zzz"}});
  CHECK(none.ask(q).source == engine::AnswerSource::Auto);  // no option holds the text
}

TEST_CASE("the summary: passed, median questions, rule-dependent scenarios") {
  auto result = [](uint32_t questions, bool match, bool needs_pack, bool match_without) {
    ScenarioResult r;
    r.scenario.needs_pack = needs_pack;
    r.with_rules = Outcome{};
    r.with_rules->match = match;
    r.with_rules->columns.questions = questions;
    if (needs_pack) {
      r.without_pack = Outcome{};
      r.without_pack->match = match_without;
    }
    return r;
  };
  std::vector<ScenarioResult> rs = {result(0, true, false, false), result(4, true, true, false),
                                    result(1, false, false, false), result(2, true, true, true)};
  CHECK(rs[1].passed());
  CHECK_FALSE(rs[2].passed());
  CHECK_FALSE(rs[3].passed());  // matched without its pack: the pack is not what finds it
  Summary s = summarize(rs);
  CHECK(s.passed == 2);
  CHECK(s.median_questions == 1.5);
  CHECK(s.rule_dependent == 2);
  CHECK(s.failing_without_rule == 1);
  // uses_pack: better without the pack's help is a miss, or the same truth after more
  // questions; as good is not a pass.
  auto uses = [](uint32_t with_q, bool match_without, uint32_t without_q) {
    ScenarioResult r;
    r.scenario.uses_pack = "node.libuv";
    r.with_rules = Outcome{};
    r.with_rules->match = true;
    r.with_rules->columns.questions = with_q;
    r.without_pack = Outcome{};
    r.without_pack->match = match_without;
    r.without_pack->columns.questions = without_q;
    return r;
  };
  CHECK(uses(0, false, 0).passed());
  CHECK(uses(0, true, 1).passed());
  CHECK_FALSE(uses(1, true, 1).passed());
  CHECK_FALSE(uses(2, true, 1).passed());
  CHECK(without_pack_summary(uses(0, true, 2)) == "matches after 2 questions (0 with it)");
  CHECK(without_pack_summary(uses(1, true, 1)) ==
        "AS GOOD WITHOUT IT (the pack is not shown to help)");
  ScenarioResult not_run = uses(0, false, 0);
  not_run.without_pack.reset();
  CHECK_FALSE(not_run.passed());
  rs.push_back(uses(0, true, 1));
  rs.push_back(uses(1, true, 1));
  Summary u = summarize(rs);
  CHECK(u.rule_dependent == 4);
  CHECK(u.failing_without_rule == 2);
  ScenarioResult error;
  error.error = "causeway record failed (exit 2)";
  CHECK_FALSE(error.passed());
}

}  // namespace
}  // namespace cw::eval
