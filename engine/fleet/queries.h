// The questions a fleet's store is asked most, as SQL that SQLite and ClickHouse both
// read the same way (integers and text only: the two print fractions differently).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cw::fleet {

struct NamedQuery {
  std::string_view name;  // `fleet top --by NAME`
  std::string_view doc;
  std::string_view sql;  // with {limit}
};

// signature (the most frequent signatures), version (by program version), host, day.
const std::vector<NamedQuery>& named_queries();
// The query named `name` with its limit filled in, or "" when there is none so named.
std::string top_query(std::string_view name, unsigned limit);

}  // namespace cw::fleet
