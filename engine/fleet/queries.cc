#include "engine/fleet/queries.h"

#include <fmt/format.h>

namespace cw::fleet {

const std::vector<NamedQuery>& named_queries() {
  static const std::vector<NamedQuery> kQueries = {
      {"signature", "the most frequent signatures: hangs, hosts, first and last seen",
       "SELECT signature, count(*) AS hangs, count(DISTINCT host) AS hosts, "
       "min(recorded_at) AS first_seen, max(recorded_at) AS last_seen, max(program) AS program, "
       "max(hang_wait) AS hang_wait, max(root_program) AS root_program, "
       "max(root_call) AS root_call FROM hangs GROUP BY signature "
       "ORDER BY hangs DESC, signature LIMIT {limit}"},
      {"version", "hangs by program version and signature",
       "SELECT program, exe, version, signature, count(*) AS hangs, "
       "count(DISTINCT host) AS hosts FROM hangs GROUP BY program, exe, version, signature "
       "ORDER BY hangs DESC, program, version, signature LIMIT {limit}"},
      {"host", "hangs by host",
       "SELECT host, count(*) AS hangs, count(DISTINCT signature) AS signatures, "
       "max(recorded_at) AS last_seen FROM hangs GROUP BY host "
       "ORDER BY hangs DESC, host LIMIT {limit}"},
      {"day", "hangs per day (UTC) and how many signatures they had",
       "SELECT recorded_at - recorded_at % 86400 AS day, count(*) AS hangs, "
       "count(DISTINCT signature) AS signatures FROM hangs GROUP BY day "
       "ORDER BY day LIMIT {limit}"},
  };
  return kQueries;
}

std::string top_query(std::string_view name, unsigned limit) {
  for (const NamedQuery& q : named_queries())
    if (q.name == name) return fmt::format(fmt::runtime(q.sql), fmt::arg("limit", limit));
  return {};
}

}  // namespace cw::fleet
