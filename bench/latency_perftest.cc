// cw-bench-latency TRACE [--repeat N] [--top N]: `causeway latency` at Chromium scale
// (bench/README.md). Times, N times each: reading the trace, inferring function
// instances and the PA-CCT of every thread (engine/latency/infer), ranking the contexts,
// and a differential ranking of the trace against itself (the same work as a base/slow
// pair of the same size). Prints a Markdown table of medians; never a timed unit test.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench/measure.h"
#include "engine/latency/infer.h"
#include "engine/latency/rank.h"
#include "trace/binary_format.h"

namespace {

using namespace cw;
using namespace cw::bench;

struct Phase {
  std::vector<double> wall, cpu;
  std::vector<double> peak_mib;
};

template <typename F>
void timed(Phase& p, F&& work) {
  reset_peak_rss();
  const Stamp start;
  work();
  const Elapsed e = since(start);
  p.wall.push_back(e.wall);
  p.cpu.push_back(e.cpu);
  p.peak_mib.push_back(static_cast<double>(status_kib("VmHWM")) / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"time causeway latency's inference and ranking on a trace"};
  std::string trace_path;
  int repeat = 3;
  size_t top = 10;
  app.add_option("TRACE", trace_path, "trace file")->required()->check(CLI::ExistingFile);
  app.add_option("--repeat", repeat, "runs per phase")->check(CLI::PositiveNumber);
  app.add_option("--top", top, "contexts ranked")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  Phase read, infer, rank, diff;
  uint64_t events = 0, stacks = 0, span_ends = 0, threads = 0, nodes = 0, contexts = 0,
           instances = 0;
  for (int r = 0; r < repeat; ++r) {
    Trace trace;
    timed(read, [&] { load_trace(trace_path, trace); });
    latency::Profile profile;
    timed(infer, [&] { profile = latency::infer(trace, {}); });
    std::vector<latency::RankedPath> ranked;
    timed(rank, [&] {
      ranked = latency::rank_paths(profile.cct, {latency::Mode::Conservative, top, 0});
    });
    timed(diff, [&] {
      ranked =
          latency::diff_rank_paths(profile.cct, profile.cct, {latency::Mode::Conservative, top, 0});
    });
    events = trace.events.size();
    stacks = profile.stacks;
    span_ends = profile.span_ends;
    threads = profile.threads;
    nodes = profile.cct.node_count();
    contexts = profile.cct.path_count();
    instances = profile.instances.size();
  }
  std::printf(
      "%llu events; %llu stacks and %llu span ends on %llu threads; %llu CCT nodes, "
      "%llu contexts, %llu function instances\n\n",
      (unsigned long long)events, (unsigned long long)stacks, (unsigned long long)span_ends,
      (unsigned long long)threads, (unsigned long long)nodes, (unsigned long long)contexts,
      (unsigned long long)instances);
  std::printf("| phase | wall s (median of %d) | CPU s | events/s | peak RSS MiB |\n", repeat);
  std::printf("| --- | ---: | ---: | ---: | ---: |\n");
  auto row = [&](const char* name, const Phase& p, bool per_event) {
    const double wall = median(p.wall);
    const std::string rate =
        per_event && wall > 0 ? std::to_string(static_cast<double>(events) / wall / 1e6) : "—";
    std::printf("| %s | %.3f | %.3f | %s | %.0f |\n", name, wall, median(p.cpu),
                per_event ? (rate.substr(0, rate.find('.') + 3) + " M").c_str() : "—",
                median(p.peak_mib));
  };
  row("read the trace", read, true);
  row("infer (Alg. 1-2, normalise)", infer, true);
  row("rank contexts (Alg. 3)", rank, false);
  row("differential ranking", diff, false);
  std::printf("\npeak RSS of the whole run: %.0f MiB\n", static_cast<double>(max_rss_kib()) / 1024);
  return 0;
}
