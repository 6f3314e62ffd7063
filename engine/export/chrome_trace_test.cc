#include "engine/export/chrome_trace.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "engine/export/export_test_support.h"

namespace cw::engine {
namespace {

using nlohmann::json;
using testing::build;
using testing::Built;
using testing::diagnose_client;
using testing::kAskAndWait;
using testing::kTimelineRules;

std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

size_t count(const json& doc, const std::string& ph) {
  size_t n = 0;
  for (const json& e : doc["traceEvents"]) n += e["ph"] == ph;
  return n;
}

TEST_CASE("chrome: names per thread, a slice per segment, flows that keep the format's rules") {
  const Built b = build(kTimelineRules, kAskAndWait);
  const Graph& g = b.graph();
  const Diagnosis d = diagnose_client(b);
  const Timeline tl = build_timeline(b.trace, g, &d);
  const json doc = chrome_trace_json(tl);
  CHECK_MESSAGE(chrome_flow_problems(doc).empty(), lines(chrome_flow_problems(doc)));
  CHECK(count(doc, "M") == 2 + 3);
  CHECK(count(doc, "X") == g.segments.size());
  CHECK(count(doc, "s") == tl.flows.size());
  CHECK(count(doc, "f") == tl.flows.size());
  CHECK(count(doc, "i") == 1);
  size_t path = 0, root = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    path += e["args"]["causal_path"].get<bool>();
    root += e["args"]["root_cause"].get<bool>();
    CHECK((e["cat"].get<std::string>().find("root_cause") != std::string::npos) ==
          e["args"]["root_cause"].get<bool>());
  }
  CHECK(path == d.path.size());
  CHECK(root == 1);
}

TEST_CASE("chrome: each slice says its time as the report does, seconds since the trace began") {
  // kAskAndWait's first event is at 1 ms: a slice at `ts` µs is at (ts - 1000) / 1e6 s.
  const Built b = build(kTimelineRules, kAskAndWait);
  const json doc = chrome_trace_json(build_timeline(b.trace, b.graph(), nullptr));
  size_t slices = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    const double ts_us = e["ts"].get<double>();
    CHECK(e["args"]["at"] == fmt::format("{:.6f} s", (ts_us - 1000.0) / 1e6));
  }
  CHECK(slices > 2);
}

TEST_CASE("chrome: the checker finds broken flows") {
  const Built b = build(kTimelineRules, kAskAndWait);
  const Timeline tl = build_timeline(b.trace, b.graph(), nullptr);
  json doc = chrome_trace_json(tl);
  REQUIRE(chrome_flow_problems(doc).empty());
  json& events = doc["traceEvents"];
  auto first = [&](const char* ph) -> json& {
    for (json& e : events)
      if (e["ph"] == ph) return e;
    FAIL("no event " << ph);
    return events[0];
  };
  SUBCASE("an f without its binding point") {
    first("f").erase("bp");
  }
  SUBCASE("an s outside every slice of its thread") {
    first("s")["ts"] = 0.5;
  }
  SUBCASE("an f on another thread than its slice") {
    first("f")["tid"] = 999;
  }
  SUBCASE("an s whose f has another cat") {
    first("f")["cat"] = "other";
  }
  SUBCASE("an id used by two flows") {
    json copy = first("s");
    events.push_back(copy);
  }
  SUBCASE("an s with no f") {
    for (size_t i = 0; i < events.size(); ++i)
      if (events[i]["ph"] == "f") {
        events.erase(i);
        break;
      }
  }
  CHECK_FALSE(chrome_flow_problems(doc).empty());
}

}  // namespace
}  // namespace cw::engine
