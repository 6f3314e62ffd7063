#include "trace/symbolize.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

#include "trace/elf_file.h"
#include "trace/jit_symbols.h"

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

// Program headers of a mapped file: file offset -> link-time address.
std::vector<Segment> read_loads(Elf* elf) {
  std::vector<Segment> loads;
  size_t phnum = 0;
  if (!elf || ::elf_getphdrnum(elf, &phnum) != 0) return loads;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (!::gelf_getphdr(elf, static_cast<int>(i), &phdr) || phdr.p_type != PT_LOAD) continue;
    loads.push_back(
        Segment{phdr.p_offset, phdr.p_vaddr, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
  }
  return loads;
}

std::string demangle(std::string_view name) {
  std::string text(name);
  if (!name.starts_with("_Z")) return text;
  int status = 0;
  char* plain = abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status);
  if (status == 0 && plain) text = plain;
  std::free(plain);
  return text;
}

// The path of the separate debug file of build id `id` under `dir`.
std::string debug_file_path(const std::string& dir, const std::string& id) {
  return fmt::format("{}/.build-id/{}/{}.debug", dir, id.substr(0, 2), id.substr(2));
}

// What a module's find_debuginfo callback needs (the module's user data).
struct DebugLookup {
  std::string path;  // the separate debug file, "" when there is none
};

// libdwfl asks for the separate debug file only when the main file has no DWARF. It is
// the file named by the build id under SymbolizeOptions::debug_dir, already checked; the
// standard callback would also try .gnu_debuglink paths and, with DEBUGINFOD_URLS set,
// the network, neither of which a read of a trace should do behind the user's back.
int find_debuginfo(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*, const char*,
                   GElf_Word, char** debuginfo_file_name) {
  const auto* lookup = static_cast<const DebugLookup*>(*userdata);
  if (!lookup || lookup->path.empty()) return -1;
  int fd = ::open(lookup->path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && debuginfo_file_name) *debuginfo_file_name = ::strdup(lookup->path.c_str());
  return fd;
}

const Dwfl_Callbacks kCallbacks = {
    nullptr,  // find_elf: every module is reported with its open file
    find_debuginfo,
    dwfl_offline_section_address,
    nullptr,
};

// A function frame as found at one address of a file, before it is tied to a stack.
struct FileFrame {
  StrId function = 0, file = 0;
  uint32_t line = 0;
  bool inlined = false;
};

// A function symbol: [addr, addr + size), its name in ResolvedFile::names.
struct FunctionSymbol {
  uint64_t addr = 0, size = 0;
  uint32_t name_at = 0, name_size = 0;
};

// A function's address range in a compilation unit (of its DWARF).
struct FunctionRange {
  Dwarf_Addr low = 0, high = 0;
  Dwarf_Die die;
};

// A mapped file as symbolisation sees it: where its segments lie, and the libdwfl module
// that names its functions, lines and inlined calls (with its separate debug file).
struct ResolvedFile {
  std::vector<Segment> loads;  // program headers giving file offset -> address
  bool exact_layout = true;    // false: only a debug file, whose offsets are rewritten
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;  // null: nothing to name frames with
  DebugLookup lookup;
  StrId module_name = 0;  // the file's name, for frames no symbol covers
  // Function symbols by address, one name per address, built on first use.
  bool symbols_read = false;
  std::vector<FunctionSymbol> symbols;
  std::string names;
  // Frames found at each link-time address: [first, first + count) of `frames`, and
  // whether the address is in a signal frame's code (signal_trampoline).
  struct FramesAt {
    uint32_t first = 0, count = 0;
    bool signal = false;
  };
  std::unordered_map<uint64_t, FramesAt> at;
  // Each compilation unit's functions by address (by the unit's DIE offset), built on
  // first use.
  std::unordered_map<Dwarf_Off, std::vector<FunctionRange>> units;
  std::vector<FileFrame> frames;

  ResolvedFile() = default;
  ResolvedFile(const ResolvedFile&) = delete;
  ResolvedFile& operator=(const ResolvedFile&) = delete;
  ~ResolvedFile() {
    if (dwfl) ::dwfl_end(dwfl);
  }

  // The link-time address of file offset `offset` in a mapping [start, ...) of `pgoff`.
  bool address_of(uint64_t offset, uint64_t pgoff, uint64_t& vaddr) const {
    if (exact_layout) {
      for (const Segment& s : loads) {
        if (offset >= page_down(s.offset) && offset < s.offset + s.filesz) {
          vaddr = s.vaddr + offset - s.offset;  // wraps correctly in the page before s.offset
          return true;
        }
      }
      return false;
    }
    // A debug file keeps each segment's address but not its file offset; an executable
    // mapping is its text segment, mapped from the segment's first page.
    for (const Segment& s : loads) {
      if (!s.exec) continue;
      vaddr = page_down(s.vaddr) + (offset - pgoff);
      return true;
    }
    return false;
  }

  // Aliases share an address; the one kept is the name a person would write (and rules
  // match): fewest leading underscores ("nanosleep" over "__nanosleep"), then global over
  // weak over local, then the shortest, then alphabetical (so the choice is stable).
  // "clock_nanosleep@@GLIBC_2.17" in a .symtab names the same function as the .dynsym's
  // "clock_nanosleep". Read once per file, through libdwfl (which finds the symbol table
  // in the file, its debug file or .dynsym); looked up by binary search, as
  // dwfl_module_addrinfo scans every symbol on each call.
  void read_symbols() {
    symbols_read = true;
    struct Candidate {
      size_t underscores;
      int binding_rank;
      std::string name;
      bool operator<(const Candidate& o) const {
        if (underscores != o.underscores) return underscores < o.underscores;
        if (binding_rank != o.binding_rank) return binding_rank < o.binding_rank;
        if (name.size() != o.name.size()) return name.size() < o.name.size();
        return name < o.name;
      }
    };
    std::unordered_map<uint64_t, std::pair<uint64_t, Candidate>> best;  // size, best
    const int n = ::dwfl_module_getsymtab(module);
    for (int i = 1; i < n; ++i) {
      GElf_Sym sym;
      GElf_Addr addr = 0;
      GElf_Word shndx = 0;
      const char* raw = ::dwfl_module_getsym_info(module, i, &sym, &addr, &shndx, nullptr, nullptr);
      if (!raw || !*raw) continue;
      const int type = GELF_ST_TYPE(sym.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || addr == 0)
        continue;
      std::string_view name(raw);
      name = name.substr(0, name.find('@'));
      if (name.empty()) continue;
      const int binding = GELF_ST_BIND(sym.st_info);
      Candidate c{std::min(name.find_first_not_of('_'), name.size()),
                  binding == STB_GLOBAL ? 0
                  : binding == STB_WEAK ? 1
                                        : 2,
                  std::string(name)};
      auto [it, added] = best.try_emplace(addr, sym.st_size, c);
      if (added) continue;
      it->second.first = std::max<uint64_t>(it->second.first, sym.st_size);
      if (c < it->second.second) it->second.second = std::move(c);
    }
    symbols.reserve(best.size());
    for (auto& [addr, entry] : best) {
      FunctionSymbol f{addr, entry.first, static_cast<uint32_t>(names.size()),
                       static_cast<uint32_t>(entry.second.name.size())};
      names += entry.second.name;
      symbols.push_back(f);
    }
    std::sort(symbols.begin(), symbols.end(),
              [](const FunctionSymbol& a, const FunctionSymbol& b) { return a.addr < b.addr; });
  }

  // The name of the function holding `vaddr`, "" when no symbol covers it.
  std::string_view function_at(uint64_t vaddr) {
    if (!symbols_read) read_symbols();
    auto it = std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                               [](uint64_t v, const FunctionSymbol& s) { return v < s.addr; });
    // A few steps back cover a small function nested in a larger one's range.
    for (int steps = 0; it != symbols.begin() && steps < 16; ++steps) {
      --it;
      if (vaddr - it->addr < std::max<uint64_t>(it->size, 1))
        return std::string_view(names).substr(it->name_at, it->name_size);
    }
    return {};
  }
};

// The name of a DWARF function (subprogram or inlined instance, through its abstract
// origin): its linkage name demangled, else its plain name; "" when it has none.
std::string die_function_name(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (::dwarf_attr_integrate(die, name, &attr)) {
      if (const char* s = ::dwarf_formstring(&attr)) return demangle(s);
    }
  }
  if (::dwarf_attr_integrate(die, DW_AT_name, &attr)) {
    if (const char* s = ::dwarf_formstring(&attr)) return s;
  }
  return {};
}

class Symbolizer {
 public:
  Symbolizer(Trace& trace, const SymbolizeOptions& options)
      : trace_(trace), options_(options), jit_(trace) {
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
    std::vector<Frame> found;
    for (StackId id = 1; id < n; ++id) {
      Stack& stack = trace_.stacks[id];
      if (!stack.frames.empty() || stack.ips.empty()) continue;
      if (!seen[id]) {
        ++report_.stacks_unused;
        continue;
      }
      const size_t kernel = std::min<size_t>(stack.kernel, stack.ips.size());
      // User frames named already (by the file, or an earlier run) keep their names; the
      // files are still read for inlined calls and lines.
      bool named = false;
      for (size_t f = kernel; f < stack.symbols.size(); ++f) named |= stack.symbols[f] != 0;
      std::vector<StrId> symbols = stack.symbols;
      symbols.resize(stack.ips.size(), 0);
      std::vector<Frame> frames;
      frames.reserve(stack.ips.size());
      for (size_t f = 0; f < kernel; ++f) {
        Frame k;
        k.ip = stack.ips[f];
        k.function = symbols[f];
        k.kernel = true;
        frames.push_back(k);
      }
      bool any = false;
      for (size_t f = kernel; f < stack.ips.size(); ++f) {
        // Outer frames hold return addresses: the instruction after the call. Looking up
        // ip - 1 lands inside the call, which matters when the call was the function's
        // last instruction (a noreturn callee) and ip is already the next function.
        const uint64_t ip = stack.ips[f];
        const uint64_t lookup = f == kernel || ip == 0 ? ip : ip - 1;
        found.clear();
        const StrId function = resolve(pid[id], ts[id], ip, lookup, found);
        if (named) {
          // The recorded name wins for the function the ip is in.
          if (symbols[f]) found.back().function = symbols[f];
        } else if (function) {
          symbols[f] = function;
          ++report_.frames_resolved;
          any = true;
        } else {
          ++report_.frames_unresolved;
        }
        frames.insert(frames.end(), found.begin(), found.end());
      }
      if (any) {
        stack.symbols = std::move(symbols);
        ++report_.stacks_symbolized;
      }
      stack.frames = std::move(frames);
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

  // Appends the frames of `ip` (looked up at `lookup`) to `out`, innermost first: the
  // functions inlined there, then the one holding it (always at least one frame). Returns
  // the symbol of the function holding it, 0 when unknown.
  StrId resolve(Pid pid, uint64_t ts, uint64_t ip, uint64_t lookup, std::vector<Frame>& out) {
    Frame plain;
    plain.ip = ip;
    if (ip == 0) {
      out.push_back(plain);
      return 0;
    }
    const MapRecord* map = find_map(pid, ts, lookup);
    if (!map) {
      ++report_.frames_outside_maps;
      return jit_frame(pid, ts, lookup, plain, out);
    }
    // Per map, once: its file and name (a stack's frames mostly share a few maps).
    auto [cached, first_use] = by_map_.try_emplace(map);
    if (first_use)
      cached->second = {resolve_file(map->path, map->build_id), module_name(map->path)};
    ResolvedFile* file = cached->second.first;
    plain.module = cached->second.second;
    plain.offset = ip - map->start + map->pgoff;
    if (!file && noted_.emplace(pid, map).second) {
      const std::string_view path = trace_.strings.get(map->path);
      const std::string_view build_id = trace_.strings.get(map->build_id);
      not_found_by_pid_[pid].insert(
          build_id.empty() ? std::string(path) : fmt::format("{} (build id {})", path, build_id));
    }
    uint64_t vaddr = 0;
    if (!file || !file->module ||
        !file->address_of(lookup - map->start + map->pgoff, map->pgoff, vaddr))
      return jit_frame(pid, ts, lookup, plain, out);  // a JIT's code in a memfd, say
    auto [it, added] = file->at.try_emplace(vaddr);
    if (added) {
      const auto [first, count] = describe(*file, vaddr);
      it->second = {first, count, signal_trampoline(*file, vaddr)};
    }
    plain.signal = it->second.signal;
    StrId function = 0;
    for (uint32_t k = 0; k < it->second.count; ++k) {
      const FileFrame& ff = file->frames[it->second.first + k];
      Frame f = plain;
      f.function = ff.function;
      f.file = ff.file;
      f.line = ff.line;
      f.inlined = ff.inlined;
      if (!ff.inlined) function = ff.function;
      out.push_back(f);
    }
    if (it->second.count == 0) out.push_back(plain);
    return function;
  }

  // Whether link-time address `vaddr` of `file` is in a signal frame: code whose call frame
  // information carries the `S` augmentation (DWARF for x86-64 and arm64; libc's
  // __restore_rt, the kernel's vDSO sigreturn), where a signal handler returns to. The
  // libraries that have one cover the byte before it too, so that a return address looked
  // up one byte early (the caller's convention above) still finds it.
  static bool signal_trampoline(ResolvedFile& file, uint64_t vaddr) {
    for (int source = 0; source < 2; ++source) {
      Dwarf_Addr bias = 0;
      Dwarf_CFI* cfi = source == 0 ? ::dwfl_module_eh_cfi(file.module, &bias)
                                   : ::dwfl_module_dwarf_cfi(file.module, &bias);
      if (!cfi) continue;
      Dwarf_Frame* frame = nullptr;
      if (::dwarf_cfi_addrframe(cfi, vaddr - bias, &frame) != 0 || !frame) continue;
      bool signal = false;
      const bool known = ::dwarf_frame_info(frame, nullptr, nullptr, &signal) >= 0;
      std::free(frame);
      if (known) return signal;
    }
    return false;
  }

  // The frame `plain` named by the JIT symbol covering `lookup`, if the process's perf map
  // had one (code in anonymous memory); else as it is. Returns the name, 0 when none.
  StrId jit_frame(Pid pid, uint64_t ts, uint64_t lookup, Frame plain, std::vector<Frame>& out) {
    if (const JitSymbol* jit = jit_.empty() ? nullptr : jit_.find(pid, ts, lookup)) {
      plain.function = jit->name;
      ++report_.frames_jit;
    }
    out.push_back(plain);
    return plain.function;
  }

  StrId module_name(StrId path) {
    auto [it, added] = module_names_.try_emplace(path, 0);
    if (added) {
      std::string_view p = trace_.strings.get(path);
      it->second = trace_.strings.intern(p.substr(p.find_last_of('/') + 1));
    }
    return it->second;
  }

  StrId intern_cached(const char* s) {
    if (!s || !*s) return 0;
    auto [it, added] = interned_.try_emplace(s, 0);
    if (added) it->second = trace_.strings.intern(s);
    return it->second;
  }

  // The scopes of `pc` that are functions, innermost first: the inlined instances holding
  // it, then the function they are in. dwarf_getscopes would give them, but it walks the
  // whole compilation unit on every call (most of the time in a C++ library); instead each
  // unit's functions are indexed once by address, and only the one holding pc is walked.
  void function_scopes(ResolvedFile& file, Dwarf_Die& cu, Dwarf_Addr pc,
                       std::vector<Dwarf_Die>& out) {
    auto [it, added] = file.units.try_emplace(::dwarf_dieoffset(&cu));
    std::vector<FunctionRange>& index = it->second;
    if (added) {
      index_functions(cu, index, 0);
      std::sort(index.begin(), index.end(),
                [](const FunctionRange& a, const FunctionRange& b) { return a.low < b.low; });
    }
    auto at = std::upper_bound(index.begin(), index.end(), pc,
                               [](Dwarf_Addr v, const FunctionRange& r) { return v < r.low; });
    const FunctionRange* function = nullptr;
    for (int steps = 0; at != index.begin() && steps < 16 && !function; ++steps) {
      --at;
      if (pc >= at->low && pc < at->high) function = &*at;
    }
    if (!function) return;
    // Down from the function through the scopes holding pc; inlined instances are frames.
    std::vector<Dwarf_Die> chain{function->die};
    Dwarf_Die scope = function->die;
    for (int depth = 0; depth < 64; ++depth) {
      Dwarf_Die child;
      if (::dwarf_child(&scope, &child) != 0) break;
      bool deeper = false;
      do {
        const int tag = ::dwarf_tag(&child);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
            tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
          continue;
        if (::dwarf_haspc(&child, pc) != 1) continue;
        if (tag == DW_TAG_inlined_subroutine) chain.push_back(child);
        scope = child;
        deeper = true;
        break;
      } while (::dwarf_siblingof(&child, &child) == 0);
      if (!deeper) break;
    }
    out.assign(chain.rbegin(), chain.rend());
  }

  // The address ranges of the functions defined in `die`'s children (in namespaces and
  // classes too).
  static void index_functions(Dwarf_Die& die, std::vector<FunctionRange>& out, int depth) {
    Dwarf_Die child;
    if (depth > 16 || ::dwarf_child(&die, &child) != 0) return;
    do {
      const int tag = ::dwarf_tag(&child);
      if (tag == DW_TAG_subprogram) {
        Dwarf_Addr base = 0, low = 0, high = 0;
        for (ptrdiff_t off = 0; (off = ::dwarf_ranges(&child, off, &base, &low, &high)) > 0;)
          if (high > low) out.push_back(FunctionRange{low, high, child});
      } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                 tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_module) {
        index_functions(child, out, depth + 1);
      }
    } while (::dwarf_siblingof(&child, &child) == 0);
  }

  // The frames at link-time address `vaddr` of `file`, stored in file.frames; returns
  // where they start and how many (0: nothing known there).
  std::pair<uint32_t, uint32_t> describe(ResolvedFile& file, uint64_t vaddr) {
    const uint32_t first = static_cast<uint32_t>(file.frames.size());
    // The function holding the address, from the symbol tables.
    StrId outer = 0;
    if (std::string_view name = file.function_at(vaddr); !name.empty()) {
      auto [it, added] = symbol_names_.try_emplace(std::string(name), 0);
      if (added) it->second = trace_.strings.intern(demangle(name));
      outer = it->second;
    }
    // The source line of the address itself.
    StrId src_file = 0;
    uint32_t src_line = 0;
    if (Dwfl_Line* line = ::dwfl_module_getsrc(file.module, vaddr)) {
      int lineno = 0;
      const char* name = ::dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
      if (name && lineno > 0) {
        src_file = intern_cached(name);
        src_line = static_cast<uint32_t>(lineno);
      }
    }
    // Inlined calls: the DWARF scopes holding the address, innermost first. Each inlined
    // instance is a frame at the current position; its call site is the position in the
    // function it was inlined into, the next frame out.
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = ::dwfl_module_addrdie(file.module, vaddr, &bias);
    std::vector<Dwarf_Die> scopes;  // innermost first: inlined instances, then the function
    if (cu) function_scopes(file, *cu, vaddr - bias, scopes);
    Dwarf_Files* files = nullptr;
    if (cu && ::dwarf_getsrcfiles(cu, &files, nullptr) != 0) files = nullptr;
    StrId dwarf_outer = 0;
    for (Dwarf_Die& scope : scopes) {
      Dwarf_Die* die = &scope;
      const int tag = ::dwarf_tag(die);
      if (tag == DW_TAG_subprogram) {
        std::string name = die_function_name(die);
        if (!name.empty()) dwarf_outer = trace_.strings.intern(name);
        break;
      }
      if (tag != DW_TAG_inlined_subroutine) continue;
      std::string name = die_function_name(die);
      FileFrame f;
      f.function = name.empty() ? 0 : trace_.strings.intern(name);
      f.file = src_file;
      f.line = src_line;
      f.inlined = true;
      file.frames.push_back(f);
      // Where it was called: the position for the next frame out.
      Dwarf_Attribute attr;
      Dwarf_Word value = 0;
      src_file = 0;
      src_line = 0;
      if (files && ::dwarf_formudata(::dwarf_attr(die, DW_AT_call_file, &attr), &value) == 0)
        src_file = intern_cached(::dwarf_filesrc(files, value, nullptr, nullptr));
      if (::dwarf_formudata(::dwarf_attr(die, DW_AT_call_line, &attr), &value) == 0)
        src_line = static_cast<uint32_t>(value);
    }
    // The function holding it all: its symbol, else its DWARF name.
    if (!outer) outer = dwarf_outer;
    if (outer || src_line || file.frames.size() > first)
      file.frames.push_back(FileFrame{outer, src_file, src_line, false});
    return {first, static_cast<uint32_t>(file.frames.size() - first)};
  }

  ResolvedFile* resolve_file(StrId path_id, StrId build_id_id) {
    auto key = std::make_pair(path_id, build_id_id);
    auto [it, added] = files_.try_emplace(key);
    if (!added) return it->second.get();
    std::string path(trace_.strings.get(path_id));
    std::string build_id(trace_.strings.get(build_id_id));
    GElf_Ehdr ehdr;
    ElfFile code_file(path);
    bool code = code_file.elf() != nullptr && ::gelf_getehdr(code_file.elf(), &ehdr);
    std::string code_id = code ? code_file.build_id() : std::string();
    // A different file at the same path (upgraded since the recording) would name the
    // wrong functions.
    if (code && !build_id.empty() && code_id != build_id) code = false;
    std::string id = !build_id.empty() ? build_id : code ? code_id : std::string();
    std::string debug_path;
    bool debug = false;
    std::vector<Segment> debug_loads;
    if (id.size() > 2) {
      debug_path = debug_file_path(options_.debug_dir, id);
      ElfFile debug_file(debug_path);
      debug = debug_file.elf() != nullptr && ::gelf_getehdr(debug_file.elf(), &ehdr);
      if (debug && !debug_file.build_id().empty() && debug_file.build_id() != id) debug = false;
      if (debug) debug_loads = read_loads(debug_file.elf());
    }
    if (!code && !debug) {
      not_found_.insert(build_id.empty() ? path : fmt::format("{} (build id {})", path, build_id));
      return nullptr;
    }
    auto file = std::make_unique<ResolvedFile>();
    const std::string& main_path = code ? path : debug_path;
    file->exact_layout = code;
    file->loads = code ? read_loads(code_file.elf()) : std::move(debug_loads);
    if (code && debug) file->lookup.path = debug_path;
    // One Dwfl per file, the module at its link-time addresses (bias 0): addresses are
    // turned into link-time ones above, from the recorded maps, so one file serves every
    // process that mapped it.
    file->dwfl = ::dwfl_begin(&kCallbacks);
    if (file->dwfl) {
      ::dwfl_report_begin(file->dwfl);
      Dwfl_Module* module =
          ::dwfl_report_elf(file->dwfl, main_path.c_str(), main_path.c_str(), -1, 0, true);
      ::dwfl_report_end(file->dwfl, nullptr, nullptr);
      if (module) {
        void** userdata = nullptr;
        ::dwfl_module_info(module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
        if (userdata) *userdata = &file->lookup;
        file->module = module;
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
  JitSymbolIndex jit_;
  std::vector<const MapRecord*> by_pid_;
  std::unordered_map<Pid, std::pair<size_t, size_t>> ranges_;
  std::unordered_map<const MapRecord*, std::pair<ResolvedFile*, StrId>> by_map_;
  std::set<std::pair<Pid, const MapRecord*>> noted_;  // files_not_found_by_pid_ entries made
  std::unordered_map<StrId, StrId> module_names_;
  std::unordered_map<std::string, StrId> symbol_names_;  // raw symbol -> demangled
  std::unordered_map<std::string, StrId> interned_;      // source file names
  std::unordered_map<std::pair<StrId, StrId>, std::unique_ptr<ResolvedFile>, PairHash> files_;
  std::set<std::string> not_found_;
  std::map<Pid, std::set<std::string>> not_found_by_pid_;
};

}  // namespace

SymbolizeReport symbolize_stacks(Trace& trace, const SymbolizeOptions& options) {
  return Symbolizer(trace, options).run();
}

}  // namespace cw
