// cw-bench-read: times reading binary traces (read_trace) and nothing else, to compare
// compressed and uncompressed copies of one trace. The files are read in turn, round
// after round, so a change in the machine's load hits them alike; one untimed read of
// each comes first so every timed read finds the file in the page cache. Per read it also
// counts the decompression buffers allocated and the minor page faults taken (fresh
// memory the process touched), medians of the timed reads.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/measure.h"
#include "trace/binary_format.h"
#include "trace/binary_format_inflater.h"

int main(int argc, char** argv) {
  CLI::App app{"time reading binary traces: median wall and CPU seconds per file"};
  std::vector<std::string> files;
  int repeats = 5;
  app.add_option("TRACE", files, "binary traces")->required()->check(CLI::ExistingFile);
  app.add_option("-n,--repeats", repeats, "timed reads of each file")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::vector<std::vector<double>> wall(files.size()), cpu(files.size()), buffers(files.size()),
      faults(files.size());
  auto minor_faults = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_minflt);
  };
  std::vector<uint64_t> events(files.size());
  for (int round = -1; round < repeats; ++round) {
    for (size_t f = 0; f < files.size(); ++f) {
      cw::Trace trace;
      const double buffers_before = cw::binary_format::inflate_buffers_allocated();
      const double faults_before = minor_faults();
      cw::bench::Stamp start;
      cw::ReadReport report = cw::read_trace(files[f], trace);
      cw::bench::Elapsed took = cw::bench::since(start);
      const double read_faults = minor_faults() - faults_before;
      const double read_buffers = cw::binary_format::inflate_buffers_allocated() - buffers_before;
      if (!report.clean()) {
        std::fprintf(stderr, "%s: damaged (%zu ranges skipped)\n", files[f].c_str(),
                     report.skipped.size());
        return 1;
      }
      events[f] = trace.events.size();
      if (round < 0) continue;  // the warm-up
      wall[f].push_back(took.wall);
      cpu[f].push_back(took.cpu);
      buffers[f].push_back(read_buffers);
      faults[f].push_back(read_faults);
    }
  }
  std::printf("%-60s %14s %12s %7s %9s %9s %8s %12s  %s\n", "file", "bytes", "events", "format",
              "wall s", "cpu s", "buffers", "minor faults", "wall s of each read");
  for (size_t f = 0; f < files.size(); ++f) {
    std::string runs;
    for (double w : wall[f]) runs += (runs.empty() ? "" : " ") + std::to_string(w).substr(0, 5);
    FILE* in = std::fopen(files[f].c_str(), "rb");
    uint32_t version[2] = {0, 0};
    if (in) {
      std::fseek(in, 8, SEEK_SET);
      if (std::fread(version, 4, 2, in) != 2) version[0] = version[1] = 0;
      std::fclose(in);
    }
    std::printf("%-60s %14ju %12ju %5u.%-1u %9.3f %9.3f %8.0f %12.0f  %s\n", files[f].c_str(),
                static_cast<uintmax_t>(std::filesystem::file_size(files[f])),
                static_cast<uintmax_t>(events[f]), version[0], version[1],
                cw::bench::median(wall[f]), cw::bench::median(cpu[f]),
                cw::bench::median(buffers[f]), cw::bench::median(faults[f]), runs.c_str());
  }
  return 0;
}
