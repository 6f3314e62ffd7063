// Finding a function by name in the modules loaded in this process (dl_iterate_phdr: the
// executable, then its libraries in load order), from each module file's .symtab (so
// static functions of a non-stripped executable are found too), else its .dynsym. Plain
// ELF parsing of the mapped file; no libelf, no libstdc++ (the preload library uses it).
#pragma once

#include <limits.h>

#include <cstddef>
#include <cstdint>

namespace cw::hook {

struct FoundFunction {
  uint64_t address = 0;
  uint64_t size = 0;  // st_size, 0 if the symbol has none
  char module[PATH_MAX] = {};
};

enum class Lookup {
  kFound,
  kNotFound,
  kAmbiguous,  // several functions of that name at different addresses in one module
  kIfunc,      // an indirect function: its symbol is the resolver, not the code called
};

// Looks `name` up in every loaded module, or only in those whose path or file name is
// `binary` when it is not null. The first module that has it wins.
Lookup find_function(const char* name, const char* binary, FoundFunction* out);

}  // namespace cw::hook
