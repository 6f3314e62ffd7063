#include "trace/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>

namespace cw {

ElfFile::ElfFile(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return;
  ::elf_version(EV_CURRENT);
  elf_ = ::elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
  if (elf_ && ::elf_kind(elf_) != ELF_K_ELF) {
    ::elf_end(elf_);
    elf_ = nullptr;
  }
}

ElfFile::~ElfFile() {
  if (elf_) ::elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

std::string ElfFile::build_id() const {
  if (!elf_) return {};
  const void* id = nullptr;
  ssize_t n = ::dwelf_elf_gnu_build_id(elf_, &id);
  if (n <= 0 || !id) return {};
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const uint8_t*>(id);
  std::string hex;
  hex.reserve(2 * static_cast<size_t>(n));
  for (ssize_t i = 0; i < n; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 15];
  }
  return hex;
}

std::string read_build_id(const std::string& path) {
  return ElfFile(path).build_id();
}

}  // namespace cw
