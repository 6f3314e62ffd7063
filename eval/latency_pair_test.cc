#include "eval/latency_pair.h"

#include <doctest/doctest.h>

#include "base/temp_dir.h"
#include "eval/scenario.h"

namespace cw::eval {
namespace {

using latency::Presence;
using latency::RankedFrame;
using latency::RankedPath;

// A context of `names`, outermost first, whose costliest frame is `costliest`.
RankedPath path(std::vector<std::string> names, size_t costliest,
                Presence presence = Presence::Both) {
  RankedPath p;
  p.costliest = costliest;
  p.presence = presence;
  for (size_t i = 0; i < names.size(); ++i) {
    RankedFrame f;
    f.function = names[i];
    f.distance = static_cast<uint32_t>(i > costliest ? i - costliest : costliest - i);
    p.frames.push_back(f);
  }
  return p;
}

TEST_CASE("p_min is the rank of the first context holding a truth function") {
  std::vector<RankedPath> ranking = {path({"[app]", "main", "parse"}, 2),
                                     path({"[app]", "main", "sort", "compare"}, 3),
                                     path({"[app]", "main", "sort"}, 2)};
  PairScore s = score_pair(ranking, {"sort"});
  REQUIRE(s.p_min);
  CHECK(*s.p_min == 2);
  // sort is one frame above compare, the second context's costliest.
  CHECK(*s.f_min == 1);
  CHECK(s.function == "sort");
}

TEST_CASE("f_min is 0 when the truth is the costliest frame; any truth function counts") {
  std::vector<RankedPath> ranking = {path({"[app]", "main", "deflate", "longest_match"}, 3)};
  PairScore s = score_pair(ranking, {"nothing_here", "longest_match"});
  CHECK(s.p_min == 1u);
  CHECK(s.f_min == 0u);
}

TEST_CASE("within the first context found, the nearest truth frame gives f_min") {
  std::vector<RankedPath> ranking = {path({"[app]", "a", "b", "c", "d"}, 4)};
  PairScore s = score_pair(ranking, {"b", "c"});
  CHECK(s.p_min == 1u);
  CHECK(s.f_min == 1u);
  CHECK(s.function == "c");
}

TEST_CASE("contexts only in the base run are not candidates") {
  std::vector<RankedPath> ranking = {path({"[app]", "main", "work"}, 2),
                                     path({"[app]", "main", "fix_me"}, 2, Presence::Vanished)};
  PairScore s = score_pair(ranking, {"fix_me"});
  CHECK_FALSE(s.p_min);
  CHECK_FALSE(s.f_min);
}

TEST_CASE("a frame names a function by its whole name, or followed by a space") {
  std::vector<RankedPath> ranking = {path({"[app]", "sort_items", "qsort"}, 2),
                                     path({"[app]", "sort (sort.c:12)"}, 1)};
  PairScore s = score_pair(ranking, {"sort"});
  CHECK(s.p_min == 2u);
  CHECK(s.function == "sort (sort.c:12)");
}

std::string pair_error(const std::string& json, bool with_run = true) {
  TempDir tmp("cw-pair-test");
  tmp.write("01-x/pair.json", json);
  if (with_run) tmp.write("01-x/run.sh", "#!/bin/sh\n");
  try {
    load_latency_pair(tmp.path("01-x"));
  } catch (const ScenarioError& e) {
    std::string what = e.what();
    return what.substr(what.find("pair.json"));
  }
  return "no error";
}

const char* kPair = R"({"kind": "internal", "program": "bzip2", "description": "d", "why": "w",
  "truth": ["BZ2_blockSort"], "truth_binary": "libbz2.so.1.0"})";

TEST_CASE("pair.json: a valid pair loads; errors name the key or the place") {
  TempDir tmp("cw-pair-test");
  tmp.write("01-bzip2/pair.json", kPair);
  tmp.write("01-bzip2/run.sh", "#!/bin/sh\n");
  LatencyPair p = load_latency_pair(tmp.path("01-bzip2"));
  CHECK(p.name == "01-bzip2");
  CHECK(p.program == "bzip2");
  CHECK(p.truth == std::vector<std::string>{"BZ2_blockSort"});
  CHECK(latency_pair_dirs(tmp.path()) == std::vector<std::string>{tmp.path("01-bzip2")});

  CHECK(pair_error(R"({"kind": "internal"})") == "pair.json: program: missing");
  CHECK(pair_error(R"({"kind": "sideways", "program": "x"})") ==
        "pair.json: kind: 'sideways' is not internal or external");
  CHECK(pair_error(R"({"kind": "internal", "program": "x", "description": "d", "why": "w",
    "truth": [], "truth_binary": "b"})") ==
        "pair.json: truth: empty: name the function a fix would touch");
  CHECK(pair_error(R"({"kind": "internal", "colour": 1})")
            .rfind("pair.json: colour: unknown key", 0) == 0);
  CHECK(pair_error("{\n  \"kind\": internal\n}").rfind("pair.json:2:11: not valid JSON", 0) == 0);
  CHECK(pair_error(kPair, false).find("has no run.sh") != std::string::npos);
}

}  // namespace
}  // namespace cw::eval
