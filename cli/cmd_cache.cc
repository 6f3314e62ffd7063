// `causeway cache size [TRACE] [--json]` and `causeway cache clean [TRACE] (--all | --older
// DAYS)`: what the derived cache holds (docs/cache.md), and removing it. Only the cache's
// own files are counted or removed: regular files of this user's under the cache's names,
// in folders opened without following a link (engine/cache/cache_dir.h).
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/json_output.h"
#include "engine/cache/cache_dir.h"

namespace cw::cli {
namespace {

std::string human(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string when(int64_t ns) {
  if (ns <= 0) return "never";
  const std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string entries(uint64_t n) {
  return fmt::format("{} {}", n, n == 1 ? "entry" : "entries");
}

// The cap in force, and a word when CAUSEWAY_CACHE_MAX is set but not a size.
uint64_t cap_in_force(std::string* warning) {
  const char* v = std::getenv("CAUSEWAY_CACHE_MAX");
  if (v && *v && !cache::parse_size(v))
    *warning = fmt::format(
        "causeway: CAUSEWAY_CACHE_MAX={} is not a size (bytes, or a number with K, M, G or T); "
        "the cap is the default, {}\n",
        v, human(cache::kDefaultSizeCap));
  return cache::size_cap();
}

// The folders of TRACE that exist: beside it, and in the user's cache folder.
struct TraceFolders {
  std::optional<cache::Folder> beside, user;
};

TraceFolders trace_folders(const std::string& trace, const std::optional<cache::Folder>& pool) {
  TraceFolders out;
  out.beside = cache::Folder::open(cache::beside_path(trace));
  if (pool) out.user = pool->sub(cache::trace_folder_name(trace), false);
  return out;
}

nlohmann::json usage_json(const cache::FolderUsage& u) {
  return {{"folder", u.name},
          {"bytes", u.bytes},
          {"entries", u.entries},
          {"last_used_ns",
           u.last_used_ns == 0 ? nlohmann::json(nullptr) : nlohmann::json(u.last_used_ns)}};
}

int run_size(const std::string& trace, bool json) {
  std::string warning;
  const uint64_t cap = cap_in_force(&warning);
  std::cerr << warning;
  std::string why;
  const auto pool = cache::user_cache_folder(false, &why);
  if (!pool && !why.empty()) std::cerr << "causeway: the user's cache folder: " << why << "\n";
  std::vector<cache::FolderUsage> folders;
  if (pool) folders = cache::pool_usage(*pool);
  uint64_t bytes = 0, count = 0;
  for (const auto& u : folders) {
    bytes += u.bytes;
    count += u.entries;
  }
  std::optional<TraceFolders> of;
  if (!trace.empty()) of = trace_folders(trace, pool);
  if (json) {
    nlohmann::json out = {{"folder", pool ? nlohmann::json(pool->path()) : nlohmann::json(nullptr)},
                          {"cap_bytes", cap},
                          {"bytes", bytes},
                          {"entries", count},
                          {"traces", nlohmann::json::array()}};
    for (const auto& u : folders) out["traces"].push_back(usage_json(u));
    if (of) {
      nlohmann::json t = {{"path", trace}};
      t["beside"] =
          of->beside ? usage_json(cache::folder_usage(*of->beside)) : nlohmann::json(nullptr);
      t["user"] = of->user ? usage_json(cache::folder_usage(*of->user)) : nlohmann::json(nullptr);
      out["trace"] = t;
    }
    std::cout << json_text(with_schema_version(std::move(out))) << "\n";
    return kExitOk;
  }
  if (pool) {
    std::cout << fmt::format("{}: {}, {} in {} trace {} (cap {})\n", pool->path(), human(bytes),
                             entries(count), folders.size(),
                             folders.size() == 1 ? "folder" : "folders", human(cap));
    for (const auto& u : folders)
      std::cout << fmt::format("  {}  {:>10}  {:>11}  last used {}\n", u.name, human(u.bytes),
                               entries(u.entries), when(u.last_used_ns));
  } else {
    std::cout << fmt::format("no user cache folder yet (cap {})\n", human(cap));
  }
  if (of) {
    for (const auto* f : {&of->beside, &of->user}) {
      if (!*f) continue;
      const auto u = cache::folder_usage(**f);
      std::cout << fmt::format("{}: {}, {}, last used {}\n", u.name, human(u.bytes),
                               entries(u.entries), when(u.last_used_ns));
    }
    if (!of->beside && !of->user) std::cout << trace << ": no cache folder\n";
  }
  return kExitOk;
}

int run_clean(const std::string& trace, bool all, std::optional<double> older_days) {
  if (all == older_days.has_value()) {
    std::cerr << "causeway cache clean: say which entries: --all, or --older DAYS\n";
    return kExitBadInput;
  }
  int64_t before = INT64_MAX;
  if (older_days) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    before = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() -
             static_cast<int64_t>(*older_days * 86400e9);
  }
  std::string why;
  const auto pool = cache::user_cache_folder(false, &why);
  if (!pool && !why.empty()) std::cerr << "causeway: the user's cache folder: " << why << "\n";
  uint64_t bytes = 0, count = 0;
  auto clean = [&](const cache::Folder& f) {
    const auto removed = cache::clean_folder(f, before);
    bytes += removed.bytes;
    count += removed.entries;
    if (removed.entries)
      std::cout << fmt::format("{}: removed {}, {}\n", f.path(), entries(removed.entries),
                               human(removed.bytes));
  };
  if (!trace.empty()) {
    const TraceFolders of = trace_folders(trace, pool);
    if (of.beside) clean(*of.beside);
    if (of.user) clean(*of.user);
    if (of.user && pool) pool->remove_empty_folder(cache::trace_folder_name(trace));
  } else if (pool) {
    for (const auto& u : cache::pool_usage(*pool)) {
      if (auto f = pool->sub(u.name, false)) clean(*f);
      pool->remove_empty_folder(u.name);
    }
  }
  std::cout << fmt::format("removed {}, {}\n", entries(count), human(bytes));
  return kExitOk;
}

}  // namespace

std::vector<Command> add_cache(CLI::App& group) {
  std::vector<Command> out;
  {
    struct Args {
      std::string trace;
      bool json = false;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = group.add_subcommand(
        "size", "show what the user's cache folder holds, per trace folder, and its cap");
    cmd->add_option("TRACE", args->trace, "also show this trace's cache folders");
    cmd->add_flag("--json", args->json, "print the sizes as JSON (docs/cache.md)");
    cmd->footer(
        "The user's cache folder is $XDG_CACHE_HOME/causeway (~/.cache/causeway); its total is "
        "capped by CAUSEWAY_CACHE_MAX (default 4G). See docs/cache.md.");
    out.push_back({cmd, [args] { return run_size(args->trace, args->json); }});
  }
  {
    struct Args {
      std::string trace;
      bool all = false;
      std::optional<double> older;
    };
    auto args = std::make_shared<Args>();
    auto* cmd = group.add_subcommand(
        "clean",
        "remove entries of the user's cache folder, or with TRACE that trace's (beside it too)");
    cmd->add_option("TRACE", args->trace, "only this trace's entries, beside it and in ~/.cache");
    cmd->add_flag("--all", args->all, "remove every entry");
    cmd->add_option("--older", args->older, "remove the entries not used in the last DAYS days")
        ->type_name("DAYS")
        ->check(CLI::Range(0.0, 100000.0));
    cmd->footer(
        "Only the cache's own files are removed (entries and temporary files of this user's, "
        "never through a link). See docs/cache.md.\nExit status: 0 done, 1 the input was wrong.");
    out.push_back({cmd, [args] { return run_clean(args->trace, args->all, args->older); }});
  }
  return out;
}

}  // namespace cw::cli
