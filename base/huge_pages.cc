#include "base/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cw {
namespace {
// Set for the restarted process: GLIBC_TUNABLES as it was, after a "=" (empty: not set).
constexpr const char* kRestarted = "CAUSEWAY_HUGE_PAGES_RESTARTED";
constexpr const char* kTunable = "glibc.malloc.hugetlb";
bool restarted = false;

void put_back(const std::string& saved) {
  if (saved.empty())
    unsetenv("GLIBC_TUNABLES");
  else
    setenv("GLIBC_TUNABLES", saved.c_str() + 1, 1);
}
}  // namespace

bool huge_pages_on_request(std::string_view setting) {
  return setting.find("[madvise]") != std::string_view::npos;
}

std::string tunables_with_huge_pages(const char* current) {
  if (current == nullptr || *current == '\0') return std::string(kTunable) + "=1";
  if (std::strstr(current, kTunable) != nullptr) return {};
  return std::string(current) + ":" + kTunable + "=1";
}

void restart_with_huge_pages(char** argv) {
  if (const char* original = getenv(kRestarted)) {
    const std::string saved = original;  // unsetenv below frees the string getenv returned
    unsetenv(kRestarted);
    put_back(saved);
    restarted = true;
    return;
  }
  if (const char* no = getenv("CAUSEWAY_NO_HUGE_PAGES"); no && *no && std::strcmp(no, "0") != 0)
    return;
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::stringstream setting;
  setting << thp.rdbuf();
  if (!thp || !huge_pages_on_request(setting.str())) return;
  const char* current = getenv("GLIBC_TUNABLES");
  const std::string wanted = tunables_with_huge_pages(current);
  if (wanted.empty()) return;
  const std::string saved = current ? std::string("=") + current : std::string();
  setenv(kRestarted, saved.c_str(), 1);
  setenv("GLIBC_TUNABLES", wanted.c_str(), 1);
  execv("/proc/self/exe", argv);
  unsetenv(kRestarted);  // not restarted (no /proc): run as is
  put_back(saved);
}

bool restarted_with_huge_pages() {
  return restarted;
}

}  // namespace cw
