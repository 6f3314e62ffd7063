// One x86-64 ELF file as instrumentation sees it: its symbols, the file bytes behind an
// address, its code, the GOT slots that hold a symbol's address, and where a running
// process mapped it. The file is mapped read-only for the image's lifetime.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cw::instrument {

struct ElfSymbol {
  std::string name;
  uint64_t vaddr = 0, size = 0;
  bool function = false, object = false;
  bool global = false;  // STB_GLOBAL or STB_WEAK: the name other files use
};

class ElfImage {
 public:
  // nullptr with `*error` saying what is wrong ("PATH: not an ELF file") when the file
  // cannot be read or is not a 64-bit x86 ELF file.
  static std::unique_ptr<ElfImage> open(const std::string& path, std::string* error);
  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  const std::string& path() const { return path_; }
  bool position_independent() const { return position_independent_; }  // ET_DYN
  // .symtab, then .dynsym; defined functions and objects only.
  std::optional<ElfSymbol> find_symbol(std::string_view name) const;
  // The function or object covering vaddr (a global name before a local alias), or null.
  const ElfSymbol* symbol_at(uint64_t vaddr) const;
  // The start of the first function symbol after vaddr, or nullopt.
  std::optional<uint64_t> next_function(uint64_t vaddr) const;
  // Via the PT_LOAD whose file bytes hold vaddr.
  std::optional<uint64_t> file_offset(uint64_t vaddr) const;
  // The file's bytes at [vaddr, vaddr+size); empty when not all of them are in the file.
  std::span<const uint8_t> bytes(uint64_t vaddr, uint64_t size) const;
  // Executable sections [vaddr, end) (executable PT_LOADs when there are no sections).
  std::vector<std::pair<uint64_t, uint64_t>> code_ranges() const;
  // GOT slots the dynamic loader fills with the symbol's address: GLOB_DAT and
  // R_X86_64_64 relocations naming it, and RELATIVE ones whose addend is its address
  // when this file defines it.
  std::vector<uint64_t> got_slots(std::string_view symbol) const;
  // The load bias of a mapping of this file seen in /proc/PID/maps at `map_start` with
  // file offset `map_file_offset`: runtime = vaddr + bias (0 for ET_EXEC). nullopt when
  // no PT_LOAD holds that offset.
  std::optional<uint64_t> load_bias(uint64_t map_start, uint64_t map_file_offset) const;
  // True when a PT_LOAD (memory size, .bss included) covers vaddr.
  bool contains(uint64_t vaddr) const;

 private:
  struct Segment {
    uint64_t vaddr = 0, memsz = 0, offset = 0, filesz = 0;
    bool executable = false;
  };
  struct GotSlot {
    std::string symbol;  // empty for RELATIVE slots
    uint64_t slot = 0, addend = 0;
  };

  ElfImage() = default;
  bool load(std::string* error);

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool position_independent_ = false;
  std::vector<Segment> segments_;
  std::vector<std::pair<uint64_t, uint64_t>> exec_sections_;
  std::vector<ElfSymbol> symbols_;  // by vaddr
  uint64_t largest_symbol_ = 0;
  std::unordered_map<std::string, size_t> by_name_;  // .symtab's when both tables name it
  std::vector<GotSlot> got_;
};

}  // namespace cw::instrument
