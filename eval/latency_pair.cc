#include "eval/latency_pair.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_set>

#include "eval/json_file.h"
#include "eval/scenario.h"

namespace cw::eval {

namespace fs = std::filesystem;
using nlohmann::json;

LatencyPair load_latency_pair(const std::string& dir) {
  const std::string file = (fs::path(dir) / "pair.json").string();
  const json j = read_json_file(file);
  JsonReader r(file);
  r.only(j, "", {"kind", "program", "description", "why", "truth", "truth_binary", "record"});
  LatencyPair p;
  p.dir = dir;
  p.name = fs::path(dir).filename().string();
  if (p.name.empty()) p.name = fs::path(dir).parent_path().filename().string();
  p.kind = r.text(j, "", "kind", true);
  if (p.kind != "internal" && p.kind != "external")
    r.fail("kind", fmt::format("'{}' is not internal or external", p.kind));
  p.program = r.text(j, "", "program", true);
  if (p.program.empty()) r.fail("program", "empty: name the process to analyse");
  p.description = r.text(j, "", "description", true);
  p.why = r.text(j, "", "why", true);
  p.truth = r.texts(j, "truth", true);
  if (p.truth.empty()) r.fail("truth", "empty: name the function a fix would touch");
  for (size_t i = 0; i < p.truth.size(); ++i)
    if (p.truth[i].empty()) r.fail(fmt::format("truth[{}]", i), "empty");
  p.truth_binary = r.text(j, "", "truth_binary", true);
  p.record = r.texts(j, "record", false);
  if (!fs::exists(fs::path(dir) / "run.sh"))
    r.fail("run.sh", fmt::format("{} has no run.sh to run the pair", dir));
  return p;
}

std::vector<std::string> latency_pair_dirs(const std::string& suite) {
  return folders_with(suite, "pair.json");
}

namespace {

bool names(const std::string& frame, const std::string& function) {
  if (frame.size() < function.size() || frame.compare(0, function.size(), function) != 0)
    return false;
  return frame.size() == function.size() || frame[function.size()] == ' ';
}

}  // namespace

PairScore score_pair(const std::vector<latency::RankedPath>& ranking,
                     const std::vector<std::string>& truth) {
  PairScore score;
  for (size_t rank = 0; rank < ranking.size(); ++rank) {
    const latency::RankedPath& path = ranking[rank];
    if (path.presence == latency::Presence::Vanished) continue;
    for (const latency::RankedFrame& f : path.frames) {
      const bool hit = std::any_of(truth.begin(), truth.end(),
                                   [&](const std::string& t) { return names(f.function, t); });
      if (!hit) continue;
      if (!score.f_min || f.distance < *score.f_min) {
        score.f_min = f.distance;
        score.function = f.function;
      }
    }
    if (score.f_min) {
      score.p_min = rank + 1;
      return score;
    }
  }
  return score;
}

ContextShape context_shape(const Trace& trace, const latency::Cct& cct, const std::string& comm) {
  ContextShape shape;
  std::unordered_set<Pid> pids;
  for (const ProcessInfo& p : trace.processes)
    if (trace.strings.get(p.comm) == comm) pids.insert(p.pid);
  for (const ThreadInfo& t : trace.threads)
    if (trace.strings.get(t.comm) == comm) pids.insert(t.pid);
  std::set<std::string> files;
  for (const MapRecord& m : trace.maps)
    if (pids.count(m.pid) && m.path != 0) files.insert(std::string(trace.strings.get(m.path)));
  shape.binaries = files.size();
  shape.contexts = cct.path_count();
  // The tree's functions less its root and the per-process "[COMM]" frames.
  std::set<uint32_t> process_frames;
  uint64_t frames = 0;
  for (size_t p = 0; p < cct.path_count(); ++p) {
    std::vector<latency::NodeId> nodes =
        cct.nodes_to(cct.path_end(static_cast<latency::PathId>(p)));
    if (!nodes.empty()) process_frames.insert(cct.node(nodes.front()).function);
    frames += nodes.empty() ? 0 : nodes.size() - 1;
  }
  shape.functions = cct.function_count() - 1 - process_frames.size();
  shape.mean_length =
      shape.contexts ? static_cast<double>(frames) / static_cast<double>(shape.contexts) : 0;
  return shape;
}

}  // namespace cw::eval
