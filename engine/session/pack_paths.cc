#include "engine/session/pack_paths.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "dsl/parser.h"

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

std::vector<std::string> packs_in(const std::string& folder) {
  std::vector<std::string> packs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const bool dir = entry.is_directory(ec) && !entry.is_symlink(ec);
    if (dir || (entry.path().extension() == ".cw" && entry.is_regular_file(ec)))
      packs.push_back(entry.path().string());
  }
  std::sort(packs.begin(), packs.end());
  return packs;
}

// Checked on a descriptor opened without following a link, then the path must still name
// that folder.
std::string untrusted(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ELOOP || errno == ENOTDIR ? "a link or not a folder" : std::strerror(errno);
  struct stat st {};
  const bool stated = fstat(fd, &st) == 0;
  close(fd);
  if (!stated) return "cannot be examined";
  if (st.st_uid != geteuid() && st.st_uid != 0)
    return fmt::format("owned by uid {}, neither this user ({}) nor root", st.st_uid, geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "others can write it";
  struct stat now {};
  if (lstat(path.c_str(), &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino)
    return "it changed while it was examined";
  return "";
}

std::string user_rules_dir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg == '/')
    return std::string(xdg) + "/causeway/rules";
  if (const char* home = std::getenv("HOME"); home && *home == '/')
    return std::string(home) + "/.local/share/causeway/rules";
  return "";
}

std::vector<SearchFolder> search_folders() {
  std::vector<SearchFolder> out;
  std::error_code ec;
  if (const std::string user = user_rules_dir(); !user.empty()) {
    if (fs::exists(fs::symlink_status(user, ec))) out.push_back({user, untrusted(user)});
  }
  const std::string project = ".causeway/rules";
  if (fs::exists(fs::symlink_status(project, ec))) {
    std::string why = untrusted(".causeway");
    if (why.empty())
      why = untrusted(project);
    else
      why = ".causeway: " + why;
    out.push_back({canonical_path(".") + "/" + project, why});
  }
  return out;
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

std::string header_id(const std::string& path) {
  std::error_code ec;
  const fs::path file = fs::is_directory(path, ec) ? fs::path(path) / "pack.cw" : fs::path(path);
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  // A header is at the top; a pack file larger than this is read by the loader, which
  // bounds it.
  std::string text(64 * 1024, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  dsl::ParseResult parsed = dsl::parse(make_source(file.string(), text));
  return parsed.file.pack ? parsed.file.pack->id : "";
}

namespace {

// The ids of the packs at `paths` (packs, or folders of packs).
std::set<std::string> ids_at(const std::vector<std::string>& paths) {
  std::set<std::string> ids;
  std::error_code ec;
  for (const std::string& p : paths) {
    if (std::string id = header_id(p); !id.empty()) {
      ids.insert(id);
      continue;
    }
    if (fs::is_directory(p, ec))
      for (const std::string& inner : packs_in(p))
        if (std::string id = header_id(inner); !id.empty()) ids.insert(id);
  }
  return ids;
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
  // A pack the user gives replaces an installed copy of it (one being edited, then
  // installed again), as it replaces a standard pack.
  const std::set<std::string> given = ids_at(user_paths);
  for (const SearchFolder& folder : search_folders()) {
    if (!folder.why.empty()) {
      out.skipped.push_back(folder);
      continue;
    }
    for (const std::string& pack : packs_in(folder.path))
      if (given.empty() || !given.count(header_id(pack))) out.added.push_back(pack);
  }
  if (const char* env = std::getenv("CAUSEWAY_RULES_PATH"); env && *env) {
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ':');)
      if (!item.empty()) out.added.push_back(item);
  }
  out.added.insert(out.added.end(), user_paths.begin(), user_paths.end());
  return out;
}

std::vector<std::string> packs_from(const rules::RuleSet& rules,
                                    const std::vector<std::string>& paths) {
  std::vector<std::string> roots;
  for (const auto& p : paths) roots.push_back(canonical_path(p));
  std::vector<std::string> ids;
  for (const auto& pack : rules.packs) {
    const bool inside = std::any_of(pack.files.begin(), pack.files.end(), [&](const auto& f) {
      const std::string file = canonical_path(f);
      return std::any_of(roots.begin(), roots.end(),
                         [&](const std::string& r) { return path_within(r, file); });
    });
    if (inside) ids.push_back(pack.id);
  }
  return ids;
}

rules::LoadResult load_rule_packs(const std::vector<std::string>& user_paths, bool no_stdlib) {
  PackPaths paths = pack_paths(user_paths, no_stdlib);
  rules::LoadResult loaded = rules::load_packs(paths.standard, paths.added);
  for (const SearchFolder& folder : paths.skipped)
    loaded.diagnostics.push_back(
        {Severity::Warning,
         make_source(folder.path, ""),
         {},
         1,
         fmt::format("the packs of this folder are not loaded: {}", folder.why),
         {"only folders that are no links, owned by this user or root and writable by nobody "
          "else are searched (docs/rules.md \"Where packs are found\")"}});
  return loaded;
}

}  // namespace cw::session
