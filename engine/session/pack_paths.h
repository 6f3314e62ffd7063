// Which packs a command loads: the standard packs (unless --no-stdlib), CAUSEWAY_RULES_PATH,
// then --rules in the order given (docs/rules.md "Load order").
#pragma once

#include <string>
#include <vector>

#include "engine/session/session_error.h"
#include "rules/loader.h"

namespace cw::session {

// The standard packs are missing or empty: the environment cannot do it. The text is
// "causeway: the standard rule packs are missing: …; <how to give them>".
struct MissingPacksError : SessionError {
  explicit MissingPacksError(const std::string& text) : SessionError(Kind::Environment, text) {}
};

// The folder of the standard packs: $CAUSEWAY_STDLIB, else share/causeway/rules under the
// binary's prefix (<exe>/../share/causeway/rules: /usr/share/causeway/rules when installed
// in /usr/bin; the build tree links build/share/causeway/rules to stdlib-rules). Never the
// source path the binary was built from. The folder may not exist.
std::string stdlib_dir();

// `path` made absolute and free of links where it exists; as given otherwise.
std::string canonical_path(const std::string& path);
// True when canonical path `inner` is `outer` or lies inside it.
bool path_within(const std::string& outer, const std::string& inner);

// A folder of packs on the search path, after the standard one: the user's
// ($XDG_DATA_HOME or ~/.local/share)/causeway/rules, then the project's .causeway/rules
// (in the current folder). `why` says why it is skipped when it is; else empty.
struct SearchFolder {
  std::string path;
  std::string why;  // "" when used
};

struct PackPaths {
  std::vector<std::string> standard;  // one entry per standard pack (folder or .cw file)
  // The packs of the search folders (search_folders()), CAUSEWAY_RULES_PATH, then the
  // user's paths.
  std::vector<std::string> added;
  std::vector<SearchFolder> skipped;  // search folders not used, with why
};

// The user's folder of packs, ($XDG_DATA_HOME or ~/.local/share)/causeway/rules, whether it
// exists or not; "" when neither variable names an absolute path.
std::string user_rules_dir();

// Why causeway would not load the packs of folder `path` (a link, not a folder, owned by
// another user, writable by others); "" when it would.
std::string untrusted(const std::string& path);

// Only folders that exist are listed. A folder is used only when it is not a link, is owned
// by the user running causeway or by root, and nobody else can write it (nor, for the
// project's, .causeway): causeway often runs as root, and a pack changes what it reports.
std::vector<SearchFolder> search_folders();

// The id in the header of the pack at `path` (a .cw file, or a folder's pack.cw); "" when
// it has none or cannot be read.
std::string header_id(const std::string& path);

// The packs in a folder of packs: its sub-folders and .cw files, sorted.
std::vector<std::string> packs_in(const std::string& folder);

// The packs to load. A pack of a search folder with the id of a pack in `user_paths` is
// left out (the user's replaces it). Standard packs that a user path already covers (the same
// folder, or one inside it) are not listed twice. Throws MissingPacksError when the standard packs
// are missing or hold no pack, unless `no_stdlib`.
PackPaths pack_paths(const std::vector<std::string>& user_paths, bool no_stdlib);

// Ids of the loaded packs whose files lie in `paths` (a command's --rules), not those
// loaded beside them.
std::vector<std::string> packs_from(const rules::RuleSet& rules,
                                    const std::vector<std::string>& paths);

// Loads pack_paths(user_paths, no_stdlib): a user's pack with the id of a standard pack
// replaces it (rules::load_packs).
rules::LoadResult load_rule_packs(const std::vector<std::string>& user_paths, bool no_stdlib);

}  // namespace cw::session
