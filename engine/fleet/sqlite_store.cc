// The SQLite store: one file, opened without following a link, written only when the
// user running causeway owns it (causeway often runs as root over other users' folders),
// read with SQLite's defensive settings and a time limit on every query.
#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/fleet/store.h"

namespace cw::fleet {

std::string sqlite_schema() {
  std::string cols;
  for (const Column& c : columns())
    cols += fmt::format("{}  {} {} NOT NULL", cols.empty() ? "" : ",\n", c.name, c.sqlite_type);
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS hangs (\n{}\n);\n"
      "CREATE INDEX IF NOT EXISTS hangs_by_signature ON hangs (signature, host, recorded_at);\n",
      cols);
}

namespace {

// A file the store may be: absent (write: made), or a regular file reached without a link;
// to write it, owned by this user and writable by nobody else.
void check_file(const std::string& path, bool write) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT && write) return;
    if (errno == ELOOP)
      throw StoreError(
          fmt::format("{}: is a symbolic link; a store is opened only as itself", path), false);
    throw StoreError(fmt::format("{}: {}", path, std::strerror(errno)), errno != ENOENT);
  }
  struct stat st {};
  const int rc = ::fstat(fd, &st);
  ::close(fd);
  if (rc != 0) throw StoreError(fmt::format("{}: {}", path, std::strerror(errno)), true);
  if (!S_ISREG(st.st_mode))
    throw StoreError(fmt::format("{}: not a regular file, so not a store", path), false);
  if (write && (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0))
    throw StoreError(
        fmt::format("{}: owned by uid {} with mode {:o}; causeway adds rows only to a store its "
                    "user owns and nobody else can write",
                    path, st.st_uid, st.st_mode & 07777),
        false);
}

class SqliteStore final : public Store {
 public:
  SqliteStore(const std::string& path, bool write, StoreLimits limits)
      : path_(path), limits_(limits) {
    check_file(path, write);
    const int flags = (write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) |
                      SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      db_ = nullptr;
      throw StoreError(fmt::format("{}: cannot open: {}", path, why), true);
    }
    // A file from elsewhere cannot corrupt it or make its schema run code.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_busy_timeout(db_, 5000);
    sqlite3_progress_handler(db_, 10000, &SqliteStore::over_time, this);
    if (!write) exec("PRAGMA query_only = 1");
    // A file's own table is checked before anything is made beside it.
    if (write && query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'hangs'")
                     .rows.empty())
      exec(sqlite_schema());
    check_columns();
  }
  ~SqliteStore() override { sqlite3_close(db_); }

  std::string name() const override { return path_; }

  void add(const std::vector<HangRow>& rows) override {
    std::string names, marks;
    for (const Column& c : columns()) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", c.name);
      marks += marks.empty() ? "?" : ", ?";
    }
    exec("BEGIN IMMEDIATE");
    try {
      sqlite3_stmt* st = prepare(fmt::format("INSERT INTO hangs ({}) VALUES ({})", names, marks));
      for (const HangRow& row : rows) {
        const nlohmann::json j = row_json(row);
        int k = 1;
        for (const Column& c : columns()) {
          const nlohmann::json& v = j.at(std::string(c.name));
          if (v.is_string()) {
            const std::string& s = v.get_ref<const std::string&>();
            sqlite3_bind_text(st, k, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
          } else if (v.is_number_float()) {
            sqlite3_bind_double(st, k, v.get<double>());
          } else {
            sqlite3_bind_int64(st, k, v.get<int64_t>());
          }
          ++k;
        }
        start_clock();
        const int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) {
          std::string why = sqlite3_errmsg(db_);
          sqlite3_finalize(st);
          throw StoreError(fmt::format("{}: cannot add a row: {}", path_, why), true);
        }
        sqlite3_reset(st);
      }
      sqlite3_finalize(st);
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  QueryResult query(const std::string& sql) override {
    QueryResult out;
    sqlite3_stmt* st = prepare(sql);
    const int n = sqlite3_column_count(st);
    for (int i = 0; i < n; ++i) out.columns.emplace_back(sqlite3_column_name(st, i));
    start_clock();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < n; ++i) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
        row.emplace_back(text ? std::string(text, sqlite3_column_bytes(st, i)) : std::string());
      }
      out.rows.push_back(std::move(row));
    }
    std::string why = rc == SQLITE_DONE        ? ""
                      : rc == SQLITE_INTERRUPT ? fmt::format("the query ran past its {} s",
                                                             limits_.query_time.count() / 1000.0)
                                               : sqlite3_errmsg(db_);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) throw StoreError(fmt::format("{}: {}", path_, why), false);
    return out;
  }

 private:
  static int over_time(void* self) {
    auto* s = static_cast<SqliteStore*>(self);
    return std::chrono::steady_clock::now() > s->deadline_ ? 1 : 0;
  }
  void start_clock() { deadline_ = std::chrono::steady_clock::now() + limits_.query_time; }

  sqlite3_stmt* prepare(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    start_clock();
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &st, nullptr) !=
            SQLITE_OK ||
        !st)
      throw StoreError(fmt::format("{}: {}", path_, st ? sqlite3_errmsg(db_) : sqlite3_errmsg(db_)),
                       false);
    return st;
  }

  void exec(const std::string& sql) {
    char* err = nullptr;
    start_clock();
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string why = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw StoreError(fmt::format("{}: {}", path_, why), false);
    }
  }

  // The file's table is this causeway's: the same columns in the same order.
  void check_columns() {
    QueryResult info = query("PRAGMA table_info(hangs)");
    std::vector<std::string> have;
    for (const auto& r : info.rows) have.push_back(r.at(1));
    std::vector<std::string> want;
    for (const Column& c : columns()) want.emplace_back(c.name);
    if (have != want)
      throw StoreError(
          fmt::format("{}: {} — not a causeway fleet store of this version (docs/fleet.md, "
                      "\"The schema\")",
                      path_, have.empty() ? "no table 'hangs'" : "table 'hangs' has other columns"),
          false);
  }

  std::string path_;
  StoreLimits limits_;
  sqlite3* db_ = nullptr;
  std::chrono::steady_clock::time_point deadline_{};
};

}  // namespace

std::unique_ptr<Store> open_sqlite(const std::string& path, bool write, StoreLimits limits) {
  return std::make_unique<SqliteStore>(path, write, limits);
}

}  // namespace cw::fleet
