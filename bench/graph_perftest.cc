// cw-bench-graph: times reading a trace, loading rule packs and building the event graph,
// each over N repeats, and reports median wall time, events/s and peak memory per phase.
//
// Peak memory per phase is the process's resident high-water mark (VmHWM) during it: the
// mark is reset before each phase (/proc/self/clear_refs), so a phase's figure includes
// whatever earlier phases still hold (the trace, during the build). The run's peak is the
// largest of the phases' marks.
#include <malloc.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/measure.h"
#include "engine/graph/builder.h"
#include "rules/loader.h"
#include "trace/binary_format.h"

namespace {

using cw::bench::Elapsed;
using cw::bench::max_rss_kib;
using cw::bench::median;
using cw::bench::reset_peak_rss;
using cw::bench::since;
using cw::bench::Stamp;
using cw::bench::status_kib;

struct PhaseRuns {
  std::vector<double> seconds;      // wall
  std::vector<double> cpu_seconds;  // process CPU time
  std::vector<double> peak_kib;
};

struct Figures {
  uint64_t events = 0, processes = 0, threads = 0;
  uint64_t vertices = 0, edges = 0, strong = 0, weak = 0, boosted = 0, pruned = 0, cuts = 0;
  size_t packs = 0;
  std::vector<std::string> phase_order;  // read, rules, build, then the builder's own
  std::map<std::string, PhaseRuns> phases;
  void add(const std::string& phase, Elapsed took, double peak_kib) {
    if (!phases.count(phase)) phase_order.push_back(phase);
    phases[phase].seconds.push_back(took.wall);
    phases[phase].cpu_seconds.push_back(took.cpu);
    phases[phase].peak_kib.push_back(peak_kib);
  }
};

// Times the builder's own phases from its progress reports: a phase lasts from its first
// report until the next phase's first report (or the end of the build).
class PhaseClock {
 public:
  explicit PhaseClock(const Stamp& start) : last_(start) {}
  void report(std::string_view phase) {
    if (phase == current_) return;
    close(Stamp{});
    current_ = std::string(phase);
  }
  void close(const Stamp& now) {
    const std::string name = current_.empty() ? "prepare" : current_;
    durations_.emplace_back(name, since(last_, now));
    last_ = now;
  }
  const std::vector<std::pair<std::string, Elapsed>>& durations() const { return durations_; }

 private:
  Stamp last_;
  std::string current_;
  std::vector<std::pair<std::string, Elapsed>> durations_;
};

// The targets (DESIGN.md §10): graph build >= 5 M events/s with stdlib rules, within
// 1.5 GiB at 19 M events; the reader alone faster than the build.
constexpr double kBuildEventsPerSecond = 5e6;
constexpr double kPeakMiB = 1536;

void print_markdown(Figures& fig, int repeat, double max_rss_kib) {
  const double events = static_cast<double>(fig.events);
  std::printf(
      "%llu events, %llu processes, %llu threads, %zu packs -> %llu vertices, %llu edges "
      "(%llu strong, %llu weak, %llu boosted; %llu pruned)\n\n",
      static_cast<unsigned long long>(fig.events), static_cast<unsigned long long>(fig.processes),
      static_cast<unsigned long long>(fig.threads), fig.packs,
      static_cast<unsigned long long>(fig.vertices), static_cast<unsigned long long>(fig.edges),
      static_cast<unsigned long long>(fig.strong), static_cast<unsigned long long>(fig.weak),
      static_cast<unsigned long long>(fig.boosted), static_cast<unsigned long long>(fig.pruned));
  std::printf("| phase | wall s | M events/s | CPU s | M events/CPU s | peak RSS MiB |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& name : fig.phase_order) {
    const PhaseRuns& p = fig.phases[name];
    const double secs = median(p.seconds), cpu = median(p.cpu_seconds);
    const bool sub = name.find('.') != std::string::npos;
    const std::string label = sub ? "build: " + name.substr(6) : "**" + name + "**";
    const std::string peak =
        sub ? "" : std::to_string(static_cast<long long>(median(p.peak_kib) / 1024));
    std::printf("| %s | %.3f | %.2f | %.3f | %.2f | %s |\n", label.c_str(), secs,
                secs > 0 ? events / secs / 1e6 : 0.0, cpu, cpu > 0 ? events / cpu / 1e6 : 0.0,
                peak.c_str());
  }
  std::printf("\nMedians of %d runs. Peak RSS of the whole run: %.0f MiB.\n\n", repeat,
              max_rss_kib / 1024);

  const double build = median(fig.phases["build"].seconds);
  const double read = median(fig.phases["read"].seconds);
  const double build_rate = build > 0 ? events / build : 0;
  const double read_rate = read > 0 ? events / read : 0;
  const double peak = max_rss_kib / 1024;
  auto verdict = [](bool met) { return met ? "met" : "**missed**"; };
  std::printf("| target | wanted | measured | |\n| --- | ---: | ---: | --- |\n");
  std::printf("| graph build rate | >= %.1f M events/s | %.2f M events/s | %s |\n",
              kBuildEventsPerSecond / 1e6, build_rate / 1e6,
              verdict(build_rate >= kBuildEventsPerSecond));
  std::printf("| peak RSS | <= %.0f MiB | %.0f MiB | %s |\n", kPeakMiB, peak,
              verdict(peak <= kPeakMiB));
  std::printf("| reader rate | > build rate | %.2f M events/s | %s |\n", read_rate / 1e6,
              verdict(read_rate > build_rate));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times reading a trace, loading rule packs and building its event graph.",
               "cw-bench-graph"};
  std::string trace_path;
  std::vector<std::string> packs;
  bool no_stdlib = false, json = false, markdown = false;
  int repeat = 3;
  app.add_option("TRACE", trace_path, "trace file (binary or text)")->required();
  app.add_option("--rules", packs, "rule pack file or folder (repeatable), after stdlib-rules");
  app.add_flag("--no-stdlib", no_stdlib, "do not load stdlib-rules");
  app.add_option("--repeat", repeat, "runs of each phase; medians are reported")
      ->check(CLI::Range(1, 100));
  app.add_flag("--json", json, "print the figures as JSON");
  app.add_flag("--markdown", markdown, "print the figures and the targets as Markdown tables");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::string> pack_paths;
  if (!no_stdlib) pack_paths.push_back(CW_SOURCE_DIR "/stdlib-rules");
  pack_paths.insert(pack_paths.end(), packs.begin(), packs.end());

  Figures fig;
  try {
    for (int run = 0; run < repeat; ++run) {
      malloc_trim(0);  // give back what the previous run freed, so its peak starts low
      cw::Trace trace;
      reset_peak_rss();
      Stamp start;
      const cw::ReadReport report = cw::load_trace(trace_path, trace);
      fig.add("read", since(start), static_cast<double>(status_kib("VmHWM")));
      if (run == 0 && !report.clean())
        std::fprintf(stderr, "cw-bench-graph: %s: %zu damaged ranges skipped\n", trace_path.c_str(),
                     report.skipped.size());

      reset_peak_rss();
      start = Stamp{};
      cw::rules::LoadResult loaded = cw::rules::load_packs(pack_paths);
      fig.add("rules", since(start), static_cast<double>(status_kib("VmHWM")));
      if (!loaded.ok()) {
        std::cerr << loaded.render();
        return 1;
      }

      reset_peak_rss();
      start = Stamp{};
      PhaseClock phases(start);
      cw::engine::BuildOptions options;
      options.progress = [&](std::string_view phase, uint64_t, uint64_t) { phases.report(phase); };
      cw::engine::BuildResult built = cw::engine::build_graph(trace, loaded.rules, options);
      const Stamp done;
      phases.close(done);
      fig.add("build", since(start, done), static_cast<double>(status_kib("VmHWM")));
      std::map<std::string, Elapsed> by_phase;  // a phase reported twice counts once, summed
      std::vector<std::string> order;
      for (const auto& [name, took] : phases.durations()) {
        if (!by_phase.count(name)) order.push_back(name);
        by_phase[name].wall += took.wall;
        by_phase[name].cpu += took.cpu;
      }
      for (const auto& name : order) fig.add("build." + name, by_phase[name], 0);

      fig.events = trace.events.size();
      fig.processes = trace.processes.size();
      fig.threads = trace.threads.size();
      fig.packs = loaded.rules.packs.size();
      fig.vertices = built.graph.segments.size();
      fig.edges = built.graph.edges.size();
      fig.strong = fig.weak = fig.boosted = 0;
      for (const auto& e : built.graph.edges) {
        if (e.strength == cw::engine::Strength::Strong) ++fig.strong;
        if (e.strength == cw::engine::Strength::Weak) ++fig.weak;
        if (e.strength == cw::engine::Strength::Boosted) ++fig.boosted;
      }
      fig.pruned = built.stats.pruned;
      fig.cuts = built.stats.cuts;
    }
  } catch (const std::exception& e) {
    std::cerr << "cw-bench-graph: " << e.what() << "\n";
    return 1;
  }

  // Resetting the high-water mark resets ru_maxrss too: the run's peak is the largest of
  // the phases' marks.
  double peak_kib = static_cast<double>(max_rss_kib());
  for (const auto& [name, runs] : fig.phases)
    for (double kib : runs.peak_kib) peak_kib = std::max(peak_kib, kib);
  const double events = static_cast<double>(fig.events);
  if (json) {
    nlohmann::ordered_json out;
    out["trace"] = trace_path;
    out["repeat"] = repeat;
    out["events"] = fig.events;
    out["processes"] = fig.processes;
    out["threads"] = fig.threads;
    out["packs"] = fig.packs;
    out["vertices"] = fig.vertices;
    out["edges"] = {{"total", fig.edges},
                    {"strong", fig.strong},
                    {"weak", fig.weak},
                    {"boosted", fig.boosted},
                    {"pruned", fig.pruned}};
    out["cuts"] = fig.cuts;
    out["phases"] = nlohmann::ordered_json::array();
    for (const auto& name : fig.phase_order) {
      const PhaseRuns& p = fig.phases[name];
      const double secs = median(p.seconds), cpu = median(p.cpu_seconds);
      nlohmann::ordered_json ph{{"phase", name},
                                {"median_s", secs},
                                {"events_per_s", secs > 0 ? events / secs : 0.0},
                                {"median_cpu_s", cpu},
                                {"events_per_cpu_s", cpu > 0 ? events / cpu : 0.0}};
      if (name.find('.') == std::string::npos) ph["peak_rss_mib"] = median(p.peak_kib) / 1024;
      out["phases"].push_back(ph);
    }
    out["max_rss_mib"] = peak_kib / 1024;
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (markdown) {
    print_markdown(fig, repeat, peak_kib);
    return 0;
  }
  std::printf("%s: %llu events, %llu processes, %llu threads; %zu packs\n", trace_path.c_str(),
              static_cast<unsigned long long>(fig.events),
              static_cast<unsigned long long>(fig.processes),
              static_cast<unsigned long long>(fig.threads), fig.packs);
  std::printf(
      "graph: %llu vertices, %llu edges (%llu strong, %llu weak, %llu boosted; %llu pruned), %llu "
      "cuts\n",
      static_cast<unsigned long long>(fig.vertices), static_cast<unsigned long long>(fig.edges),
      static_cast<unsigned long long>(fig.strong), static_cast<unsigned long long>(fig.weak),
      static_cast<unsigned long long>(fig.boosted), static_cast<unsigned long long>(fig.pruned),
      static_cast<unsigned long long>(fig.cuts));
  std::printf("%-14s %9s %13s %9s %13s %13s   (medians of %d runs)\n", "phase", "wall s",
              "events/s", "CPU s", "events/CPU s", "peak RSS MiB", repeat);
  for (const auto& name : fig.phase_order) {
    const PhaseRuns& p = fig.phases[name];
    const double secs = median(p.seconds), cpu = median(p.cpu_seconds);
    const bool sub = name.find('.') != std::string::npos;
    const std::string label = sub ? "  " + name.substr(6) : name;
    const std::string peak =
        sub ? "" : std::to_string(static_cast<long long>(median(p.peak_kib) / 1024));
    std::printf("%-14s %9.3f %13.0f %9.3f %13.0f %13s\n", label.c_str(), secs,
                secs > 0 ? events / secs : 0.0, cpu, cpu > 0 ? events / cpu : 0.0, peak.c_str());
  }
  std::printf("peak RSS of the whole run: %.0f MiB\n", peak_kib / 1024);
  return 0;
}
