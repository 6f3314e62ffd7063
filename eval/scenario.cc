#include "eval/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "dsl/parser.h"
#include "eval/json_file.h"

namespace cw::eval {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The edges listed under truth.KEY.
std::vector<EdgeTruth> edges(const JsonReader& r, const json& truth, const char* key) {
  std::vector<EdgeTruth> out;
  auto it = truth.find(key);
  if (it == truth.end()) return out;
  std::string at = std::string("truth.") + key;
  if (!it->is_array()) r.fail(at, "expected an array of edges");
  for (size_t i = 0; i < it->size(); ++i) {
    std::string w = fmt::format("{}[{}]", at, i);
    r.only((*it)[i], w, {"from", "to", "kind"});
    out.push_back({r.text((*it)[i], w, "from", true), r.text((*it)[i], w, "to", true),
                   r.text((*it)[i], w, "kind", false)});
  }
  return out;
}

const std::set<std::string> kKinds = {"LongRunning", "RepeatedYield", "LongWait"};
const std::set<std::string> kQuestions = {"edge", "baseline", "recurse"};

}  // namespace

Scenario load_scenario(const std::string& dir) {
  const std::string file = (fs::path(dir) / "scenario.json").string();
  const json j = read_json_file(file);
  JsonReader r(file);
  r.only(j, "",
         {"title", "case", "story", "command", "record", "pack", "needs_pack", "uses_pack", "hang",
          "answers", "truth"});
  Scenario s;
  s.dir = dir;
  s.name = fs::path(dir).filename().string();
  if (s.name.empty()) s.name = fs::path(dir).parent_path().filename().string();
  s.title = r.text(j, "", "title", true);
  s.case_name = r.text(j, "", "case", false);
  s.story = r.text(j, "", "story", false);
  s.command = r.texts(j, "command", true);
  if (s.command.empty()) r.fail("command", "empty: name the program to run");
  s.record = r.texts(j, "record", false);
  s.pack = r.text(j, "", "pack", false);
  if (!s.pack.empty()) {
    s.pack = (fs::path(dir) / s.pack).string();
    if (!fs::exists(s.pack)) r.fail("pack", fmt::format("'{}' does not exist", s.pack));
  }
  if (auto it = j.find("needs_pack"); it != j.end()) {
    if (!it->is_boolean()) r.fail("needs_pack", "expected true or false");
    s.needs_pack = it->get<bool>();
  }
  if (s.needs_pack && s.pack.empty()) r.fail("needs_pack", "true, but there is no `pack`");
  s.uses_pack = r.text(j, "", "uses_pack", false);
  if (!s.uses_pack.empty()) {
    if (!dsl::is_pack_id(s.uses_pack))
      r.fail("uses_pack",
             fmt::format("'{}' is not a pack id (dotted names: node.libuv)", s.uses_pack));
    if (s.needs_pack) r.fail("uses_pack", "give `uses_pack` or `needs_pack`, not both");
  }
  if (std::string h = r.text(j, "", "hang", false); !h.empty()) s.hang = h;
  if (auto it = j.find("answers"); it != j.end()) {
    if (!it->is_array()) r.fail("answers", "expected an array");
    for (size_t i = 0; i < it->size(); ++i) {
      std::string w = fmt::format("answers[{}]", i);
      r.only((*it)[i], w, {"kind", "choose"});
      ScriptedAnswer a{r.text((*it)[i], w, "kind", true), r.text((*it)[i], w, "choose", true)};
      if (!kQuestions.count(a.kind))
        r.fail(w + ".kind", fmt::format("'{}' is not edge, baseline or recurse", a.kind));
      s.answers.push_back(std::move(a));
    }
  }
  auto truth = j.find("truth");
  if (truth == j.end()) r.fail("truth", "missing");
  r.only(*truth, "truth", {"hang", "root_cause", "path", "edges", "not_edges"});
  auto hang = truth->find("hang");
  if (hang == truth->end()) r.fail("truth.hang", "missing");
  r.only(*hang, "truth.hang", {"comm", "kind"});
  s.hang_truth.comm = r.text(*hang, "truth.hang", "comm", true);
  s.hang_truth.kind = r.text(*hang, "truth.hang", "kind", true);
  auto root = truth->find("root_cause");
  if (root == truth->end()) r.fail("truth.root_cause", "missing");
  r.only(*root, "truth.root_cause", {"comm", "kind", "what", "stack"});
  s.root_truth.comm = r.text(*root, "truth.root_cause", "comm", true);
  s.root_truth.kind = r.text(*root, "truth.root_cause", "kind", true);
  s.root_truth.what = r.text(*root, "truth.root_cause", "what", false);
  s.root_truth.stack = r.text(*root, "truth.root_cause", "stack", false);
  for (const auto* kind : {&s.hang_truth.kind, &s.root_truth.kind})
    if (!kKinds.count(*kind))
      r.fail(kind == &s.hang_truth.kind ? "truth.hang.kind" : "truth.root_cause.kind",
             fmt::format("'{}' is not LongRunning, RepeatedYield or LongWait", *kind));
  if (truth->contains("path")) {
    const json& p = (*truth)["path"];
    if (!p.is_array()) r.fail("truth.path", "expected an array of comms");
    for (size_t i = 0; i < p.size(); ++i) {
      if (!p[i].is_string()) r.fail(fmt::format("truth.path[{}]", i), "expected a string");
      s.path_truth.push_back(p[i].get<std::string>());
    }
  }
  s.edges = edges(r, *truth, "edges");
  s.not_edges = edges(r, *truth, "not_edges");
  return s;
}

std::vector<std::string> scenario_dirs(const std::string& suite) {
  return folders_with(suite, "scenario.json");
}

}  // namespace cw::eval
