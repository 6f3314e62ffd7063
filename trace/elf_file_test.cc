#include "trace/elf_file.h"

#include <doctest/doctest.h>

namespace cw {
namespace {

bool is_hex(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST_CASE("an ELF file opens and gives its build id; anything else gives none") {
  ElfFile self("/proc/self/exe");
  CHECK(self.elf() != nullptr);
  CHECK(is_hex(self.build_id()));
  CHECK(read_build_id("/proc/self/exe") == self.build_id());
  CHECK(ElfFile("/etc/hostname").elf() == nullptr);
  CHECK(ElfFile("/nonexistent/file").elf() == nullptr);
  CHECK(read_build_id("/etc/hostname").empty());
  CHECK(read_build_id("/nonexistent/file").empty());
}

}  // namespace
}  // namespace cw
