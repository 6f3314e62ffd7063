#include "recorder/blocked_call.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace cw {

std::optional<BlockedCall> blocked_call(const std::string& task_dir) {
  std::ifstream in(task_dir + "/syscall");
  std::string nr;
  if (!(in >> nr) || nr == "running" || nr.empty() || nr[0] == '-') return std::nullopt;
  BlockedCall call;
  call.nr = static_cast<uint32_t>(std::strtoul(nr.c_str(), nullptr, 10));
  for (uint64_t& arg : call.args) {
    std::string text;
    if (!(in >> text)) return std::nullopt;
    arg = std::strtoull(text.c_str(), nullptr, 16);
  }
  return call;
}

std::vector<uint32_t> numeric_entries(const std::string& dir) {
  std::vector<uint32_t> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    unsigned long v = std::strtoul(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') out.push_back(static_cast<uint32_t>(v));
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace cw
