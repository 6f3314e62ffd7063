// cw-export-check FILE: reads a `causeway export` file back and checks it, for the tests
// (tests/cli/export.t, tests/export/scenarios.sh). A Perfetto file (not starting with
// `{`) is parsed with the protobuf classes and checked as Perfetto needs it
// (engine/export/perfetto_check.h); a JSON file against the flow-event rules of the
// Chrome trace format (engine/export/chrome_trace.h). Prints what it read as one JSON
// object and each problem on stderr; exit 0 clean, 1 problems, 2 unreadable.
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/export/chrome_trace.h"
#include "engine/export/perfetto_check.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: cw-export-check FILE\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << argv[1] << ": cannot read\n";
    return 2;
  }
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  nlohmann::json out;
  std::vector<std::string> problems;
  if (!bytes.empty() && bytes[0] == '{') {
    nlohmann::json doc = nlohmann::json::parse(bytes, nullptr, false);
    if (doc.is_discarded()) {
      std::cerr << argv[1] << ": not JSON\n";
      return 1;
    }
    problems = cw::engine::chrome_flow_problems(doc);
    out = {{"format", "chrome"}, {"threads", 0}, {"slices", 0}, {"flows", 0}, {"markers", 0}};
    for (const auto& e : doc.value("traceEvents", nlohmann::json::array())) {
      const std::string ph = e.value("ph", "");
      const std::string key = ph == "X"                                           ? "slices"
                              : ph == "s"                                         ? "flows"
                              : ph == "i"                                         ? "markers"
                              : ph == "M" && e.value("name", "") == "thread_name" ? "threads"
                                                                                  : "";
      if (!key.empty()) out[key] = out.value(key, 0) + 1;
    }
  } else {
    const cw::engine::PerfettoReadBack r = cw::engine::read_back_perfetto(bytes);
    problems = r.problems;
    out = {{"format", "perfetto"},
           {"processes", r.process_tracks},
           {"threads", r.thread_tracks},
           {"slices", r.segment_slices},
           {"flows", r.flows},
           {"markers", r.markers},
           {"path_slices", r.path_slices},
           {"root_cause_slices", r.root_cause_slices},
           {"path_flows", r.path_flows},
           {"cpus", r.cpus},
           {"sched_switches", r.sched_switches},
           {"sched_wakings", r.sched_wakings}};
  }
  out["problems"] = problems.size();
  for (const auto& p : problems) std::cerr << argv[1] << ": " << p << "\n";
  std::cout << out.dump() << "\n";
  return problems.empty() ? 0 : 1;
}
