#include "trace/symbolize.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

#include "trace/elf_file.h"

namespace cw {

namespace {

// Mappings start at page boundaries; ld.so maps a segment from its page-aligned offset.
constexpr uint64_t kPage = 4096;
uint64_t page_down(uint64_t v) {
  return v & ~(kPage - 1);
}

struct Segment {
  uint64_t offset = 0, vaddr = 0, filesz = 0;
  bool exec = false;
};

struct Symbol {
  uint64_t addr = 0, size = 0;
  uint32_t name_at = 0, name_size = 0;  // in ElfInfo::names
  uint8_t underscores = 0;              // leading '_' count
  uint8_t binding_rank = 0;             // global 0, weak 1, local 2
};

// What symbolisation needs from one ELF file, read once and then closed.
struct ElfInfo {
  std::string build_id;
  std::vector<Segment> loads;
  std::vector<Symbol> symtab, dynsym;  // functions, sorted by address, one per address
  std::string names;

  std::string_view name(const Symbol& s) const { return {names.data() + s.name_at, s.name_size}; }

  // The function holding `vaddr` in `table`, or nullptr.
  static const Symbol* find(const std::vector<Symbol>& table, uint64_t vaddr) {
    auto it = std::upper_bound(table.begin(), table.end(), vaddr,
                               [](uint64_t v, const Symbol& s) { return v < s.addr; });
    // A few steps back cover a small function nested in a larger one's range.
    for (int steps = 0; it != table.begin() && steps < 16; ++steps) {
      --it;
      if (vaddr - it->addr < std::max<uint64_t>(it->size, 1)) return &*it;
    }
    return nullptr;
  }
};

void read_symbol_table(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, ElfInfo& info,
                       std::vector<Symbol>& table) {
  Elf_Data* data = ::elf_getdata(scn, nullptr);
  if (!data || shdr.sh_entsize == 0) return;
  const size_t count = shdr.sh_size / shdr.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (!::gelf_getsym(data, static_cast<int>(i), &sym)) break;  // past the data: a bad size
    int type = GELF_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
        sym.st_value == 0)
      continue;
    const char* raw = ::elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (!raw || !*raw) continue;
    // "clock_nanosleep@@GLIBC_2.17" in a .symtab names the same function as the .dynsym's
    // "clock_nanosleep"; rules match the plain name.
    std::string_view name(raw);
    name = name.substr(0, name.find('@'));
    if (name.empty() || name.size() > 0xffffffu) continue;
    Symbol s;
    s.addr = sym.st_value;
    s.size = sym.st_size;
    s.name_at = static_cast<uint32_t>(info.names.size());
    s.name_size = static_cast<uint32_t>(name.size());
    s.underscores = static_cast<uint8_t>(std::min<size_t>(name.find_first_not_of('_'), 255));
    int binding = GELF_ST_BIND(sym.st_info);
    s.binding_rank = binding == STB_GLOBAL ? 0 : binding == STB_WEAK ? 1 : 2;
    if (info.names.size() + name.size() > 0xffffffffu) break;
    info.names += name;
    table.push_back(s);
  }
  // Aliases share an address; the one kept is the name a person would write: fewest
  // leading underscores ("nanosleep" over "__nanosleep"), then global over weak over
  // local, then the shortest, then alphabetical (so the choice is stable).
  std::sort(table.begin(), table.end(), [&](const Symbol& a, const Symbol& b) {
    if (a.addr != b.addr) return a.addr < b.addr;
    if (a.underscores != b.underscores) return a.underscores < b.underscores;
    if (a.binding_rank != b.binding_rank) return a.binding_rank < b.binding_rank;
    if (a.name_size != b.name_size) return a.name_size < b.name_size;
    return info.name(a) < info.name(b);
  });
  std::vector<Symbol> unique;
  for (const Symbol& s : table) {
    if (!unique.empty() && unique.back().addr == s.addr)
      unique.back().size = std::max(unique.back().size, s.size);
    else
      unique.push_back(s);
  }
  table = std::move(unique);
}

// nullptr when the file cannot be opened or is not ELF.
std::unique_ptr<ElfInfo> read_elf(const std::string& path) {
  ElfFile file(path);
  Elf* elf = file.elf();
  std::unique_ptr<ElfInfo> info;
  GElf_Ehdr ehdr;
  if (elf && ::gelf_getehdr(elf, &ehdr)) {
    info = std::make_unique<ElfInfo>();
    info->build_id = file.build_id();
    size_t phnum = 0;
    if (::elf_getphdrnum(elf, &phnum) == 0) {
      for (size_t i = 0; i < phnum; ++i) {
        GElf_Phdr phdr;
        if (!::gelf_getphdr(elf, static_cast<int>(i), &phdr) || phdr.p_type != PT_LOAD) continue;
        info->loads.push_back(
            Segment{phdr.p_offset, phdr.p_vaddr, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
      }
    }
    for (Elf_Scn* scn = ::elf_nextscn(elf, nullptr); scn; scn = ::elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (!::gelf_getshdr(scn, &shdr)) continue;
      if (shdr.sh_type == SHT_SYMTAB && info->symtab.empty())
        read_symbol_table(elf, scn, shdr, *info, info->symtab);
      else if (shdr.sh_type == SHT_DYNSYM && info->dynsym.empty())
        read_symbol_table(elf, scn, shdr, *info, info->dynsym);
    }
  }
  return info;
}

// A mapped file as symbolisation sees it: where its segments lie, and which symbol table
// names its functions (possibly from its separate debug file).
struct ResolvedFile {
  const ElfInfo* layout = nullptr;   // program headers giving file offset -> address
  bool exact_layout = true;          // false: only a debug file, whose offsets are rewritten
  const ElfInfo* symbols = nullptr;  // owner of `table`
  const std::vector<Symbol>* table = nullptr;
  std::unordered_map<const Symbol*, StrId> interned;

  // The link-time address of file offset `offset` in a mapping [start, ...) of `pgoff`.
  bool address_of(uint64_t offset, uint64_t pgoff, uint64_t& vaddr) const {
    if (exact_layout) {
      for (const Segment& s : layout->loads) {
        if (offset >= page_down(s.offset) && offset < s.offset + s.filesz) {
          vaddr = s.vaddr + offset - s.offset;  // wraps correctly in the page before s.offset
          return true;
        }
      }
      return false;
    }
    // A debug file keeps each segment's address but not its file offset; an executable
    // mapping is its text segment, mapped from the segment's first page.
    for (const Segment& s : layout->loads) {
      if (!s.exec) continue;
      vaddr = page_down(s.vaddr) + (offset - pgoff);
      return true;
    }
    return false;
  }
};

std::string demangle(std::string_view name) {
  std::string text(name);
  if (!name.starts_with("_Z")) return text;
  int status = 0;
  char* plain = abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status);
  if (status == 0 && plain) text = plain;
  std::free(plain);
  return text;
}

class Symbolizer {
 public:
  Symbolizer(Trace& trace, const SymbolizeOptions& options) : trace_(trace), options_(options) {
    ::elf_version(EV_CURRENT);
    index_maps();
  }

  SymbolizeReport run() {
    // Each stack belongs to one process; the first event using it gives its pid and time.
    const size_t n = trace_.stacks.size();
    std::vector<char> seen(n, 0);
    std::vector<Pid> pid(n, 0);
    std::vector<uint64_t> ts(n, 0);
    for (const Event& e : trace_.events) {
      if (e.stack == 0 || e.stack >= n || seen[e.stack]) continue;
      seen[e.stack] = 1;
      pid[e.stack] = trace_.pid_of(e.tid);
      ts[e.stack] = e.ts;
    }
    for (StackId id = 1; id < n; ++id) {
      Stack& stack = trace_.stacks[id];
      if (!stack.symbols.empty() || stack.ips.empty()) continue;
      if (!seen[id]) {
        ++report_.stacks_unused;
        continue;
      }
      std::vector<StrId> symbols(stack.ips.size(), 0);
      bool any = false;
      for (size_t f = 0; f < stack.ips.size(); ++f) {
        // Outer frames hold return addresses: the instruction after the call. Looking up
        // ip - 1 lands inside the call, which matters when the call was the function's
        // last instruction (a noreturn callee) and ip is already the next function.
        uint64_t ip = stack.ips[f];
        uint64_t lookup = f == 0 || ip == 0 ? ip : ip - 1;
        symbols[f] = resolve(pid[id], ts[id], lookup);
        if (symbols[f]) {
          ++report_.frames_resolved;
          any = true;
        } else {
          ++report_.frames_unresolved;
        }
      }
      if (any) {
        stack.symbols = std::move(symbols);
        ++report_.stacks_symbolized;
      }
    }
    report_.files_not_found.assign(not_found_.begin(), not_found_.end());
    for (auto& [pid, files] : not_found_by_pid_)
      report_.files_not_found_by_pid[pid].assign(files.begin(), files.end());
    return std::move(report_);
  }

 private:
  void index_maps() {
    by_pid_.reserve(trace_.maps.size());
    for (const MapRecord& m : trace_.maps) by_pid_.push_back(&m);
    std::stable_sort(by_pid_.begin(), by_pid_.end(), [](const MapRecord* a, const MapRecord* b) {
      return a->pid != b->pid ? a->pid < b->pid : a->ts < b->ts;
    });
    for (size_t i = 0; i < by_pid_.size();) {
      size_t j = i;
      while (j < by_pid_.size() && by_pid_[j]->pid == by_pid_[i]->pid) ++j;
      ranges_[by_pid_[i]->pid] = {i, j};
      i = j;
    }
  }

  // The latest map of `pid` recorded at or before `ts` that covers `ip`; for a process
  // with none, its parent's (a forked child inherits mappings no one reported for it).
  const MapRecord* find_map(Pid pid, uint64_t ts, uint64_t ip) const {
    for (int depth = 0; depth < 8 && pid != 0; ++depth) {
      if (auto it = ranges_.find(pid); it != ranges_.end()) {
        auto first = by_pid_.begin() + static_cast<std::ptrdiff_t>(it->second.first);
        auto last = by_pid_.begin() + static_cast<std::ptrdiff_t>(it->second.second);
        auto end = std::upper_bound(first, last, ts,
                                    [](uint64_t t, const MapRecord* m) { return t < m->ts; });
        for (auto m = end; m != first;) {
          --m;
          if (ip >= (*m)->start && ip < (*m)->end) return *m;
        }
      }
      const ProcessInfo* process = trace_.process(pid);
      if (!process || process->ppid == pid) break;
      pid = process->ppid;
    }
    return nullptr;
  }

  StrId resolve(Pid pid, uint64_t ts, uint64_t ip) {
    if (ip == 0) return 0;
    const MapRecord* map = find_map(pid, ts, ip);
    if (!map) {
      ++report_.frames_outside_maps;
      return 0;
    }
    ResolvedFile* file = resolve_file(map->path, map->build_id);
    if (!file) {
      const std::string_view path = trace_.strings.get(map->path);
      const std::string_view build_id = trace_.strings.get(map->build_id);
      not_found_by_pid_[pid].insert(
          build_id.empty() ? std::string(path) : fmt::format("{} (build id {})", path, build_id));
    }
    if (!file || !file->table) return 0;
    uint64_t vaddr = 0;
    if (!file->address_of(ip - map->start + map->pgoff, map->pgoff, vaddr)) return 0;
    const Symbol* symbol = ElfInfo::find(*file->table, vaddr);
    if (!symbol) return 0;
    auto [it, added] = file->interned.emplace(symbol, 0);
    if (added) it->second = trace_.strings.intern(demangle(file->symbols->name(*symbol)));
    return it->second;
  }

  const ElfInfo* elf(const std::string& path) {
    auto [it, added] = elves_.try_emplace(path);
    if (added) it->second = read_elf(path);
    return it->second.get();
  }

  ResolvedFile* resolve_file(StrId path_id, StrId build_id_id) {
    auto key = std::make_pair(path_id, build_id_id);
    auto [it, added] = files_.try_emplace(key);
    if (!added) return it->second.get();
    std::string path(trace_.strings.get(path_id));
    std::string build_id(trace_.strings.get(build_id_id));
    const ElfInfo* code = elf(path);
    // A different file at the same path (upgraded since the recording) would name the
    // wrong functions.
    if (code && !build_id.empty() && code->build_id != build_id) code = nullptr;
    std::string id = !build_id.empty() ? build_id : code ? code->build_id : std::string();
    const ElfInfo* debug = nullptr;
    if (id.size() > 2)
      debug = elf(fmt::format("{}/.build-id/{}/{}.debug", options_.debug_dir, id.substr(0, 2),
                              id.substr(2)));
    if (debug && !debug->build_id.empty() && debug->build_id != id) debug = nullptr;
    if (!code && !debug) {
      not_found_.insert(build_id.empty() ? path : fmt::format("{} (build id {})", path, build_id));
      return nullptr;
    }
    auto file = std::make_unique<ResolvedFile>();
    file->layout = code ? code : debug;
    file->exact_layout = code != nullptr;
    for (auto [owner, table] : {std::pair{code, code ? &code->symtab : nullptr},
                                {debug, debug ? &debug->symtab : nullptr},
                                {code, code ? &code->dynsym : nullptr},
                                {debug, debug ? &debug->dynsym : nullptr}}) {
      if (owner && !table->empty()) {
        file->symbols = owner;
        file->table = table;
        break;
      }
    }
    it->second = std::move(file);
    return it->second.get();
  }

  struct PairHash {
    size_t operator()(const std::pair<StrId, StrId>& p) const {
      return std::hash<uint64_t>()((uint64_t{p.first} << 32) | p.second);
    }
  };

  Trace& trace_;
  const SymbolizeOptions& options_;
  SymbolizeReport report_;
  std::vector<const MapRecord*> by_pid_;
  std::unordered_map<Pid, std::pair<size_t, size_t>> ranges_;
  std::unordered_map<std::string, std::unique_ptr<ElfInfo>> elves_;
  std::unordered_map<std::pair<StrId, StrId>, std::unique_ptr<ResolvedFile>, PairHash> files_;
  std::set<std::string> not_found_;
  std::map<Pid, std::set<std::string>> not_found_by_pid_;
};

}  // namespace

SymbolizeReport symbolize_stacks(Trace& trace, const SymbolizeOptions& options) {
  return Symbolizer(trace, options).run();
}

}  // namespace cw
