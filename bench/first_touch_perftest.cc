// What this machine charges for memory a process touches for the first time, against
// memory it touches again. A graph rebuild writes hundreds of MB into fresh vectors; on a VM
// whose host takes back the guest's free pages (virtio-balloon free page reporting), each
// fresh page costs a trip to the host, and that cost is part of every figure in
// bench/RESULTS.md measured there. Run it beside a bench to know how much.
//
//   cw-bench-first-touch [--mib N] [-n ROUNDS] [--pause S]
//
// Each round, one page-sized store per 4 KiB page of:
//   fresh     an anonymous mapping just made (the kernel clears each page on the fault);
//   again     the same pages stored once more (no fault: the floor of the stores);
//   recycled  a new mapping made right after the first was unmapped (pages the kernel
//             had just freed, not yet given back to a host);
// then `--pause` seconds idle, so that a host taking free pages back has the time to.
#include <sys/mman.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "bench/measure.h"

namespace {

constexpr size_t kPage = 4096;

// Seconds to store one byte into every page of [p, p + bytes).
double touch(char* p, size_t bytes) {
  const cw::bench::Stamp start;
  for (size_t i = 0; i < bytes; i += kPage) p[i] = static_cast<char>(i);
  // The stores must happen: the compiler may not drop writes to memory it cannot see read.
  asm volatile("" : : "r"(p) : "memory");
  return cw::bench::since(start).wall;
}

char* fresh_mapping(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("cw-bench-first-touch: mmap");
    std::exit(2);
  }
  return static_cast<char*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the cost of touching fresh memory against memory touched before"};
  size_t mib = 512;
  int rounds = 5;
  double pause = 5;
  app.add_option("--mib", mib, "MiB per mapping")->check(CLI::Range(size_t{1}, size_t{65536}));
  app.add_option("-n", rounds, "rounds")->check(CLI::Range(1, 1000));
  app.add_option("--pause", pause, "seconds idle after each round")->check(CLI::Range(0.0, 600.0));
  CLI11_PARSE(app, argc, argv);
  const size_t bytes = mib << 20;
  const double gib = static_cast<double>(bytes) / (1u << 30);
  std::vector<double> fresh, again, recycled;
  for (int r = 0; r < rounds; ++r) {
    char* p = fresh_mapping(bytes);
    fresh.push_back(touch(p, bytes) / gib);
    again.push_back(touch(p, bytes) / gib);
    munmap(p, bytes);
    p = fresh_mapping(bytes);
    recycled.push_back(touch(p, bytes) / gib);
    munmap(p, bytes);
    std::printf("round %d: fresh %.3f s/GiB, again %.3f s/GiB, recycled %.3f s/GiB\n", r + 1,
                fresh.back(), again.back(), recycled.back());
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
  }
  std::printf(
      "median of %d rounds of %zu MiB: fresh %.3f s/GiB, again %.3f s/GiB, recycled %.3f "
      "s/GiB\n",
      rounds, mib, cw::bench::median(fresh), cw::bench::median(again), cw::bench::median(recycled));
  return 0;
}
