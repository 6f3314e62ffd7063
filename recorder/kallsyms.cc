#include "recorder/kallsyms.h"

#include <algorithm>
#include <charconv>
#include <fstream>

namespace cw {

namespace {
constexpr uint64_t kMaxFunctionBytes = 1 << 20;
}  // namespace

KernelSymbols::KernelSymbols(const std::string& path) {
  std::ifstream in(path);
  readable_ = static_cast<bool>(in);
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    // "ffffffff81234560 T anon_pipe_read" or "... t name\t[module]"
    const size_t sp1 = line.find(' ');
    if (sp1 == std::string::npos || sp1 + 3 > line.size()) continue;
    const char type = line[sp1 + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    uint64_t addr = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + sp1, addr, 16);
    if (ec != std::errc() || end != line.data() + sp1) continue;
    any = true;
    if (addr == 0) continue;  // hidden
    std::string_view rest = std::string_view(line).substr(sp1 + 3);
    std::string_view name = rest.substr(0, rest.find_first_of("\t "));
    if (name.empty()) continue;
    const bool probe = rest.ends_with("[bpf]") || name.starts_with("bpf_trace_run") ||
                       name.starts_with("__bpf_trace_") || name.starts_with("__traceiter_");
    symbols_.push_back(Symbol{addr, static_cast<uint32_t>(names_.size()),
                              static_cast<uint32_t>(name.size()), probe});
    names_ += name;
  }
  restricted_ = any && symbols_.empty();
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.addr < b.addr; });
}

const KernelSymbols::Symbol* KernelSymbols::find(uint64_t addr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                             [](uint64_t a, const Symbol& s) { return a < s.addr; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  // kallsyms gives no sizes: an address far past the symbol before it (code that was
  // loaded later, the end of the text) is not that function's.
  if (addr - it->addr > kMaxFunctionBytes) return nullptr;
  return &*it;
}

std::string_view KernelSymbols::name(uint64_t addr) const {
  const Symbol* s = find(addr);
  return s ? std::string_view(names_).substr(s->name_at, s->name_size) : std::string_view();
}

bool KernelSymbols::is_probe(uint64_t addr) const {
  const Symbol* s = find(addr);
  return s && s->probe;
}

}  // namespace cw
