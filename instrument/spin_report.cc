#include "instrument/spin_report.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "instrument/spin_loop.h"

namespace cw::instrument {
namespace {

constexpr size_t kLongestCall = 7;  // call qword ptr [rip + x] with a REX prefix
constexpr size_t kHotFramesKept = 10;

}  // namespace

std::string file_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

ProcessImages::ProcessImages(pid_t pid, std::vector<ProcMap> maps)
    : pid_(pid), maps_(std::move(maps)) {}

const ElfImage* ProcessImages::image_for(const ProcMap& map) {
  auto it = images_.find(map.path);
  if (it != images_.end()) return it->second.get();
  std::string error;
  auto image = ElfImage::open(map.path, &error);
  if (!image) {
    // Deleted, replaced or in another mount namespace: the kernel still has the file.
    image = ElfImage::open(fmt::format("/proc/{}/map_files/{:x}-{:x}", pid_, map.start, map.end),
                           &error);
  }
  return images_.emplace(map.path, std::move(image)).first->second.get();
}

std::optional<ProcessImages::Location> ProcessImages::locate_in(const ProcMap& map,
                                                                uint64_t address) {
  if (!map.file_backed()) return std::nullopt;
  const ElfImage* image = image_for(map);
  if (!image) return std::nullopt;
  auto bias = image->load_bias(map.start, map.offset);
  if (!bias || !image->contains(address - *bias)) return std::nullopt;
  return Location{image, &map, address - *bias, *bias};
}

std::optional<ProcessImages::Location> ProcessImages::locate(uint64_t address) {
  const ProcMap* map = map_at(maps_, address);
  if (!map) return std::nullopt;
  return locate_in(*map, address);
}

std::optional<ProcessImages::Location> ProcessImages::locate_data(uint64_t address) {
  const ProcMap* map = map_at(maps_, address);
  if (!map) return std::nullopt;
  if (map->file_backed()) return locate_in(*map, address);
  if (!map->path.empty()) return std::nullopt;  // [heap], [stack] …
  // Anonymous: the tail of some file's .bss when that file's last mapping ends here.
  const ProcMap* before = nullptr;
  for (const ProcMap& m : maps_)
    if (m.end <= map->start && (!before || m.end > before->end)) before = &m;
  if (!before || before->end != map->start || !before->file_backed()) return std::nullopt;
  return locate_in(*before, address);
}

std::optional<uint64_t> ProcessImages::read_word(uint64_t address) const {
  int fd = open(fmt::format("/proc/{}/mem", pid_).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  uint64_t word = 0;
  const ssize_t n = pread(fd, &word, sizeof word, static_cast<off_t>(address));
  close(fd);
  if (n != static_cast<ssize_t>(sizeof word)) return std::nullopt;
  return word;
}

bool ProcessImages::returns_after_call(const X86Decoder& decoder, uint64_t address) {
  auto cached = return_addresses_.find(address);
  if (cached != return_addresses_.end()) return cached->second;
  bool after_call = false;
  auto loc = locate(address);
  if (loc && loc->map->executable) {
    for (size_t length = 2; length <= kLongestCall && !after_call; ++length) {
      auto code = loc->image->bytes(loc->vaddr - length, length);
      if (code.size() != length) continue;
      auto insn = decoder.decode(code, loc->vaddr - length);
      after_call = insn && insn->length == length && insn->flow == Flow::Call;
    }
  }
  return_addresses_.emplace(address, after_call);
  return after_call;
}

std::vector<uint64_t> candidate_frames(const UserSample& sample, ProcessImages& images,
                                       const X86Decoder& decoder) {
  std::vector<uint64_t> frames;
  auto add = [&](uint64_t a) {
    if (std::find(frames.begin(), frames.end(), a) == frames.end()) frames.push_back(a);
  };
  if (sample.ip != 0) add(sample.ip);
  for (uint64_t word : sample.stack) {
    const ProcMap* map = map_at(images.maps(), word);
    if (map && map->executable && images.returns_after_call(decoder, word)) add(word);
  }
  return frames;
}

namespace {

struct FunctionSamples {
  ProcessImages::Location where;  // of the function's first sampled address
  ElfSymbol symbol;
  std::vector<std::pair<uint64_t, uint64_t>> samples;  // (vaddr, count)
  uint64_t total = 0;
};

ExitReadReport name_data(ProcessImages& images, uint64_t runtime, ExitReadReport r) {
  r.runtime_address = runtime;
  auto loc = images.locate_data(runtime);
  if (!loc) {
    const ProcMap* map = map_at(images.maps(), runtime);
    r.unresolved = fmt::format("0x{:x} is in {}", runtime,
                               !map                ? "no mapping"
                               : map->path.empty() ? "anonymous memory"
                                                   : map->path);
    return r;
  }
  r.binary_path = loc->map->path;
  r.binary = file_name(loc->map->path);
  r.data_vaddr = loc->vaddr;
  const ElfSymbol* symbol = loc->image->symbol_at(loc->vaddr);
  if (!symbol) {
    r.unresolved = fmt::format("{}+0x{:x} has no symbol", r.binary, loc->vaddr);
    return r;
  }
  r.resolved = true;
  r.symbol = symbol->name;
  r.symbol_offset = loc->vaddr - symbol->vaddr;
  return r;
}

ExitReadReport resolve(ProcessImages& images, const FunctionSamples& f, const LoopExitRead& read) {
  ExitReadReport r;
  r.instruction = read.instruction;
  r.text = read.text;
  r.size = read.size;
  if (read.address != 0) return name_data(images, read.address + f.where.bias, std::move(r));
  if (read.pointer_slot != 0) {
    const uint64_t slot = read.pointer_slot + f.where.bias;
    auto pointer = images.read_word(slot);
    if (!pointer) {
      r.unresolved = fmt::format("cannot read the pointer at 0x{:x} in the process", slot);
      return r;
    }
    return name_data(images, *pointer + static_cast<uint64_t>(read.pointer_offset), std::move(r));
  }
  r.unresolved = read.base_register ? fmt::format("the address is computed in {}",
                                                  register_name(read.base_register))
                                    : "the address is not a fixed location";
  return r;
}

}  // namespace

SpinReport analyse_spin(const std::vector<UserSample>& samples, ProcessImages& images,
                        const X86Decoder& decoder) {
  SpinReport report;
  report.samples = samples.size();
  std::unordered_map<uint64_t, uint64_t> counts;
  for (const UserSample& s : samples)
    for (uint64_t frame : candidate_frames(s, images, decoder)) ++counts[frame];

  std::map<std::pair<const ElfImage*, uint64_t>, FunctionSamples> functions;
  std::map<std::string, uint64_t> hot;
  for (auto [address, count] : counts) {
    auto loc = images.locate(address);
    if (!loc) {
      const ProcMap* map = map_at(images.maps(), address);
      hot[map && !map->path.empty() ? map->path : fmt::format("0x{:x}", address)] += count;
      continue;
    }
    const ElfSymbol* symbol = loc->image->symbol_at(loc->vaddr);
    const std::string binary = file_name(loc->map->path);
    if (!symbol || !symbol->function) {
      hot[fmt::format("{}+0x{:x}", binary, loc->vaddr)] += count;
      continue;
    }
    hot[binary + ":" + symbol->name] += count;
    FunctionSamples& f = functions[{loc->image, symbol->vaddr}];
    if (f.samples.empty()) {
      f.where = *loc;
      f.symbol = *symbol;
    }
    f.samples.emplace_back(loc->vaddr, count);
    f.total += count;
  }
  report.hot_frames.assign(hot.begin(), hot.end());
  std::stable_sort(report.hot_frames.begin(), report.hot_frames.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (report.hot_frames.size() > kHotFramesKept) report.hot_frames.resize(kHotFramesKept);

  for (const auto& [key, f] : functions) {
    auto code = f.where.image->bytes(f.symbol.vaddr, f.symbol.size);
    if (code.empty()) continue;
    for (const SpinLoop& loop : find_spin_loops(decoder, code, f.symbol.vaddr, f.samples)) {
      LoopReport l;
      l.binary_path = f.where.map->path;
      l.binary = file_name(l.binary_path);
      l.function = f.symbol.name;
      l.function_vaddr = f.symbol.vaddr;
      l.head = loop.head;
      l.end = loop.end;
      l.samples = loop.samples;
      for (const LoopExitRead& read : loop.exit_reads) l.reads.push_back(resolve(images, f, read));
      report.loops.push_back(std::move(l));
    }
  }
  auto named = [](const LoopReport& l) {
    return std::any_of(l.reads.begin(), l.reads.end(),
                       [](const ExitReadReport& r) { return r.resolved; });
  };
  std::stable_sort(report.loops.begin(), report.loops.end(),
                   [&](const LoopReport& a, const LoopReport& b) {
                     if (a.samples != b.samples) return a.samples > b.samples;
                     return named(a) && !named(b);
                   });
  return report;
}

}  // namespace cw::instrument
