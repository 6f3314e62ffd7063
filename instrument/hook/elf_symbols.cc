#include "instrument/hook/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace cw::hook {
namespace {

constexpr size_t kMaxModules = 1024;

struct Module {
  const char* name;  // as the loader has it; "" for the executable
  uint64_t base;
};

struct Modules {
  Module list[kMaxModules];
  size_t count = 0;
};

int collect(dl_phdr_info* info, size_t, void* data) {
  auto* modules = static_cast<Modules*>(data);
  if (modules->count < kMaxModules)
    modules->list[modules->count++] = {info->dlpi_name ? info->dlpi_name : "",
                                       static_cast<uint64_t>(info->dlpi_addr)};
  return 0;
}

const char* file_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

bool module_matches(const char* path, const char* binary) {
  if (!binary) return true;
  if (strchr(binary, '/')) {
    if (strcmp(path, binary) == 0) return true;
    char real_path[PATH_MAX], real_binary[PATH_MAX];
    return realpath(path, real_path) && realpath(binary, real_binary) &&
           strcmp(real_path, real_binary) == 0;
  }
  return strcmp(file_name(path), binary) == 0;
}

struct Match {
  Lookup result = Lookup::kNotFound;
  uint64_t value = 0;
  uint64_t size = 0;
};

// Searches the symbol tables of type `table_type` in the mapped ELF file `image`.
void search_tables(const uint8_t* image, size_t length, uint32_t table_type, const char* name,
                   Match* match) {
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(image);
  if (ehdr->e_shentsize != sizeof(Elf64_Shdr) || ehdr->e_shoff > length ||
      ehdr->e_shnum > (length - ehdr->e_shoff) / sizeof(Elf64_Shdr))
    return;
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(image + ehdr->e_shoff);
  for (unsigned i = 0; i < ehdr->e_shnum; ++i) {
    const Elf64_Shdr& table = sections[i];
    if (table.sh_type != table_type || table.sh_link >= ehdr->e_shnum ||
        table.sh_entsize != sizeof(Elf64_Sym) || table.sh_offset > length ||
        table.sh_size > length - table.sh_offset)
      continue;
    const Elf64_Shdr& strings = sections[table.sh_link];
    if (strings.sh_offset > length || strings.sh_size > length - strings.sh_offset) continue;
    const char* names = reinterpret_cast<const char*>(image + strings.sh_offset);
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(image + table.sh_offset);
    const size_t count = table.sh_size / sizeof(Elf64_Sym);
    const size_t name_length = strlen(name);
    for (size_t s = 0; s < count; ++s) {
      const Elf64_Sym& symbol = symbols[s];
      const unsigned type = ELF64_ST_TYPE(symbol.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol.st_shndx == SHN_UNDEF ||
          symbol.st_value == 0 || symbol.st_name + name_length >= strings.sh_size ||
          memcmp(names + symbol.st_name, name, name_length + 1) != 0)
        continue;
      if (match->result == Lookup::kNotFound) {
        match->result = type == STT_GNU_IFUNC ? Lookup::kIfunc : Lookup::kFound;
        match->value = symbol.st_value;
        match->size = symbol.st_size;
      } else if (symbol.st_value != match->value) {
        match->result = Lookup::kAmbiguous;
        return;
      }
    }
  }
}

// Looks `name` up in the ELF file at `path`; .symtab first, .dynsym if .symtab lacks it.
Match search_file(const char* path, const char* name) {
  Match match;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return match;
  struct stat info {};
  if (fstat(fd, &info) != 0 || info.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    close(fd);
    return match;
  }
  const size_t length = static_cast<size_t>(info.st_size);
  void* memory = mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) return match;
  const auto* image = static_cast<const uint8_t*>(memory);
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(image);
  if (memcmp(ehdr->e_ident, ELFMAG, SELFMAG) == 0 && ehdr->e_ident[EI_CLASS] == ELFCLASS64) {
    search_tables(image, length, SHT_SYMTAB, name, &match);
    if (match.result == Lookup::kNotFound) search_tables(image, length, SHT_DYNSYM, name, &match);
  }
  munmap(memory, length);
  return match;
}

}  // namespace

Lookup find_function(const char* name, const char* binary, FoundFunction* out) {
  static Modules modules;  // large; lookups happen one at a time (the preload's constructor)
  modules.count = 0;
  dl_iterate_phdr(collect, &modules);
  for (size_t i = 0; i < modules.count; ++i) {
    char path[PATH_MAX];
    const char* open_path = modules.list[i].name;
    if (!*open_path) {
      // The executable: the loader has no name for it.
      ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
      if (n <= 0) continue;
      path[n] = '\0';
      open_path = path;
    }
    if (!module_matches(open_path, binary)) continue;
    const Match match = search_file(open_path, name);
    if (match.result == Lookup::kNotFound) continue;
    out->address = modules.list[i].base + match.value;
    out->size = match.size;
    strncpy(out->module, open_path, sizeof out->module - 1);
    out->module[sizeof out->module - 1] = '\0';
    return match.result;
  }
  return Lookup::kNotFound;
}

}  // namespace cw::hook
