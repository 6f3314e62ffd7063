// Which packs a command loads: stdlib-rules (unless --no-stdlib), CAUSEWAY_RULES_PATH,
// then --rules in the order given (docs/rules.md "Load order").
#pragma once

#include <string>
#include <vector>

namespace cw::cli {

// The stdlib-rules folder: $CAUSEWAY_STDLIB, else next to the binary's install prefix
// (../share/causeway/stdlib-rules), else the source tree this binary was built from.
std::string stdlib_dir();

// `path` made absolute and free of links where it exists; as given otherwise.
std::string canonical_path(const std::string& path);
// True when canonical path `inner` is `outer` or lies inside it.
bool path_within(const std::string& outer, const std::string& inner);

// The full ordered list of pack paths to load. Stdlib packs that a user path already
// covers (the same folder, or one inside it) are not loaded twice.
std::vector<std::string> pack_paths(const std::vector<std::string>& user_paths, bool no_stdlib);

}  // namespace cw::cli
