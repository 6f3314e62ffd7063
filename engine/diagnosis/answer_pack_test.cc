#include "engine/diagnosis/answer_pack.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "engine/graph/test_support.h"

namespace fs = std::filesystem;

namespace cw::engine {
namespace {

const char* const kRules =
    "link stream { from send to recv join from.object == to.object pick next }\n"
    "edge message { link stream strength strong kind message }\n"
    "split wait { at syscall_enter where name == \"read\" cut before }\n";

const char* const kTrace =
    "process 810 comm=cw-client\n"
    "thread 811 pid=810 comm=cw-client\n"
    "process 812 comm=cw-server\n"
    "thread 813 pid=812 comm=cw-server\n"
    "5 811 syscall_enter name=read fd=3\n"
    "7 811 syscall_enter name=read fd=3\n"
    "9 813 send object=7 offset=0 len=64\n"
    "11 811 recv object=7 offset=0 len=64\n";

uint32_t segment_at(const testing::Built& b, Tid tid, uint64_t ts) {
  const Graph& g = b.graph();
  for (uint32_t s = 0; s < g.segments.size(); ++s)
    if (g.segments[s].tid == tid && b.trace.events[g.segments[s].first].ts == ts) return s;
  FAIL("no such segment");
  return kNoIndex;
}

Option option(std::string label) {
  return Option{std::move(label), "", 0, kNoIndex, kNoIndex, false};
}
Option stop_option(std::string label) {
  Option o = option(std::move(label));
  o.stop = true;
  return o;
}

// Every kind of question, answered from every source.
Diagnosis diagnosis(const testing::Built& b) {
  const Graph& g = b.graph();
  REQUIRE(g.edges.size() == 2);  // the message and the neighbour edge of the cut at 7
  uint32_t message = g.kind_name(g.edges[0]) == "message" ? 0 : 1;
  Diagnosis d;
  d.hang.tid = 811;
  d.hang.pid = 810;
  d.hang.kind = HangKind::LongWait;
  d.hang.segment = segment_at(b, 811, 7);
  d.root_causes.push_back({segment_at(b, 813, 9), HangKind::LongRunning, "ran", 0, 1});

  Query edge;
  edge.question.kind = QuestionKind::Edge;
  edge.question.subject = segment_at(b, 811, 7);
  edge.question.text = "Which event caused\ncw-client 811's segment?";
  edge.question.options = {stop_option("stop here"), option("cw-server 813 send -> recv")};
  edge.question.options[1].edge = message;
  edge.answer = {1, AnswerSource::Auto, {}};
  d.queries.push_back(edge);

  Query by_rule = edge;
  by_rule.answer = {0, AnswerSource::Rule, "answers.old/q1"};
  d.queries.push_back(by_rule);

  Query baseline;
  baseline.question.kind = QuestionKind::Baseline;
  baseline.question.subject = segment_at(b, 811, 7);
  baseline.question.text = "Which segment is the normal run?";
  baseline.question.options = {option("cw-client 811 at 5 ns"), stop_option("none of these")};
  baseline.question.options[0].segment = segment_at(b, 811, 5);
  baseline.answer = {0, AnswerSource::Answers, {}};
  d.queries.push_back(baseline);

  Query no_baseline = baseline;
  no_baseline.answer = {1, AnswerSource::User, {}};
  d.queries.push_back(no_baseline);

  Query recurse;
  recurse.question.kind = QuestionKind::Recurse;
  recurse.question.subject = segment_at(b, 813, 9);
  recurse.question.text = "Diagnose cw-server 813 too?";
  recurse.question.options = {option("yes"), stop_option("no")};
  recurse.answer = {0, AnswerSource::User, {}};
  d.queries.push_back(recurse);

  Query no_recurse = recurse;
  no_recurse.answer = {1, AnswerSource::Auto, {}};
  d.queries.push_back(no_recurse);
  return d;
}

const char* const kExpected =
    R"(# Written by `causeway debug --save-answers`: the answers of one diagnosis as rules.
# Re-run the diagnosis with --rules on this folder: every question below is
# answered without asking. Edit a `choose` to answer differently.

pack answers.my_app {
  version "1.0.0"
  engine ">= 0.1"
  requires t
  description "Answers saved by causeway debug from ../traces/hang \"1\".trace"
}

# Which event caused cw-client 811's segment?
# chosen: cw-server 813 send -> recv (auto)
answer q1 {
  question edge
  subject process.comm == "cw-client" and thread.comm == "cw-client" and kind == "syscall_enter"
  choose from.process.comm == "cw-server" and from.thread.comm == "cw-server" and from.kind == "send" and to.process.comm == "cw-client" and to.thread.comm == "cw-client" and to.kind == "recv" and edge.kind == "message"
}

# Which segment is the normal run?
# chosen: cw-client 811 at 5 ns (answers)
answer q2 {
  question baseline
  subject tid == 811 and ts == 7
  choose tid == 811 and ts == 5
}

# Which segment is the normal run?
# chosen: none of these (user)
answer q3 {
  question baseline
  subject tid == 811 and ts == 7
  choose stop
}

# Diagnose cw-server 813 too?
# chosen: yes (user)
answer q4 {
  question recurse
  subject tid == 813 and ts == 9
  choose recurse
}

# Diagnose cw-server 813 too?
# chosen: no (auto)
answer q5 {
  question recurse
  subject tid == 813 and ts == 9
  choose stop
}

test "replays the saved diagnosis" {
  trace file "../traces/hang \"1\".trace"
  hang "811@0.000007"
  expect hang 811 kind LongWait
  expect root_cause 813 kind LongRunning
  expect questions == 0
}
)";

// Answers name places in the program (process, thread, event kind, frame), which a new
// recording shares, not tids and times, which it does not; two questions about one place
// answered differently keep this recording's events, as a place cannot tell them apart.
TEST_CASE("answer_pack_text: one answer rule per question not already a rule's, and a test") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = diagnosis(b);
  CHECK(saved_answer_count(d) == 5);
  std::string text =
      answer_pack_text(b.trace, b.graph(), d,
                       {"answers.my_app", "../traces/hang \"1\".trace", "811@0.000007", {"t"}});
  CHECK(text == kExpected);
}

TEST_CASE("the written pack loads: its answer rules and its test compile") {
  auto b = testing::build(kRules, kTrace);
  std::string text = answer_pack_text(b.trace, b.graph(), diagnosis(b),
                                      {"answers.my_app", "hang.trace", "811@0.000007", {"t"}});
  auto loaded = rules::load_sources(
      {make_source("t.cw", std::string("pack t { version \"0.1.0\" }\n") + kRules),
       make_source("pack.cw", text)});
  REQUIRE_MESSAGE(loaded.ok(), loaded.render());
  CHECK(loaded.diagnostics.empty());
  REQUIRE(loaded.rules.answers.size() == 5);
  using Q = rules::AnswerRule::Question;
  using C = rules::AnswerRule::Choice;
  CHECK(loaded.rules.answers[0].origin.id == "answers.my_app/q1");
  CHECK(loaded.rules.answers[0].question == Q::Edge);
  CHECK(loaded.rules.answers[0].choice == C::Option);
  CHECK(loaded.rules.answers[1].question == Q::Baseline);
  CHECK(loaded.rules.answers[2].choice == C::Stop);
  CHECK(loaded.rules.answers[3].question == Q::Recurse);
  CHECK(loaded.rules.answers[3].choice == C::Recurse);
  CHECK(loaded.rules.answers[4].choice == C::Stop);
  REQUIRE(loaded.rules.tests.size() == 1);
  const auto& test = loaded.rules.tests[0];
  CHECK(test.name == "replays the saved diagnosis");
  CHECK(test.trace_file.find("hang.trace") != std::string::npos);
  CHECK(test.hang == "811@0.000007");
  REQUIRE(test.expects.size() == 3);
  CHECK(test.expects[0].subject == rules::Expectation::Subject::Hang);
  CHECK(test.expects[0].from_tid == 811);
  CHECK(test.expects[0].kind == "LongWait");
  CHECK(test.expects[1].subject == rules::Expectation::Subject::RootCause);
  CHECK(test.expects[1].from_tid == 813);
  CHECK(test.expects[2].subject == rules::Expectation::Subject::Questions);
  CHECK(test.expects[2].value == 0);
}

TEST_CASE("an edge question answered with stop is `choose stop`") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = diagnosis(b);
  d.queries.resize(1);
  d.queries[0].answer = {0, AnswerSource::User, {}};
  d.root_causes.clear();
  std::string text = answer_pack_text(b.trace, b.graph(), d, {"answers.a", "t.trace", "auto"});
  CHECK(text.find("# chosen: stop here (user)\nanswer q1 {\n  question edge\n  subject "
                  "process.comm == \"cw-client\" and thread.comm == \"cw-client\" and kind == "
                  "\"syscall_enter\"\n  choose stop\n}\n") != std::string::npos);
  CHECK(text.find("  hang \"auto\"\n  expect hang 811 kind LongWait\n  expect questions == 0\n") !=
        std::string::npos);
}

TEST_CASE("answer_pack_id: the folder's name as an identifier") {
  CHECK(answer_pack_id("out/my-app") == "answers.my_app");
  CHECK(answer_pack_id("out/my-app/") == "answers.my_app");
  CHECK(answer_pack_id("/tmp/2024.hang") == "answers._2024_hang");
  CHECK(answer_pack_id("saved_1") == "answers.saved_1");
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/cw-answer-pack-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE(
    "save_answer_pack writes PACK/pack.cw, names the trace relative to it, rewrites its own") {
  auto b = testing::build(kRules, kTrace);
  Diagnosis d = diagnosis(b);
  TempDir tmp;
  fs::create_directories(tmp.path / "traces");
  const std::string trace = (tmp.path / "traces" / "t.trace").string();
  const std::string pack = (tmp.path / "packs" / "replay").string();

  std::string file = save_answer_pack(pack, trace, "auto", {"linux.kernel", "answers.replay"},
                                      b.trace, b.graph(), d);
  CHECK(file == pack + "/pack.cw");
  std::string text = read(file);
  CHECK(text.rfind(kAnswerPackMarker, 0) == 0);
  CHECK(text.find("pack answers.replay {\n  version \"1.0.0\"\n  engine \">= 0.1\"\n  requires "
                  "linux.kernel\n") != std::string::npos);
  CHECK(text.find("  trace file \"../../traces/t.trace\"\n  hang \"auto\"\n") != std::string::npos);

  d.queries.clear();
  save_answer_pack(pack, trace, "auto", {}, b.trace, b.graph(), d);
  CHECK(read(file).find("answer q1") == std::string::npos);

  // A pack elsewhere names the trace by its absolute path.
  const std::string other = (tmp.path / "other").string();
  std::string far =
      save_answer_pack(other, "/usr/share/t.trace", "auto", {}, b.trace, b.graph(), d);
  CHECK(read(far).find("  trace file \"/usr/share/t.trace\"\n") != std::string::npos);
}

TEST_CASE("save_answer_pack refuses to overwrite a pack it did not write") {
  auto b = testing::build(kRules, kTrace);
  TempDir tmp;
  const fs::path file = tmp.path / "pack.cw";
  std::ofstream(file) << "pack mine { version \"1\" }\n";
  CHECK_THROWS_WITH_AS(
      save_answer_pack(tmp.path.string(), "t.trace", "auto", {}, b.trace, b.graph(), diagnosis(b)),
      doctest::Contains("not written by causeway debug"), std::invalid_argument);
  CHECK(read(file) == "pack mine { version \"1\" }\n");
}

}  // namespace
}  // namespace cw::engine
