#include "cli/rule_paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace cw::cli {

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
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share/causeway/stdlib-rules";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return CW_STDLIB_DIR;
}

std::vector<std::string> pack_paths(const std::vector<std::string>& user_paths, bool no_stdlib) {
  std::vector<std::string> users;
  for (const auto& p : user_paths) users.push_back(canonical_path(p));

  std::vector<std::string> out;
  if (!no_stdlib) {
    const std::string root = canonical_path(stdlib_dir());
    std::error_code ec;
    std::vector<std::string> packs;
    for (const auto& entry : fs::directory_iterator(root, ec))
      if (entry.is_directory() || entry.path().extension() == ".cw")
        packs.push_back(entry.path().string());
    std::sort(packs.begin(), packs.end());
    for (const auto& pack : packs) {
      bool covered = std::any_of(users.begin(), users.end(), [&](const std::string& u) {
        return path_within(u, pack) || path_within(pack, u);
      });
      if (!covered) out.push_back(pack);
    }
  }
  if (const char* env = std::getenv("CAUSEWAY_RULES_PATH"); env && *env) {
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ':');)
      if (!item.empty()) out.push_back(item);
  }
  out.insert(out.end(), user_paths.begin(), user_paths.end());
  return out;
}

}  // namespace cw::cli
