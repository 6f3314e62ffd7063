// The ClickHouse store: rows sent to a server's HTTP interface as JSONEachRow, queries
// asked there and read back as TabSeparatedWithNames. Each host sends rows, never traces
// (docs/fleet.md, "Deploying").
#include <fmt/format.h>
#include <httplib.h>

#include "engine/fleet/store.h"

namespace cw::fleet {

std::string clickhouse_schema() {
  std::string cols;
  for (const Column& c : columns())
    cols += fmt::format("{}  {} {}", cols.empty() ? "" : ",\n", c.name, c.clickhouse_type);
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS hangs (\n{}\n) ENGINE = MergeTree() ORDER BY (signature, host, "
      "recorded_at)",
      cols);
}

namespace {

// TabSeparated's escapes undone (\t, \n, \\ and the rest ClickHouse writes).
std::string unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out += field[i];
      continue;
    }
    switch (char c = field[++i]) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case '0': out += '\0'; break;
      default: out += c; break;
    }
  }
  return out;
}

std::vector<std::string> split_tabs(std::string_view line) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t tab; (tab = line.find('\t', at)) != std::string_view::npos; at = tab + 1)
    out.push_back(unescape(line.substr(at, tab - at)));
  out.push_back(unescape(line.substr(at)));
  return out;
}

class ClickHouseStore final : public Store {
 public:
  ClickHouseStore(std::string host, int port, std::string database, bool write, StoreLimits limits)
      : host_(std::move(host)),
        port_(port),
        database_(std::move(database)),
        limits_(limits),
        client_(host_, port_) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(limits_.query_time);
    client_.set_connection_timeout(10, 0);
    client_.set_read_timeout(static_cast<time_t>(seconds.count()) + 5, 0);
    client_.set_write_timeout(60, 0);
    if (write) post(clickhouse_schema(), {});
    check_columns();
  }

  std::string name() const override {
    return fmt::format("clickhouse://{}:{}/{}", host_, port_, database_);
  }

  void add(const std::vector<HangRow>& rows) override {
    if (rows.empty()) return;
    std::string body;
    for (const HangRow& r : rows) body += row_json(r).dump() + "\n";
    post("INSERT INTO hangs FORMAT JSONEachRow", body);
  }

  QueryResult query(const std::string& sql) override {
    std::string text = post(sql, {}, "TabSeparatedWithNames");
    QueryResult out;
    size_t at = 0;
    bool header = true;
    while (at < text.size()) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      std::vector<std::string> fields = split_tabs(std::string_view(text).substr(at, nl - at));
      if (header)
        out.columns = std::move(fields);
      else
        out.rows.push_back(std::move(fields));
      header = false;
      at = nl + 1;
    }
    return out;
  }

 private:
  // One statement: `sql` in the URL (with `format` when given), `body` the data. Returns
  // the reply; throws StoreError with the server's own message.
  std::string post(const std::string& sql, const std::string& body,
                   const std::string& format = {}) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(limits_.query_time);
    httplib::Params params{{"database", database_},
                           {"max_execution_time", std::to_string(seconds.count())},
                           // An error after the first megabyte of a reply would otherwise be
                           // appended to rows already sent with status 200.
                           {"wait_end_of_query", "1"}};
    std::string statement = sql;
    if (!format.empty()) statement += "\nFORMAT " + format;
    std::string target;
    if (body.empty()) {
      target = httplib::append_query_params("/", params);
      auto res = client_.Post(target.c_str(), statement, "text/plain");
      return reply(res, sql);
    }
    params.emplace("query", statement);
    target = httplib::append_query_params("/", params);
    auto res = client_.Post(target.c_str(), body, "application/x-ndjson");
    return reply(res, sql);
  }

  std::string reply(const httplib::Result& res, const std::string& sql) {
    if (!res)
      throw StoreError(
          fmt::format("{}: cannot reach the server: {}", name(), httplib::to_string(res.error())),
          true);
    if (res->status != 200) {
      std::string why = res->body;
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      // A statement the server rejected is the input's fault; anything else (no such
      // database, a full disk) the environment's.
      const bool bad_query = res->status == 400 || why.find("Syntax error") != std::string::npos ||
                             why.find("Unknown identifier") != std::string::npos;
      throw StoreError(fmt::format("{}: the server answered {} to `{}`: {}", name(), res->status,
                                   sql.substr(0, 200), why),
                       !bad_query);
    }
    return res->body;
  }

  void check_columns() {
    QueryResult d = query("DESCRIBE TABLE hangs");
    std::vector<std::string> have, want;
    for (const auto& r : d.rows) have.push_back(r.empty() ? "" : r[0]);
    for (const Column& c : columns()) want.emplace_back(c.name);
    if (have != want)
      throw StoreError(fmt::format("{}: table 'hangs' has other columns: not a causeway fleet "
                                   "store of this version (docs/fleet.md, \"The schema\")",
                                   name()),
                       false);
  }

  std::string host_;
  int port_;
  std::string database_;
  StoreLimits limits_;
  httplib::Client client_;
};

}  // namespace

std::unique_ptr<Store> open_clickhouse(const std::string& host, int port,
                                       const std::string& database, bool write,
                                       StoreLimits limits) {
  return std::make_unique<ClickHouseStore>(host, port, database, write, limits);
}

std::unique_ptr<Store> open_store(const std::string& spec, bool write, StoreLimits limits) {
  constexpr std::string_view kScheme = "clickhouse://";
  if (!spec.starts_with(kScheme)) return open_sqlite(spec, write, limits);
  std::string rest = spec.substr(kScheme.size());
  std::string database = "default";
  if (size_t slash = rest.find('/'); slash != std::string::npos) {
    if (slash + 1 < rest.size()) database = rest.substr(slash + 1);
    rest.resize(slash);
  }
  size_t colon = rest.rfind(':');
  int port = 8123;
  std::string host = rest;
  if (colon != std::string::npos) {
    host = rest.substr(0, colon);
    try {
      size_t used = 0;
      port = std::stoi(rest.substr(colon + 1), &used);
      if (used != rest.size() - colon - 1 || port <= 0 || port > 65535) throw std::out_of_range("");
    } catch (const std::exception&) {
      throw StoreError(fmt::format("{}: the port is not a number from 1 to 65535", spec), false);
    }
  }
  if (host.empty()) throw StoreError(fmt::format("{}: no host", spec), false);
  for (char c : database)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      throw StoreError(fmt::format("{}: a database name is letters, digits and _", spec), false);
  return open_clickhouse(host, port, database, write, limits);
}

}  // namespace cw::fleet
