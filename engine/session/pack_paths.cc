#include "engine/session/pack_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace cw::session {

std::string canonical_path(const std::string& path) {
  std::error_code ec;
  auto c = fs::weakly_canonical(path, ec);
  return ec ? path : c.string();
}

bool path_within(const std::string& outer, const std::string& inner) {
  if (inner == outer) return true;
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
         inner[outer.size()] == '/';
}

std::string stdlib_dir() {
  if (const char* env = std::getenv("CAUSEWAY_STDLIB"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "share/causeway/rules";
  return (exe.parent_path().parent_path() / "share/causeway/rules").lexically_normal().string();
}

namespace {

// The packs in the standard folder: its sub-folders and .cw files, sorted.
std::vector<std::string> standard_packs() {
  const std::string dir = stdlib_dir();
  const char* how =
      "point CAUSEWAY_STDLIB at a folder of packs (a copy of stdlib-rules), or pass "
      "--no-stdlib and give the packs with --rules";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw MissingPacksError(
        fmt::format("causeway: the standard rule packs are missing: no folder {}{}; {}", dir,
                    std::getenv("CAUSEWAY_STDLIB") ? " ($CAUSEWAY_STDLIB)"
                                                   : " (share/causeway/rules beside the binary)",
                    how));
  const std::string root = canonical_path(dir);
  std::vector<std::string> packs;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory() || entry.path().extension() == ".cw")
      packs.push_back(entry.path().string());
  if (packs.empty())
    throw MissingPacksError(fmt::format(
        "causeway: the standard rule packs are missing: {} holds no pack; {}", dir, how));
  std::sort(packs.begin(), packs.end());
  return packs;
}

}  // namespace

PackPaths pack_paths(const std::vector<std::string>& user_paths, bool no_stdlib) {
  std::vector<std::string> users;
  for (const auto& p : user_paths) users.push_back(canonical_path(p));

  PackPaths out;
  if (!no_stdlib) {
    for (const auto& pack : standard_packs()) {
      bool covered = std::any_of(users.begin(), users.end(), [&](const std::string& u) {
        return path_within(u, pack) || path_within(pack, u);
      });
      if (!covered) out.standard.push_back(pack);
    }
  }
  if (const char* env = std::getenv("CAUSEWAY_RULES_PATH"); env && *env) {
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ':');)
      if (!item.empty()) out.added.push_back(item);
  }
  out.added.insert(out.added.end(), user_paths.begin(), user_paths.end());
  return out;
}

rules::LoadResult load_rule_packs(const std::vector<std::string>& user_paths, bool no_stdlib) {
  PackPaths paths = pack_paths(user_paths, no_stdlib);
  return rules::load_packs(paths.standard, paths.added);
}

}  // namespace cw::session
