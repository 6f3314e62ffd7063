// Where libcauseway-preload.so is, for the recorder to put in LD_PRELOAD.
#pragma once

#include <string>

namespace cw::hook {

inline constexpr const char* kPreloadLibraryName = "libcauseway-preload.so";

// $CAUSEWAY_PRELOAD when set (and "" if that file does not exist: an explicit choice does
// not fall back), else the first existing of: ../lib/causeway (installed), ../lib (the build
// tree) and lib next to /proc/self/exe, then ./lib. An absolute path, or "" when none exists.
std::string find_preload_library();

}  // namespace cw::hook
