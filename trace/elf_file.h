// An ELF file opened with libelf (read in place, closed with the object), and its GNU
// build id: what symbolisation (trace/symbolize.h) and the recorder's memory-map capture
// (recorder/maps_capture.h) read from mapped files. instrument/elf_image.h keeps its own
// mapping: it hands out the file's bytes to the decoder; the preload library
// (instrument/hook/) keeps its own reader, as it may not use libelf.
#pragma once

#include <libelf.h>

#include <string>

namespace cw {

class ElfFile {
 public:
  // elf() is null when the file cannot be opened or is not ELF.
  explicit ElfFile(const std::string& path);
  ~ElfFile();
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  Elf* elf() const { return elf_; }
  // The GNU build id as lowercase hex, or "" when it has none.
  std::string build_id() const;

 private:
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

// The GNU build id of an ELF file as lowercase hex, or "" when it has none, is not ELF or
// cannot be opened.
std::string read_build_id(const std::string& path);

}  // namespace cw
