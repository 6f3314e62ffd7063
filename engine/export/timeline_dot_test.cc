#include "engine/export/timeline_dot.h"

#include <doctest/doctest.h>

#include <sstream>

#include "engine/export/export_test_support.h"

namespace cw::engine {
namespace {

using testing::build;
using testing::Built;
using testing::diagnose_client;
using testing::kAskAndWait;
using testing::kTimelineRules;

TEST_CASE("dot: the neighbourhood with the path bold and the root cause filled") {
  const Built b = build(kTimelineRules, kAskAndWait);
  const Diagnosis d = diagnose_client(b);
  const Timeline tl = build_timeline(b.trace, b.graph(), &d, neighbourhood(b.graph(), d));
  std::ostringstream out;
  write_timeline_dot(out, tl, 0);
  const std::string dot = out.str();
  CHECK(dot.find("cw-idle") == std::string::npos);
  CHECK(dot.find("label=\"cw-client 100 (process cw-client 100)\"") != std::string::npos);
  CHECK(dot.find("root cause\\nin compute\\n0.001000 s, 810.0 ms\", style=\"filled,bold\"") !=
        std::string::npos);
  CHECK(dot.find("hang\\nblocked in read\\n0.010000 s") != std::string::npos);
  CHECK(dot.find("[label=\"message (strong)\", style=solid, color=\"#c00000\", penwidth=3]") !=
        std::string::npos);
  size_t nodes = 0;
  for (size_t at = dot.find("[label="); at != std::string::npos; at = dot.find("[label=", at + 1))
    ++nodes;
  CHECK(nodes == tl.slices.size() + tl.flows.size());
}

}  // namespace
}  // namespace cw::engine
