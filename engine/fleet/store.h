// Where a fleet's hangs go: a SQLite file (the embedded default) or a ClickHouse server
// (an existing distributed engine, for many hosts), with the same table and the same
// queries (docs/fleet.md).
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/fleet/hang_row.h"

namespace cw::fleet {

// What a query returned, every value as text (as the store prints it).
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

// A store that cannot be opened, written or asked. `environment`: the store could not be
// reached or written (exit 2); else the input was wrong (a bad query, not a store; exit 1).
struct StoreError : std::runtime_error {
  StoreError(const std::string& what, bool environment)
      : std::runtime_error(what), environment(environment) {}
  bool environment;
};

struct StoreLimits {
  // A query that runs longer is stopped with an error (a store's file comes from
  // elsewhere as often as not: nothing in it may take the time it likes).
  std::chrono::milliseconds query_time{60'000};
};

class Store {
 public:
  virtual ~Store() = default;
  // Adds the rows, all or none.
  virtual void add(const std::vector<HangRow>& rows) = 0;
  // Runs one SELECT.
  virtual QueryResult query(const std::string& sql) = 0;
  // What the store is, for messages: the file, or the server's address.
  virtual std::string name() const = 0;
};

// `spec` is `clickhouse://HOST:PORT[/DATABASE]` (HTTP interface; database `default`), or
// a SQLite file's path. With `write`, the table is made when missing; without, the store
// is only read (a SQLite file must exist). Throws StoreError.
std::unique_ptr<Store> open_store(const std::string& spec, bool write, StoreLimits limits = {});

// The SQLite store in `path` (open_store's file case).
std::unique_ptr<Store> open_sqlite(const std::string& path, bool write, StoreLimits limits);
// The ClickHouse store at `host`:`port`, database `database`.
std::unique_ptr<Store> open_clickhouse(const std::string& host, int port,
                                       const std::string& database, bool write, StoreLimits limits);

// The table's definition in each engine, from columns().
std::string sqlite_schema();
std::string clickhouse_schema();

}  // namespace cw::fleet
