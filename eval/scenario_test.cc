#include "eval/scenario.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "base/temp_dir.h"

namespace cw::eval {
namespace {

std::string write_scenario(TempDir& tmp, const std::string& name, const std::string& json) {
  tmp.write(name + "/scenario.json", json);
  return tmp.path(name);
}

const char* kValid = R"({
  "title": "t",
  "command": ["cw-scn-x", "5"],
  "hang": "cw-main",
  "answers": [{"kind": "edge", "choose": "cw-peer"}],
  "truth": {
    "hang": {"comm": "cw-main", "kind": "LongWait"},
    "root_cause": {"comm": "cw-peer", "kind": "LongRunning", "what": "^ran"},
    "path": ["cw-peer", "cw-main"],
    "edges": [{"from": "cw-peer", "to": "cw-main", "kind": "message"}],
    "not_edges": [{"from": "cw-other", "to": "cw-main"}]
  }
})";

std::string error_of(const std::string& json) {
  TempDir tmp("cw-eval-test");
  std::string dir = write_scenario(tmp, "01-x", json);
  try {
    load_scenario(dir);
  } catch (const ScenarioError& e) {
    std::string what = e.what();
    return what.substr(what.find("scenario.json"));  // the temp dir's name varies
  }
  return "no error";
}

TEST_CASE("a scenario.json is read into its parts") {
  TempDir tmp("cw-eval-test");
  Scenario s = load_scenario(write_scenario(tmp, "07-file", kValid));
  CHECK(s.name == "07-file");
  CHECK(s.command == std::vector<std::string>{"cw-scn-x", "5"});
  CHECK(s.hang == "cw-main");
  CHECK_FALSE(s.needs_pack);
  REQUIRE(s.answers.size() == 1);
  CHECK(s.answers[0].choose == "cw-peer");
  CHECK(s.root_truth.what == "^ran");
  CHECK(s.path_truth == std::vector<std::string>{"cw-peer", "cw-main"});
  REQUIRE(s.edges.size() == 1);
  CHECK(s.edges[0].kind == "message");
  REQUIRE(s.not_edges.size() == 1);
  CHECK(s.not_edges[0].kind.empty());
}

TEST_CASE("mistakes in a scenario.json name the key") {
  std::string unknown = kValid;
  unknown.replace(unknown.find("\"hang\": \"cw-main\""), 17, "\"hnag\": \"cw-main\"");
  CHECK(error_of(unknown) ==
        "scenario.json: hnag: unknown key (expected one of: title, case, story, command, record, "
        "pack, needs_pack, uses_pack, hang, answers, truth)");
  std::string kind = kValid;
  kind.replace(kind.find("LongRunning"), 11, "Busy");
  CHECK(error_of(kind) ==
        "scenario.json: truth.root_cause.kind: 'Busy' is not LongRunning, RepeatedYield or "
        "LongWait");
  std::string answer = kValid;
  answer.replace(answer.find("\"edge\""), 6, "\"edges\"");
  CHECK(error_of(answer) ==
        "scenario.json: answers[0].kind: 'edges' is not edge, baseline or recurse");
  CHECK(error_of(R"({"title": "t", "command": ["x"], "needs_pack": true, "truth": {}})") ==
        "scenario.json: needs_pack: true, but there is no `pack`");
  CHECK(error_of(R"({"title": "t", "command": ["x"], "uses_pack": "node..libuv"})") ==
        "scenario.json: uses_pack: 'node..libuv' is not a pack id (dotted names: node.libuv)");
  CHECK(error_of(R"({"title": "t", "command": ["x"], "uses_pack": "9lives"})") ==
        "scenario.json: uses_pack: '9lives' is not a pack id (dotted names: node.libuv)");
  CHECK(error_of(R"({"title": "t", "command": ["x"], "truth": {"hang": {"comm": "a"}}})") ==
        "scenario.json: truth.hang.kind: missing");
  CHECK(error_of(R"({"title": "t", "command": [], "truth": {}})") ==
        "scenario.json: command: empty: name the program to run");
  CHECK(error_of("{\"title\": \"t\",\n  \"command\": [1]}") ==
        "scenario.json: command[0]: expected a string");
  CHECK(error_of("{\"title\": \"t\"\n  \"command\"}") ==
        "scenario.json:2:11: not valid JSON: syntax error while parsing object - unexpected "
        "string literal; expected '}'");
}

TEST_CASE("the suite's folders are those with a scenario.json, by name") {
  TempDir tmp("cw-eval-test");
  write_scenario(tmp, "02-b", kValid);
  write_scenario(tmp, "01-a", kValid);
  std::filesystem::create_directories(tmp.file("03-no-json"));
  auto dirs = scenario_dirs(tmp.path());
  REQUIRE(dirs.size() == 2);
  CHECK(std::filesystem::path(dirs[0]).filename() == "01-a");
  CHECK(std::filesystem::path(dirs[1]).filename() == "02-b");
}

}  // namespace
}  // namespace cw::eval
