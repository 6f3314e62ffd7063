#include "cli/cache_session.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "engine/cache/cache.h"

namespace cw::cli {

CacheSession CacheSession::open(const std::string& trace_path, const std::string& format,
                                bool no_cache) {
  CacheSession s;
  s.trace_path = trace_path;
  s.format = format;
  const char* env = std::getenv("CAUSEWAY_CACHE");
  s.verbose = isatty(STDERR_FILENO) != 0 || (env && std::string_view(env) == "verbose");
  if (no_cache || !cache::enabled_by_environment()) return s;
  auto key = cache::trace_key(trace_path);
  if (!key) return s;
  auto dir = cache::cache_dir(trace_path);
  if (!dir) {
    s.note("no writable cache folder beside the trace or under ~/.cache; not caching");
    return s;
  }
  s.trace_key = *key;
  s.dir = *dir;
  s.on = true;
  return s;
}

void CacheSession::note(const std::string& text) const {
  // One write: a background save may note while the command prints.
  if (verbose) std::cerr << "causeway: cache: " + text + "\n";
}

CLI::Option* add_no_cache_option(CLI::App* cmd, bool& no_cache) {
  return cmd->add_flag("--no-cache", no_cache,
                       "neither use nor write the cache beside the trace of its decoded events "
                       "and built graphs (TRACE.cwcache/, docs/cache.md; also "
                       "CAUSEWAY_CACHE=off)");
}

}  // namespace cw::cli
