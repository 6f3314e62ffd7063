#include "instrument/elf_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace cw::instrument {
namespace {

constexpr uint64_t kPage = 4096;

bool fail(std::string* error, const std::string& message) {
  if (error) *error = message;
  return false;
}

// Leading underscores mark internal aliases (__GI_foo, _foo): fewer reads better.
size_t underscores(const std::string& name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

// Orders names for one address: sized before zero-sized, global before local, fewer
// leading underscores, then shorter.
bool better_name(const ElfSymbol& a, const ElfSymbol& b) {
  if ((a.size != 0) != (b.size != 0)) return a.size != 0;
  if (a.global != b.global) return a.global;
  if (underscores(a.name) != underscores(b.name)) return underscores(a.name) < underscores(b.name);
  return a.name.size() < b.name.size();
}

}  // namespace

std::unique_ptr<ElfImage> ElfImage::open(const std::string& path, std::string* error) {
  std::unique_ptr<ElfImage> image(new ElfImage());
  image->path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fail(error, path + ": cannot open: " + strerror(errno));
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    ::close(fd);
    fail(error, path + ": not a regular, non-empty file");
    return nullptr;
  }
  void* mapped = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) {
    fail(error, path + ": cannot map: " + strerror(errno));
    return nullptr;
  }
  image->data_ = static_cast<const uint8_t*>(mapped);
  image->size_ = static_cast<size_t>(st.st_size);
  if (!image->load(error)) return nullptr;
  return image;
}

ElfImage::~ElfImage() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

bool ElfImage::load(std::string* error) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_memory(reinterpret_cast<char*>(const_cast<uint8_t*>(data_)), size_);
  struct Closer {
    Elf* elf;
    ~Closer() {
      if (elf) elf_end(elf);
    }
  } closer{elf};
  GElf_Ehdr ehdr;
  if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
    return fail(error, path_ + ": not an ELF file");
  if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64)
    return fail(
        error, path_ + ": not an x86-64 ELF file (machine " + std::to_string(ehdr.e_machine) + ")");
  position_independent_ = ehdr.e_type == ET_DYN;

  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return fail(error, path_ + ": unreadable program headers");
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    if (ph.p_offset > size_ || ph.p_filesz > size_ - ph.p_offset)
      return fail(error, path_ + ": PT_LOAD " + std::to_string(i) + " at file offset " +
                             std::to_string(ph.p_offset) + " runs past the end of the file");
    segments_.push_back(
        {ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, (ph.p_flags & PF_X) != 0});
  }

  struct Relocations {
    Elf_Scn* scn;
    GElf_Shdr shdr;
  };
  std::vector<Relocations> relocation_sections;
  for (int pass = 0; pass < 2; ++pass) {  // .symtab first, so its names win
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr)) continue;
      if (pass == 0 && shdr.sh_type == SHT_PROGBITS && (shdr.sh_flags & SHF_EXECINSTR) &&
          (shdr.sh_flags & SHF_ALLOC) && shdr.sh_size > 0)
        exec_sections_.emplace_back(shdr.sh_addr, shdr.sh_addr + shdr.sh_size);
      if (pass == 0 && shdr.sh_type == SHT_RELA) relocation_sections.push_back({scn, shdr});
      if (shdr.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) || shdr.sh_entsize == 0) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (!data) continue;
      const size_t count = shdr.sh_size / shdr.sh_entsize;
      for (size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
        const int type = GELF_ST_TYPE(sym.st_info);
        if (sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS) continue;
        if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC) continue;
        const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (!name || !*name) continue;
        ElfSymbol s;
        s.name = name;
        s.vaddr = sym.st_value;
        s.size = sym.st_size;
        s.function = type != STT_OBJECT;
        s.object = type == STT_OBJECT;
        s.global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
        if (pass == 1 && by_name_.count(s.name)) continue;  // .symtab already has it
        by_name_.emplace(s.name, symbols_.size());
        largest_symbol_ = std::max(largest_symbol_, s.size);
        symbols_.push_back(std::move(s));
      }
    }
  }
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const ElfSymbol& a, const ElfSymbol& b) { return a.vaddr < b.vaddr; });
  // Index by name after sorting; of same-named locals (statics of two files) a global wins.
  by_name_.clear();
  for (size_t i = 0; i < symbols_.size(); ++i) {
    auto [it, inserted] = by_name_.emplace(symbols_[i].name, i);
    if (!inserted && symbols_[i].global && !symbols_[it->second].global) it->second = i;
  }

  for (const Relocations& r : relocation_sections) {
    Elf_Data* data = elf_getdata(r.scn, nullptr);
    if (!data || r.shdr.sh_entsize == 0) continue;
    Elf_Scn* symtab = elf_getscn(elf, r.shdr.sh_link);
    GElf_Shdr symtab_shdr;
    Elf_Data* symbols = symtab ? elf_getdata(symtab, nullptr) : nullptr;
    if (symtab && !gelf_getshdr(symtab, &symtab_shdr)) symbols = nullptr;
    const size_t count = r.shdr.sh_size / r.shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Rela rela;
      if (!gelf_getrela(data, static_cast<int>(i), &rela)) break;
      const uint64_t type = GELF_R_TYPE(rela.r_info);
      if (type == R_X86_64_RELATIVE) {
        got_.push_back({"", rela.r_offset, static_cast<uint64_t>(rela.r_addend)});
        continue;
      }
      if (type != R_X86_64_GLOB_DAT && type != R_X86_64_64) continue;
      GElf_Sym sym;
      if (!symbols || !gelf_getsym(symbols, static_cast<int>(GELF_R_SYM(rela.r_info)), &sym))
        continue;
      const char* name = elf_strptr(elf, symtab_shdr.sh_link, sym.st_name);
      if (name && *name) got_.push_back({name, rela.r_offset, 0});
    }
  }
  return true;
}

std::optional<ElfSymbol> ElfImage::find_symbol(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return symbols_[it->second];
}

const ElfSymbol* ElfImage::symbol_at(uint64_t vaddr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const ElfSymbol& s) { return v < s.vaddr; });
  const ElfSymbol* best = nullptr;
  while (it != symbols_.begin()) {
    --it;
    if (vaddr - it->vaddr > largest_symbol_) break;  // nothing further back is big enough
    const bool covers = it->size == 0 ? it->vaddr == vaddr : vaddr < it->vaddr + it->size;
    if (covers && (!best || better_name(*it, *best))) best = &*it;
  }
  return best;
}

std::optional<uint64_t> ElfImage::next_function(uint64_t vaddr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const ElfSymbol& s) { return v < s.vaddr; });
  for (; it != symbols_.end(); ++it)
    if (it->function) return it->vaddr;
  return std::nullopt;
}

std::optional<uint64_t> ElfImage::file_offset(uint64_t vaddr) const {
  for (const Segment& s : segments_)
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) return s.offset + (vaddr - s.vaddr);
  return std::nullopt;
}

std::span<const uint8_t> ElfImage::bytes(uint64_t vaddr, uint64_t size) const {
  for (const Segment& s : segments_) {
    if (vaddr < s.vaddr || vaddr - s.vaddr >= s.filesz) continue;
    if (size > s.filesz - (vaddr - s.vaddr)) return {};
    return {data_ + s.offset + (vaddr - s.vaddr), static_cast<size_t>(size)};
  }
  return {};
}

std::vector<std::pair<uint64_t, uint64_t>> ElfImage::code_ranges() const {
  if (!exec_sections_.empty()) return exec_sections_;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const Segment& s : segments_)
    if (s.executable && s.filesz > 0) ranges.emplace_back(s.vaddr, s.vaddr + s.filesz);
  return ranges;
}

std::vector<uint64_t> ElfImage::got_slots(std::string_view symbol) const {
  std::optional<ElfSymbol> defined = find_symbol(symbol);
  std::vector<uint64_t> slots;
  for (const GotSlot& g : got_) {
    const bool named = !g.symbol.empty() && g.symbol == symbol;
    const bool relative = g.symbol.empty() && defined && g.addend == defined->vaddr;
    if (named || relative) slots.push_back(g.slot);
  }
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return slots;
}

std::optional<uint64_t> ElfImage::load_bias(uint64_t map_start, uint64_t map_file_offset) const {
  for (const Segment& s : segments_) {
    const uint64_t first_page = s.offset & ~(kPage - 1);
    if (map_file_offset < first_page ||
        map_file_offset >= s.offset + std::max<uint64_t>(s.filesz, 1))
      continue;
    // The mapping puts file offset O at map_start + (O - map_file_offset); the segment's
    // vaddr V sits at file offset s.offset + (V - s.vaddr).
    return map_start + (s.offset - map_file_offset) - s.vaddr;
  }
  return std::nullopt;
}

bool ElfImage::contains(uint64_t vaddr) const {
  for (const Segment& s : segments_)
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.memsz) return true;
  return false;
}

}  // namespace cw::instrument
