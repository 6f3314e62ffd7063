// `causeway fleet diagnose TRACE|FOLDER… -o STORE`: many traces diagnosed non-interactively
// on worker processes, one row per hang into a store (a SQLite file, or ClickHouse);
// `fleet top STORE [--by …]` and `fleet query STORE SQL` ask it; `fleet schema` prints
// its table (docs/fleet.md). The analysis is engine/fleet; this only parses and prints.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/parallel.h"
#include "cli/commands.h"
#include "cli/debug_session.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "engine/fleet/batch.h"
#include "engine/fleet/queries.h"
#include "engine/fleet/store.h"
#include "engine/session/answers.h"
#include "trace/ring.h"

namespace cw::cli {
namespace {

constexpr int kMaxFolderDepth = 8;

// The traces under `dir` (files ending in .cwt), in name order, folders entered down to
// kMaxFolderDepth without following a link.
void traces_under(const std::string& dir, int depth, std::vector<std::string>& out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    names.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = dir + (dir.ends_with('/') ? "" : "/") + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      // A recorder's ring is one trace (its files are read together); a trace's derived
      // cache (TRACE.cwcache/) holds none.
      if (is_ring_dir(path))
        out.push_back(path);
      else if (depth < kMaxFolderDepth && !name.ends_with(".cwcache"))
        traces_under(path, depth + 1, out);
    } else if (S_ISREG(st.st_mode) && name.ends_with(".cwt")) {
      out.push_back(path);
    }
  }
}

// The name of the folder holding `path` ("." for a bare file name).
std::string parent_folder_name(const std::string& path) {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos) return ".";
  dir.resize(slash);
  const size_t up = dir.rfind('/');
  return up == std::string::npos ? dir : dir.substr(up + 1);
}

std::string utc(int64_t seconds) {
  if (seconds <= 0) return "-";
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

bool time_column(const std::string& name) {
  return name == "first_seen" || name == "last_seen" || name == "day" || name == "recorded_at" ||
         name == "diagnosed_at";
}

bool count_column(const std::string& name) {
  return name == "hangs" || name == "hosts" || name == "signatures" || time_column(name);
}

// A result as an aligned table; times as UTC dates, a long cell cut to `width`.
void print_table(const fleet::QueryResult& r, size_t width = 48) {
  std::vector<std::vector<std::string>> cells;
  cells.push_back(r.columns);
  for (const auto& row : r.rows) {
    std::vector<std::string> line;
    for (size_t i = 0; i < row.size(); ++i) {
      std::string v = row[i];
      if (i < r.columns.size() && time_column(r.columns[i])) {
        try {
          v = utc(std::stoll(v));
        } catch (const std::exception&) {
        }
      }
      for (char& c : v)
        if (c == '\n' || c == '\t') c = ' ';
      if (v.size() > width) v = v.substr(0, width - 1) + "…";
      line.push_back(std::move(v));
    }
    cells.push_back(std::move(line));
  }
  std::vector<size_t> widths(r.columns.size(), 0);
  for (const auto& line : cells)
    for (size_t i = 0; i < line.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], line[i].size());
  for (const auto& line : cells) {
    std::string out;
    for (size_t i = 0; i < line.size(); ++i) {
      if (i) out += "  ";
      out += i + 1 == line.size() ? line[i] : fmt::format("{:<{}}", line[i], widths[i]);
    }
    std::cout << out << "\n";
  }
}

nlohmann::json result_json(const fleet::QueryResult& r, bool typed) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json o = nlohmann::json::object();
    for (size_t i = 0; i < row.size() && i < r.columns.size(); ++i) {
      if (typed && count_column(r.columns[i])) {
        try {
          o[r.columns[i]] = std::stoll(row[i]);
          continue;
        } catch (const std::exception&) {
        }
      }
      o[r.columns[i]] = row[i];
    }
    rows.push_back(std::move(o));
  }
  return rows;
}

int store_error(const fleet::StoreError& e) {
  std::cerr << "causeway fleet: " << e.what() << "\n";
  return e.environment ? kExitEnvironment : kExitBadInput;
}

struct DiagnoseArgs {
  std::vector<std::string> inputs;
  std::string list;
  std::vector<std::string> stores;
  std::vector<std::string> rules;
  bool no_stdlib = false;
  bool no_cache = false;
  std::string hang = "auto";
  double min_hang = kDefaultMinHangSeconds;
  std::string host;
  bool host_from_folder = false;
  unsigned hangs = 1;
  unsigned jobs = 0;
  bool json = false;
};

int run_diagnose(const DiagnoseArgs& a) {
  std::vector<std::string> traces;
  for (const std::string& in : a.inputs) {
    struct stat st {};
    if (::stat(in.c_str(), &st) != 0) {
      std::cerr << fmt::format("causeway fleet diagnose: {}: no such file or folder\n", in);
      return kExitBadInput;
    }
    if (S_ISDIR(st.st_mode) && is_ring_dir(in)) {
      traces.push_back(in);
    } else if (S_ISDIR(st.st_mode)) {
      const size_t before = traces.size();
      traces_under(in, 0, traces);
      if (traces.size() == before)
        std::cerr << fmt::format("causeway fleet diagnose: {}: no trace (*.cwt) in it\n", in);
    } else {
      traces.push_back(in);
    }
  }
  if (!a.list.empty()) {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (a.list != "-") {
      file.open(a.list);
      if (!file) {
        std::cerr << fmt::format("causeway fleet diagnose: --list {}: cannot be read\n", a.list);
        return kExitBadInput;
      }
      in = &file;
    }
    for (std::string line; std::getline(*in, line);) {
      line = session::trim(line);
      if (!line.empty() && line[0] != '#') traces.push_back(line);
    }
  }
  if (traces.empty()) {
    std::cerr << "causeway fleet diagnose: no trace to diagnose\n";
    return kExitBadInput;
  }
  std::string why;
  const auto spec = session::parse_hang(a.hang, &why);
  if (!spec || !spec->automatic) {
    std::cerr << fmt::format(
        "causeway fleet diagnose: --hang {}: {}\n", a.hang,
        spec ? "a batch takes auto or a thread's name, not one trace's TID@SECONDS" : why);
    return kExitBadInput;
  }

  std::vector<std::unique_ptr<fleet::Store>> stores;
  try {
    for (const std::string& spec : a.stores) stores.push_back(fleet::open_store(spec, true));
  } catch (const fleet::StoreError& e) {
    return store_error(e);
  }
  std::vector<std::string> store_names;
  for (const auto& st : stores) store_names.push_back(st->name());

  fleet::BatchConfig config;
  config.packs = a.rules;
  config.no_stdlib = a.no_stdlib;
  config.cache = !a.no_cache;
  config.hang = a.hang;
  config.min_hang_s = a.min_hang;
  config.hangs = a.hangs;
  config.host = a.host;
  if (config.host.empty()) {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) config.host = name;
  }
  config.workers = a.jobs ? a.jobs : worker_count();

  const bool progress = isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();
  size_t finished = 0, hangs = 0, quiet = 0, failed = 0, environment = 0;
  std::vector<fleet::HangRow> pending;
  nlohmann::json failures = nlohmann::json::array();
  auto flush = [&] {
    for (const auto& st : stores) st->add(pending);
    pending.clear();
  };
  try {
    fleet::diagnose_batch(traces, config, [&](fleet::TraceOutcome o) {
      ++finished;
      const std::string& trace = traces[o.index];
      if (!o.error.empty()) {
        ++failed;
        if (o.environment_error) ++environment;
        if (progress) std::cerr << "\r\x1b[K";
        std::cerr << fmt::format("{}: {}\n", trace, o.error);
        failures.push_back({{"trace", trace}, {"error", o.error}});
      } else if (!o.no_hang.empty()) {
        ++quiet;
      }
      hangs += o.rows.size();
      for (auto& r : o.rows) {
        // A folder per host, as rings collected from hosts are kept: hosts/db-7/ring.cwt.
        if (a.host_from_folder) r.host = parent_folder_name(trace);
        pending.push_back(std::move(r));
      }
      if (pending.size() >= 256) flush();
      if (progress)
        std::cerr << fmt::format("\r\x1b[Kdiagnosing: {}/{} traces, {} hangs, {} failed", finished,
                                 traces.size(), hangs, failed)
                  << std::flush;
    });
    flush();
  } catch (const fleet::StoreError& e) {
    if (progress) std::cerr << "\r\x1b[K";
    return store_error(e);
  } catch (const std::runtime_error& e) {
    if (progress) std::cerr << "\r\x1b[K";
    std::cerr << "causeway fleet diagnose: " << e.what() << "\n";
    return kExitEnvironment;
  }
  if (progress) std::cerr << "\r\x1b[K";
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (a.json) {
    nlohmann::json out = {
        {"stores", store_names}, {"traces", traces.size()},   {"hangs", hangs},
        {"no_hang", quiet},      {"failed", failed},          {"failures", failures},
        {"seconds", seconds},    {"workers", config.workers}, {"host", config.host}};
    std::cout << json_text(with_schema_version(std::move(out))) << "\n";
  } else {
    std::cout << fmt::format(
        "{} traces in {:.1f} s on {} workers ({:.1f} traces/s): {} hangs added to {}, {} "
        "without a hang, {} failed\n",
        traces.size(), seconds, config.workers, static_cast<double>(traces.size()) / seconds, hangs,
        fmt::join(store_names, " and "), quiet, failed);
  }
  if (failed == 0) return kExitOk;
  return environment == failed ? kExitEnvironment : kExitBadInput;
}

}  // namespace

std::vector<Command> add_fleet(CLI::App& group) {
  std::vector<Command> out;
  {
    auto a = std::make_shared<DiagnoseArgs>();
    auto* cmd = group.add_subcommand(
        "diagnose",
        "diagnose many traces without questions, in parallel, one row per hang into a store");
    cmd->add_option("TRACE", a->inputs,
                    "traces, always-on recorders' ring folders, or folders searched for both "
                    "(*.cwt files, ring folders; not through links)")
        ->type_name("TRACE|FOLDER");
    cmd->add_option("--list", a->list, "also the traces listed in FILE, one per line (- stdin)")
        ->type_name("FILE");
    cmd->add_option("-o,--store", a->stores,
                    "the store: a SQLite file (made when missing), or "
                    "clickhouse://HOST:PORT[/DATABASE] (ClickHouse's HTTP interface); given "
                    "more than once, every row goes to each")
        ->allow_extra_args(false)
        ->required()
        ->type_name("STORE");
    cmd->add_option("--rules", a->rules, "packs (files or folders) added after the standard ones")
        ->type_name("PACK")
        ->allow_extra_args(false)
        ->check(CLI::ExistingPath);
    cmd->add_flag("--no-stdlib", a->no_stdlib, "do not load the standard packs");
    cmd->add_flag("--no-cache", a->no_cache,
                  "neither use nor write each trace's derived cache (docs/cache.md)");
    cmd->add_option("--hang", a->hang,
                    "the symptom in every trace: auto (as debug --auto chooses), or a thread's "
                    "name (its longest stretch)")
        ->capture_default_str()
        ->type_name("auto|NAME");
    cmd->add_option("--min-hang", a->min_hang,
                    "a trace whose candidates all answered within this many seconds has no hang")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e6))
        ->type_name("SECONDS");
    cmd->add_option("--hangs", a->hangs,
                    "rows per trace at most: with N > 1, each of the first N candidates "
                    "`causeway hangs` lists that stopped responding for --min-hang is "
                    "diagnosed (a ring may hold several hangs)")
        ->capture_default_str()
        ->check(CLI::Range(1u, 100u))
        ->type_name("N");
    cmd->add_option("--host", a->host,
                    "the host column of the rows (default: this machine's name)");
    cmd->add_flag("--host-from-folder", a->host_from_folder,
                  "the host is the name of the folder holding each trace (hosts/HOST/ring.cwt)")
        ->excludes("--host");
    cmd->add_option("-j,--jobs", a->jobs,
                    "worker processes (default: $CAUSEWAY_THREADS, else the CPUs)")
        ->check(CLI::Range(1u, 256u))
        ->type_name("N");
    cmd->add_flag("--json", a->json, "print the batch's summary as JSON (docs/fleet.md)");
    cmd->footer(
        "Questions are answered as debug --auto answers them; each row lists them. A trace that "
        "fails is named with why and the batch goes on.\nExit status: 0 every trace diagnosed "
        "(or had no hang), 1 a trace or the input was wrong, 2 the store cannot be written.\n"
        "See docs/fleet.md.");
    out.push_back({cmd, [a] { return run_diagnose(*a); }});
  }
  {
    struct Args {
      std::string store;
      std::string by = "signature";
      unsigned limit = 20;
      bool json = false;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = group.add_subcommand("top",
                                     "the most frequent hangs in a store, by signature, "
                                     "program version, host or day");
    cmd->add_option("STORE", a->store, "a SQLite file or clickhouse://HOST:PORT[/DATABASE]")
        ->required();
    std::vector<std::string> names;
    std::string doc;
    for (const auto& q : fleet::named_queries()) {
      names.emplace_back(q.name);
      doc += fmt::format("\n  {:<10} {}", q.name, q.doc);
    }
    cmd->add_option("--by", a->by, "what to count hangs by:" + doc)
        ->capture_default_str()
        ->check(CLI::IsMember(names));
    cmd->add_option("-n,--limit", a->limit, "rows at most")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000000u));
    cmd->add_flag("--json", a->json, "print the rows as JSON");
    cmd->footer(
        "The same SQL runs on SQLite and ClickHouse (`fleet query` takes your own).\n"
        "Exit status: 0 done, 1 not a store, 2 the store cannot be reached.");
    out.push_back({cmd, [a] {
                     try {
                       auto store = fleet::open_store(a->store, false);
                       const fleet::QueryResult r = store->query(fleet::top_query(a->by, a->limit));
                       if (a->json)
                         std::cout << json_text(with_schema_version(nlohmann::json{
                                          {"by", a->by}, {"rows", result_json(r, true)}}))
                                   << "\n";
                       else
                         print_table(r);
                       return kExitOk;
                     } catch (const fleet::StoreError& e) {
                       return store_error(e);
                     }
                   }});
  }
  {
    struct Args {
      std::string store, sql;
      bool json = false;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = group.add_subcommand("query", "run one SQL SELECT on a store's table `hangs`");
    cmd->add_option("STORE", a->store, "a SQLite file or clickhouse://HOST:PORT[/DATABASE]")
        ->required();
    cmd->add_option("SQL", a->sql, "the statement (no FORMAT clause)")->required();
    cmd->add_flag("--json", a->json, "print the rows as JSON objects, every value a string");
    cmd->footer(
        "A SQLite store is opened read-only. The columns are in `causeway fleet schema` "
        "and docs/fleet.md.\nExit status: 0 done, 1 a bad query or not a store, 2 the "
        "store cannot be reached.");
    out.push_back({cmd, [a] {
                     try {
                       auto store = fleet::open_store(a->store, false);
                       const fleet::QueryResult r = store->query(a->sql);
                       if (a->json)
                         std::cout << json_text(result_json(r, false)) << "\n";
                       else
                         print_table(r, 200);
                       return kExitOk;
                     } catch (const fleet::StoreError& e) {
                       return store_error(e);
                     }
                   }});
  }
  {
    struct Args {
      bool clickhouse = false;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = group.add_subcommand("schema", "print the store's table: its SQL and columns");
    cmd->add_flag("--clickhouse", a->clickhouse, "ClickHouse's CREATE TABLE instead of SQLite's");
    out.push_back({cmd, [a] {
                     std::cout << (a->clickhouse ? fleet::clickhouse_schema() + ";\n"
                                                 : fleet::sqlite_schema());
                     return kExitOk;
                   }});
  }
  return out;
}

}  // namespace cw::cli
