#include "instrument/hook/preload_path.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace cw::hook {

std::string find_preload_library() {
  namespace fs = std::filesystem;
  std::error_code error;
  auto existing = [&](const fs::path& path) -> std::string {
    if (!fs::is_regular_file(path, error) || access(path.c_str(), R_OK) != 0) return {};
    return fs::canonical(path, error).string();
  };
  if (const char* chosen = std::getenv("CAUSEWAY_PRELOAD"); chosen && *chosen)
    return existing(chosen);
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const char* dir : {"../lib/causeway", "../lib", "lib"})
      if (std::string found = existing(exe.parent_path() / dir / kPreloadLibraryName);
          !found.empty())
        return found;
  }
  return existing(fs::current_path(error) / "lib" / kPreloadLibraryName);
}

}  // namespace cw::hook
