// A batch on worker processes gives what one process gives, trace by trace, and a trace
// that cannot be read is that trace's error, not the batch's.
#include "engine/fleet/batch.h"

#include <doctest/doctest.h>

#include <map>
#include <string>

namespace cw::fleet {
namespace {

std::vector<std::string> some_traces() {
  const std::string dir = std::string(CW_SOURCE_DIR) + "/tests/real/traces/";
  return {dir + "07-flock-wait.cwt", dir + "/no-such-trace.cwt", dir + "23-flock-exit.cwt",
          dir + "05-shell-pipe.cwt", dir + "16-redis-blpop.cwt"};
}

std::map<size_t, std::string> run(unsigned workers) {
  BatchConfig config;
  config.cache = false;
  config.no_stdlib = true;
  config.packs = {std::string(CW_SOURCE_DIR) + "/stdlib-rules"};
  config.workers = workers;
  config.host = "h";
  std::map<size_t, std::string> out;
  diagnose_batch(some_traces(), config, [&](TraceOutcome o) {
    std::string text = o.error.empty() ? "" : "error: " + o.error;
    for (HangRow& r : o.rows) {
      r.diagnosed_at = 0;
      text += row_json(r).dump();
    }
    if (!o.no_hang.empty()) text += "no hang: " + o.no_hang;
    CHECK(out.emplace(o.index, text).second);
  });
  return out;
}

TEST_CASE("a batch on two workers gives each trace what one process gives it") {
  const auto one = run(1);
  const auto two = run(2);
  REQUIRE(one.size() == some_traces().size());
  CHECK(one == two);
  CHECK(one.at(1).starts_with("error: "));
  CHECK(one.at(1).find("no-such-trace.cwt") != std::string::npos);
  for (size_t i : {0, 2, 3, 4})
    CHECK_MESSAGE(one.at(i).find("\"signature\"") != std::string::npos, one.at(i));
}

}  // namespace
}  // namespace cw::fleet
