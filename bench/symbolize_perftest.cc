// Read-time symbolisation (trace/symbolize.h) on a trace with many stacks: this process's
// maps and stacks of addresses in its mapped text (libc, libstdc++, the binary), some
// repeated as in a recording, named `--repeat` times. Built against the elfutils libdwfl
// symboliser; compiled with -DCW_OLD_SYMBOLIZER against the former hand-written one
// (bench/RESULTS.md gives the command) for the comparison.
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include "trace/elf_file.h"
#include "trace/symbolize.h"

namespace cw {
#ifdef CW_OLD_SYMBOLIZER
SymbolizeReport symbolize_stacks_old(Trace& trace, const SymbolizeOptions& options);
#endif
}  // namespace cw

namespace {

struct Text {
  uint64_t start, end;
};

// This process's executable file mappings, as the recorder stores them.
std::vector<Text> add_own_maps(cw::Trace& trace, cw::Pid pid) {
  std::ifstream in("/proc/self/maps");
  std::string line;
  std::vector<Text> text;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string range, perms, offset, dev, inode, path;
    l >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.size() < 3 || perms[2] != 'x' || path.empty() || path[0] != '/') continue;
    cw::MapRecord m;
    m.pid = pid;
    m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    m.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    m.pgoff = std::stoull(offset, nullptr, 16);
    m.path = trace.strings.intern(path);
    m.build_id = trace.strings.intern(cw::read_build_id(path));
    trace.maps.push_back(m);
    text.push_back({m.start, m.end});
  }
  trace.sort_maps();
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"read-time symbolisation of many stacks"};
  size_t stacks = 50000, frames = 24, distinct = 20000;
  int repeat = 3;
  std::string debug_dir = "/usr/lib/debug";
  app.add_option("--stacks", stacks, "stacks in the trace");
  app.add_option("--frames", frames, "frames per stack");
  app.add_option("--distinct", distinct, "distinct addresses the frames are drawn from");
  app.add_option("--repeat", repeat, "runs (each on a fresh copy of the trace)");
  app.add_option("--debug-dir", debug_dir, "where separate debug files are (DIR/.build-id)");
  CLI11_PARSE(app, argc, argv);

  cw::Trace base;
  const cw::Pid pid = static_cast<cw::Pid>(::getpid());
  base.processes.push_back(cw::ProcessInfo{pid, 1, 0, 0});
  base.threads.push_back(cw::ThreadInfo{pid, pid, 0, false});
  base.rebuild_indexes();
  std::vector<Text> text = add_own_maps(base, pid);
  std::mt19937_64 rng(1);
  std::vector<uint64_t> pool(distinct);
  for (uint64_t& a : pool) {
    const Text& t = text[rng() % text.size()];
    a = t.start + rng() % (t.end - t.start);
  }
  const cw::KindId kind = base.schema.find("syscall_enter");
  for (size_t s = 0; s < stacks; ++s) {
    cw::Stack st;
    for (size_t f = 0; f < frames; ++f) st.ips.push_back(pool[rng() % pool.size()]);
    base.add_event(1000 + s, pid, kind, 0, base.add_stack(std::move(st)));
  }
  for (int r = 0; r < repeat; ++r) {
    cw::Trace trace = base;
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    auto t0 = std::chrono::steady_clock::now();
#ifdef CW_OLD_SYMBOLIZER
    cw::SymbolizeReport report = cw::symbolize_stacks_old(trace, cw::SymbolizeOptions{debug_dir});
#else
    cw::SymbolizeReport report = cw::symbolize_stacks(trace, cw::SymbolizeOptions{debug_dir});
#endif
    auto t1 = std::chrono::steady_clock::now();
    ::getrusage(RUSAGE_SELF, &after);
    const double cpu = static_cast<double>(after.ru_utime.tv_sec - before.ru_utime.tv_sec +
                                           after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                       static_cast<double>(after.ru_utime.tv_usec - before.ru_utime.tv_usec +
                                           after.ru_stime.tv_usec - before.ru_stime.tv_usec) /
                           1e6;
    size_t inlined = 0, lines = 0;
    for (const cw::Stack& st : trace.stacks)
      for (const cw::Frame& f : st.frames) {
        inlined += f.inlined;
        lines += f.line != 0;
      }
    fmt::print(
        "run {}: {:.3f} s wall, {:.3f} s CPU; {} frames resolved, {} unresolved; {} inlined "
        "frames, {} with a line\n",
        r + 1, std::chrono::duration<double>(t1 - t0).count(), cpu, report.frames_resolved,
        report.frames_unresolved, inlined, lines);
  }
  return 0;
}
