#include "recorder/record_instrumentation.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "base/temp_dir.h"
#include "instrument/elf_image.h"
#include "instrument/flag_scan.h"
#include "instrument/hook/hook_log_reader.h"
#include "instrument/hook/preload_path.h"
#include "instrument/proc_maps.h"
#include "instrument/x86_decoder.h"
#include "kernel/records.h"
#include "trace/command_marker.h"

namespace cw {

namespace {

// A thread has four debug registers; `auto` watches at most this many flags per process
// and probes the instructions of the rest.
constexpr size_t kWatchesPerProcess = 4;

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

bool names_file(const std::string& binary, const std::string& path) {
  return binary == path || binary == file_name(path);
}

std::string exe_of(uint32_t pid) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), ec);
  return ec ? std::string() : p.string();
}

}  // namespace

struct RecordInstrumentation::State {
  instrument::X86Decoder decoder;
  std::map<std::string, std::unique_ptr<instrument::ElfImage>> images;
  std::set<std::string> unreadable;
  std::set<std::tuple<std::string, uint64_t, int>> uprobes;  // path, offset, kind
  std::map<uint32_t, size_t> watches;                        // per pid
  std::unique_ptr<TempDir> hook_dir;
  std::unique_ptr<hook::HookLogReader> hook_log;
  uint64_t hook_lost_reported = 0;                         // lost events already said
  std::vector<std::pair<uint32_t, uint32_t>> watchpoints;  // (pid, flag index) attached
  bool inline_hooks = false;
  std::vector<std::string> messages;
  // Functions the packs name that a hooked process does not have, with the processes:
  // said once at the end (every pack's functions are hooked in every recorded process, and
  // a pack for one runtime names functions no other program has).
  std::map<std::string, std::set<uint32_t>> missing;
  // Functions hooked in at least one process: absent from the others is no news (a
  // runtime's functions are in its program, not in the shell that started it).
  std::set<std::string> hooked_somewhere;

  const instrument::ElfImage* image(const std::string& path) {
    auto it = images.find(path);
    if (it != images.end()) return it->second.get();
    if (unreadable.count(path)) return nullptr;
    std::string error;
    auto img = instrument::ElfImage::open(path, &error);
    if (!img) {
      unreadable.insert(path);
      return nullptr;
    }
    return (images[path] = std::move(img)).get();
  }
};

RecordInstrumentation::RecordInstrumentation(instrument::InstrumentationPlan plan, FlagMethod flags,
                                             HookMethod hooks)
    : plan_(std::move(plan)), flags_(flags), hooks_(hooks), state_(std::make_unique<State>()) {
  for (const std::string& w : plan_.warnings) state_->messages.push_back("warning: " + w);
}

RecordInstrumentation::~RecordInstrumentation() = default;

InstrumentNaming RecordInstrumentation::naming() const {
  InstrumentNaming n;
  for (const auto& f : plan_.functions) n.functions.push_back(f.name);
  for (const auto& f : plan_.flags) n.flags.push_back(f.id);
  State* state = state_.get();
  n.classify_watch_hit = [state](std::span<const uint8_t> before, uint64_t ip,
                                 uint64_t addr) -> int {
    auto insn = instrument::decode_ending_at(state->decoder, before, ip, addr);
    if (!insn) return 0;
    const instrument::MemOperand* m = insn->accessed_memory();
    return m ? static_cast<int>(m->access) : 0;
  };
  return n;
}

std::string uprobe_refused_prefix(std::span<const uint8_t> insn) {
  for (uint8_t b : insn) {
    switch (b) {
      case 0xf0: return "a lock prefix";
      case 0x26:
      case 0x2e:
      case 0x36:
      case 0x3e: return "a segment prefix";
      case 0xf2:
      case 0xf3:
      case 0x64:
      case 0x65:
      case 0x66:
      case 0x67: continue;  // other legacy prefixes: allowed, and more may follow
      default: return "";   // the opcode (or REX): no more prefixes
    }
  }
  return "";
}

std::string asan_options_with_preload(const char* existing) {
  constexpr const char* kOrder = "verify_asan_link_order=0";
  if (!existing || !*existing) return kOrder;
  // Later options win: the user's own value for it, if any, cannot make the command exit.
  return fmt::format("{}:{}", existing, kOrder);
}

std::vector<std::pair<std::string, std::string>> RecordInstrumentation::command_environment() {
  std::vector<std::pair<std::string, std::string>> env;
  if (plan_.functions.empty() || hooks_ == HookMethod::Uprobe) return env;
  std::string library = hook::find_preload_library();
  if (library.empty()) {
    if (hooks_ == HookMethod::Inline)
      throw kernel::ProbeError(
          "--hooks inline: the in-process hook library libcauseway-preload.so was not found "
          "next to causeway (set CAUSEWAY_PRELOAD to its path)");
    state_->messages.push_back(
        "note: libcauseway-preload.so not found; functions are probed with uprobes");
    return env;
  }
  state_->hook_dir = std::make_unique<TempDir>("causeway-hooks");
  std::string functions;
  for (size_t i = 0; i < plan_.functions.size(); ++i)
    functions += fmt::format("{}{}:{}", i ? ";" : "", i, plan_.functions[i].name);
  const char* preload = std::getenv("LD_PRELOAD");
  env.emplace_back("LD_PRELOAD", preload && *preload ? library + ":" + preload : library);
  env.emplace_back("ASAN_OPTIONS", asan_options_with_preload(std::getenv("ASAN_OPTIONS")));
  env.emplace_back("CAUSEWAY_HOOK_DIR", state_->hook_dir->path());
  env.emplace_back("CAUSEWAY_HOOK_FUNCTIONS", functions);
  state_->hook_log = std::make_unique<hook::HookLogReader>(state_->hook_dir->path());
  state_->inline_hooks = true;
  return env;
}

// The files process `pid` maps code from, one mapping of each (which places it: its load
// bias), its executable first: a symbol the executable defines wins over a library's of the
// same name. Empty, with `error` set, when its maps cannot be read.
struct RecordInstrumentation::MappedFiles {
  std::vector<instrument::ProcMap> maps;
  std::vector<const instrument::ProcMap*> files;  // into `maps`
  std::string process;                            // "NAME (pid PID)", as messages say it
};

bool RecordInstrumentation::read_mapped_files(uint32_t pid, MappedFiles* out, std::string* error) {
  auto read = instrument::read_proc_maps(static_cast<pid_t>(pid), error);
  if (!read) return false;
  for (instrument::ProcMap& m : *read)
    if (m.executable && m.file_backed()) out->maps.push_back(std::move(m));
  std::string exe = exe_of(pid);
  std::stable_partition(out->maps.begin(), out->maps.end(),
                        [&](const instrument::ProcMap& m) { return m.path == exe; });
  std::set<std::string> seen;
  for (const instrument::ProcMap& m : out->maps)
    if (seen.insert(m.path).second) out->files.push_back(&m);
  out->process = fmt::format("{} (pid {})", file_name(exe), pid);
  return true;
}

void RecordInstrumentation::attach(kernel::Probes& probes, uint32_t pid, bool command) {
  State& s = *state_;
  std::string error;
  MappedFiles mapped;
  if (!read_mapped_files(pid, &mapped, &error)) {
    s.messages.push_back(fmt::format("pid {}: {}; nothing instrumented", pid, error));
    return;
  }
  const std::vector<const instrument::ProcMap*>& files = mapped.files;
  const std::string& process = mapped.process;

  for (uint32_t i = 0; i < plan_.flags.size(); ++i) {
    const instrument::PlannedFlag& flag = plan_.flags[i];
    const instrument::ProcMap* home = nullptr;
    const instrument::ElfImage* home_image = nullptr;
    uint64_t vaddr = 0;
    if (flag.symbol.empty()) {
      vaddr = flag.address;
    } else {
      for (const instrument::ProcMap* m : files) {
        if (!flag.binary.empty() && !names_file(flag.binary, m->path)) continue;
        const instrument::ElfImage* img = s.image(m->path);
        if (!img) continue;
        auto sym = img->find_symbol(flag.symbol);
        if (!sym || sym->function) continue;
        home = m, home_image = img, vaddr = sym->vaddr;
        break;
      }
      if (!home) {
        s.messages.push_back(
            fmt::format("flag {}: {} maps no file defining '{}'{}", flag.id, process, flag.symbol,
                        flag.binary.empty() ? "" : fmt::format(" (binary \"{}\")", flag.binary)));
        continue;
      }
    }
    bool watch = flags_ == FlagMethod::Watch ||
                 (flags_ == FlagMethod::Auto && (s.watches[pid] < kWatchesPerProcess || !home));
    if (watch) {
      uint64_t runtime = vaddr;
      if (home) {
        auto bias = home_image->load_bias(home->start, home->offset);
        if (!bias) {
          s.messages.push_back(fmt::format("flag {}: cannot place {} in {}", flag.id,
                                           file_name(home->path), process));
          continue;
        }
        runtime = vaddr + *bias;
      }
      kernel::Watchpoint w;
      w.pid = pid;
      w.address = runtime;
      w.size = flag.size;
      w.writes_only = !flag.reads;
      w.flag_index = i;
      probes.attach_watchpoint(w);
      ++s.watches[pid];
      s.watchpoints.emplace_back(pid, static_cast<uint32_t>(i));
      s.messages.push_back(fmt::format("flag {}: hardware watchpoint ({}) on {} at {:#x} in {}",
                                       flag.id, flag.reads ? "reads and writes" : "writes",
                                       flag.symbol.empty() ? "address" : flag.symbol, runtime,
                                       process));
      continue;
    }
    // Instruction probes: every instruction of a mapped file that reaches the flag, directly
    // in the file defining it or through a GOT slot in any file.
    size_t reads = 0, writes = 0;
    std::set<std::string> where;
    std::map<std::string, size_t> refused;  // why -> instructions the kernel cannot probe
    for (const instrument::ProcMap* m : files) {
      const instrument::ElfImage* img = s.image(m->path);
      if (!img) continue;
      std::vector<uint64_t> slots = img->got_slots(flag.symbol);
      if (img != home_image && slots.empty()) continue;
      // Elsewhere only GOT-indirect accesses can reach it (no rip-relative target is 0).
      auto sites = instrument::scan_flag_accesses(*img, s.decoder, img == home_image ? vaddr : 0,
                                                  flag.size, slots);
      for (const instrument::FlagAccessSite& site : sites) {
        // The kernel would refuse the probe, and the whole recording with it: leave the
        // instruction out and say that its accesses are missed.
        if (std::string why = uprobe_refused_prefix(img->bytes(site.vaddr, site.length));
            !why.empty()) {
          ++refused[why];
          continue;
        }
        kernel::FlagSiteProbe p;
        p.path = m->path;
        p.flag_index = i;
        p.via_got = site.via_got;
        p.delta = static_cast<int64_t>((site.via_got ? site.slot_vaddr : vaddr) - site.vaddr);
        p.size = flag.size;
        p.length = site.length;
        auto probe = [&](kernel::FlagSiteKind kind, uint64_t offset) {
          p.kind = kind;
          p.file_offset = offset;
          if (s.uprobes.insert({p.path, offset, static_cast<int>(kind)}).second)
            probes.attach_flag_site(p);
        };
        bool read = instrument::reads(site.access) && flag.reads;
        bool write = instrument::writes(site.access) && flag.writes;
        // A load is recorded after it ran (ReadArm, then the next instruction), with the
        // value it could have seen; a load that also stores keeps its arm for the write
        // and is read before it runs.
        if (read) {
          probe(write ? kernel::FlagSiteKind::Read : kernel::FlagSiteKind::ReadArm,
                site.file_offset);
          ++reads;
        }
        if (write) probe(kernel::FlagSiteKind::WriteArm, site.file_offset);
        if (write || read) probe(kernel::FlagSiteKind::WriteAfter, site.file_offset + site.length);
        if (write) ++writes;
        where.insert(file_name(m->path));
      }
    }
    std::string files_text;
    for (const auto& f : where) files_text += (files_text.empty() ? "" : ", ") + f;
    std::string missed;
    for (const auto& [why, n] : refused)
      missed += fmt::format(
          "; {} instruction{} with {} not probed (uprobes cannot run {}), so "
          "the accesses {} are missed: --flags watch traces them",
          n, n == 1 ? "" : "s", why, n == 1 ? "it" : "them", n == 1 ? "it makes" : "they make");
    if (reads + writes == 0 && refused.empty())
      s.messages.push_back(
          fmt::format("flag {}: no instruction in {} accesses '{}'; nothing to probe", flag.id,
                      process, flag.symbol));
    else
      s.messages.push_back(fmt::format("flag {}: {} read and {} write instructions probed in {}{}",
                                       flag.id, reads, writes,
                                       files_text.empty() ? process : files_text, missed));
  }

  if (plan_.functions.empty() || (command && s.inline_hooks)) return;
  attach_functions(probes, pid, mapped);
}

bool RecordInstrumentation::follows_started_programs() const {
  return !plan_.functions.empty() && !state_->inline_hooks;
}

void RecordInstrumentation::attach_started(kernel::Probes& probes, uint32_t pid) {
  if (!follows_started_programs()) return;
  std::string error;
  MappedFiles mapped;
  // Gone already (a script's short-lived `sleep` or `cat`): there is nothing to probe.
  if (!read_mapped_files(pid, &mapped, &error)) return;
  attach_functions(probes, pid, mapped);
}

// A uprobe is on a file, wherever it is mapped: once placed in a program's file, every
// process running it, started before or after, is traced. Whether a process had a function
// is said once at the end (take_final_messages), as for the in-process hooks: a pack's
// functions are looked for in every process the recording follows (the shell that starts
// the server has none of them), and only the files newly probed are news.
void RecordInstrumentation::attach_functions(kernel::Probes& probes, uint32_t pid,
                                             const MappedFiles& mapped) {
  State& s = *state_;
  for (uint32_t j = 0; j < plan_.functions.size(); ++j) {
    const std::string& name = plan_.functions[j].name;
    std::vector<std::string> probed;
    bool found = false;
    for (const instrument::ProcMap* m : mapped.files) {
      const instrument::ElfImage* img = s.image(m->path);
      if (!img) continue;
      auto sym = img->find_symbol(name);
      if (!sym || !sym->function) continue;
      auto offset = img->file_offset(sym->vaddr);
      if (!offset) continue;
      found = true;
      if (!s.uprobes.insert({m->path, *offset, -1}).second) continue;
      kernel::FunctionProbe p;
      p.path = m->path;
      p.file_offset = *offset;
      p.fn_index = j;
      probes.attach_function(p);
      probed.push_back(file_name(m->path));
    }
    if (found) {
      s.hooked_somewhere.insert(name);
      if (!probed.empty())
        s.messages.push_back(
            fmt::format("function {}: uprobes in {}", name, fmt::join(probed, ", ")));
    } else if (!plan_.functions[j].quiet) {
      s.missing[name].insert(pid);
    }
  }
}

void RecordInstrumentation::note_silent_watchpoints(RecordDecoder& decoder) {
  State& s = *state_;
  uint64_t silent = 0;
  for (auto [pid, flag] : s.watchpoints)
    if (decoder.flag_hits(pid, flag) == 0) ++silent;
  if (silent == 0) return;
  decoder.add_loss(LossKind::WatchpointSilent, silent);
  s.messages.push_back(fmt::format(
      "{} of {} hardware watchpoints never fired: their flags were not touched, or this "
      "machine does not deliver the hits (--flags probe does without them)",
      silent, s.watchpoints.size()));
}

void RecordInstrumentation::poll_hooks(RecordDecoder& decoder) {
  State& s = *state_;
  if (!s.hook_log) return;
  s.hook_log->poll([&](const hook::HookEvent& e) {
    cw_rec_call r{};
    r.h.type = CW_REC_CALL;
    r.h.size = sizeof r;
    r.h.ts = e.ts;
    r.h.pid = e.pid;
    r.h.tid = e.tid;
    r.fn_index = e.fn_index;
    r.is_exit = e.exit ? 1 : 0;
    r.address = e.address;
    decoder.decode(&r, sizeof r);
  });
  // Loss is said as it happens: a call whose entry was kept but not its exit (or the
  // reverse) makes a span that looks longer or shorter than it was.
  if (uint64_t lost = s.hook_log->lost(); lost > s.hook_lost_reported) {
    decoder.add_loss(LossKind::HookLog, lost - s.hook_lost_reported);
    s.messages.push_back(fmt::format(
        "in-process hooks: {} events lost so far (the programs called hooked functions faster "
        "than the hook log was read); calls around the gaps may lack their entry or exit",
        lost));
    s.hook_lost_reported = lost;
  }
  for (const hook::HookNote& n : s.hook_log->take_notes()) {
    if (n.fn_index < plan_.functions.size()) {
      if (n.text.rfind("not found", 0) == 0) {
        if (!plan_.functions[n.fn_index].quiet)
          s.missing[plan_.functions[n.fn_index].name].insert(n.pid);
        continue;
      }
      if (n.text.rfind("hooked", 0) == 0)
        s.hooked_somewhere.insert(plan_.functions[n.fn_index].name);
      s.messages.push_back(fmt::format("function {}: {} (pid {}, in-process hook)",
                                       plan_.functions[n.fn_index].name, n.text, n.pid));
      continue;
    }
    // About the hooks as a whole (their clock): how the trace was made, so the trace says
    // it too (trace/command_marker.h), not only stderr.
    // A note about every hooked process (pid 0: the clock) names none.
    std::string text = n.pid != 0 ? fmt::format("in-process hooks: {} (pid {})", n.text, n.pid)
                                  : fmt::format("in-process hooks: {}", n.text);
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    decoder.add_marker(static_cast<uint64_t>(now.tv_sec) * 1000000000ull + now.tv_nsec, n.pid,
                       n.pid, recorder_note(text));
    s.messages.push_back(std::move(text));
  }
}

std::vector<std::string> RecordInstrumentation::take_final_messages() {
  State& s = *state_;
  for (const std::string& name : s.hooked_somewhere) s.missing.erase(name);
  if (!s.missing.empty()) {
    std::set<uint32_t> pids;
    std::vector<std::string> names;
    for (const auto& [name, in] : s.missing) {
      names.push_back(name);
      pids.insert(in.begin(), in.end());
    }
    constexpr size_t kShown = 8;
    const size_t more = names.size() > kShown ? names.size() - kShown : 0;
    names.resize(std::min(names.size(), kShown));
    s.messages.push_back(fmt::format(
        "{} function{} named by the packs {} in none of {} hooked process{} ({}{}): not "
        "traced there",
        s.missing.size(), s.missing.size() == 1 ? "" : "s", s.missing.size() == 1 ? "is" : "are",
        pids.size(), pids.size() == 1 ? "" : "es", fmt::join(names, ", "),
        more ? fmt::format(" and {} more", more) : ""));
    s.missing.clear();
  }
  return take_messages();
}

std::vector<std::string> RecordInstrumentation::take_messages() {
  return std::exchange(state_->messages, {});
}

}  // namespace cw
