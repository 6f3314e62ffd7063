// The SQLite store: rows in and out, the common queries, and a file it must not trust.
// (The ClickHouse store is checked against a real server by tests/fleet/clickhouse.t.)
#include "engine/fleet/store.h"

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "base/temp_dir.h"
#include "engine/fleet/queries.h"

namespace cw::fleet {
namespace {

HangRow row(const std::string& host, const std::string& signature, int64_t day) {
  HangRow r;
  r.host = host;
  r.trace = "/traces/" + host + ".cwt";
  r.recorded_at = day * 86400 + 3600;
  r.hang_start = 0.5;
  r.hang_seconds = 1.5;
  r.summary.program = "cw-app";
  r.summary.exe = "cw-app";
  r.summary.version = signature == "b" ? "v2" : "v1";
  r.summary.hang_kind = "LongWait";
  r.summary.hang_wait = "read, ended by message";
  r.summary.root_program = "it's \"slow\"\twith a tab";
  r.signature = signature;
  r.signature_text = "program: cw-app\n";
  r.queries = "[]";
  return r;
}

TEST_CASE("rows added to a SQLite store come back from the common queries") {
  TempDir dir("cw-fleet");
  const std::string path = dir.file("hangs.db");
  {
    auto store = open_store(path, true);
    store->add({row("h1", "a", 20000), row("h2", "a", 20000), row("h1", "a", 20001)});
    store->add({row("h3", "b", 20001)});
  }
  auto store = open_store(path, false);
  const QueryResult top = store->query(top_query("signature", 10));
  REQUIRE(top.rows.size() == 2);
  CHECK(top.columns.at(0) == "signature");
  CHECK(top.rows[0][0] == "a");
  CHECK(top.rows[0][1] == "3");  // hangs
  CHECK(top.rows[0][2] == "2");  // hosts
  CHECK(top.rows[0][3] == std::to_string(20000 * 86400 + 3600));
  CHECK(top.rows[1][0] == "b");
  const QueryResult days = store->query(top_query("day", 10));
  REQUIRE(days.rows.size() == 2);
  CHECK(days.rows[0] == std::vector<std::string>{std::to_string(20000 * 86400), "2", "1"});
  CHECK(days.rows[1] == std::vector<std::string>{std::to_string(20001 * 86400), "2", "2"});
  const QueryResult versions = store->query(top_query("version", 10));
  REQUIRE(versions.rows.size() == 2);
  CHECK(versions.rows[0][2] == "v1");
  const QueryResult hosts = store->query(top_query("host", 1));
  REQUIRE(hosts.rows.size() == 1);
  CHECK(hosts.rows[0][0] == "h1");
  // Text comes back as written.
  CHECK(store->query("SELECT root_program FROM hangs LIMIT 1").rows.at(0).at(0) ==
        "it's \"slow\"\twith a tab");
  CHECK(top_query("nothing", 1).empty());
}

TEST_CASE("a store opened to read is not written") {
  TempDir dir("cw-fleet");
  const std::string path = dir.file("hangs.db");
  open_store(path, true)->add({row("h1", "a", 1)});
  auto store = open_store(path, false);
  CHECK_THROWS_AS(store->query("DELETE FROM hangs"), StoreError);
  CHECK(store->query("SELECT count(*) FROM hangs").rows.at(0).at(0) == "1");
  CHECK_THROWS_AS(open_store(dir.file("missing.db"), false), StoreError);
}

TEST_CASE("a bad query is the input's error, with SQLite's words") {
  TempDir dir("cw-fleet");
  auto store = open_store(dir.file("hangs.db"), true);
  try {
    store->query("SELECT nonsense FROM hangs");
    FAIL("no error");
  } catch (const StoreError& e) {
    CHECK_FALSE(e.environment);
    CHECK(std::string(e.what()).find("no such column: nonsense") != std::string::npos);
  }
}

TEST_CASE("a query that runs past its time is stopped") {
  TempDir dir("cw-fleet");
  StoreLimits limits;
  limits.query_time = std::chrono::milliseconds(200);
  auto store = open_store(dir.file("hangs.db"), true, limits);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(store->query("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                               "SELECT count(*) FROM c"),
                  StoreError);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("a store is not opened through a link, nor written when someone else owns it") {
  TempDir dir("cw-fleet");
  const std::string real = dir.file("real.db");
  open_store(real, true)->add({row("h1", "a", 1)});
  std::filesystem::create_symlink(real, dir.file("link.db"));
  try {
    open_store(dir.file("link.db"), false);
    FAIL("opened through a link");
  } catch (const StoreError& e) {
    CHECK(std::string(e.what()).find("symbolic link") != std::string::npos);
  }
  ::chmod(real.c_str(), 0666);
  CHECK_THROWS_AS(open_store(real, true), StoreError);  // others may write it
  ::chmod(real.c_str(), 0644);
  CHECK_NOTHROW(open_store(real, true));
  if (::geteuid() == 0) {
    REQUIRE(::chown(real.c_str(), 65534, 65534) == 0);
    CHECK_THROWS_AS(open_store(real, true), StoreError);
    CHECK_NOTHROW(open_store(real, false));  // reading it is fine
  }
}

TEST_CASE("a SQLite file with another table, or no SQLite file, is not a store") {
  TempDir dir("cw-fleet");
  const std::string path = dir.file("other.db");
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "CREATE TABLE hangs (x INTEGER)", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  sqlite3_close(db);
  for (bool write : {false, true}) {
    try {
      open_store(path, write);
      FAIL("taken for a store");
    } catch (const StoreError& e) {
      CHECK_FALSE(e.environment);
      CHECK(std::string(e.what()).find("not a causeway fleet store") != std::string::npos);
    }
  }
  dir.write("text.db", "hello, this is text\n");
  CHECK_THROWS_AS(open_store(dir.file("text.db"), false), StoreError);
}

TEST_CASE("a ClickHouse address is checked before anything is sent") {
  CHECK_THROWS_WITH_AS(open_store("clickhouse://127.0.0.1:99999", true),
                       "clickhouse://127.0.0.1:99999: the port is not a number from 1 to 65535",
                       StoreError);
  CHECK_THROWS_AS(open_store("clickhouse://127.0.0.1:8123/bad-name", true), StoreError);
  try {
    // Nothing listens on port 1.
    StoreLimits limits;
    limits.query_time = std::chrono::seconds(2);
    open_store("clickhouse://127.0.0.1:1", true, limits);
    FAIL("reached nothing");
  } catch (const StoreError& e) {
    CHECK(e.environment);
    CHECK(std::string(e.what()).find("cannot reach the server") != std::string::npos);
  }
}

TEST_CASE("the two schemas have every column") {
  for (const Column& c : columns()) {
    CHECK(sqlite_schema().find(std::string(c.name) + " " + std::string(c.sqlite_type)) !=
          std::string::npos);
    CHECK(clickhouse_schema().find(std::string(c.name) + " " + std::string(c.clickhouse_type)) !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace cw::fleet
