// Two CPU-bound phases in two functions of their own, for the latency tests that sample
// stacks (perf record -g, causeway latency): main() calls fast_part(), which loops
// ROUNDS times, then slow_part(), which loops SLOW_FACTOR * ROUNDS times (default 8).
// Neither makes a system call, and neither calls anything while it loops, so a sample
// taken in either names it as the innermost frame, under main.
//
//   cw-prog-hotspot [-v] [-t] [SLOW_FACTOR [ROUNDS]]   ROUNDS default 15000000
//
// A slow run and a normal one differ in SLOW_FACTOR alone: slow_part's time grows with it,
// fast_part's does not.
#define _GNU_SOURCE
#include "common.h"

// Stored every round, so the compiler keeps each loop as written.
volatile unsigned long sink;

// Not inlined and not cloned (ROUNDS comes from the command line, so there is no constant
// to specialise on): the symbol table names each phase.
__attribute__((noinline)) void fast_part(long rounds) {
  unsigned long x = 1;
  for (long i = 0; i < rounds; ++i) {
    x = x * 6364136223846793005UL + 1442695040888963407UL;
    sink = x;
  }
}

__attribute__((noinline)) void slow_part(long rounds) {
  unsigned long x = 2;
  for (long i = 0; i < rounds; ++i) {
    x = x * 6364136223846793005UL + 1442695040888963407UL;
    sink = x;
  }
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-hotspot");
  if (options.positional_count > 2) fail("usage: cw-prog-hotspot [-v] [-t] [SLOW_FACTOR [ROUNDS]]");
  const long factor = count_argument(&options, 0, 8, "SLOW_FACTOR");
  const long rounds = count_argument(&options, 1, 15000000, "ROUNDS");
  long long start_ns = monotonic_ns();
  long long fast_start = start_ns;
  fast_part(rounds);
  long long slow_start = monotonic_ns();
  slow_part(factor * rounds);
  long long end_ns = monotonic_ns();
  report_elapsed(&options, start_ns);
  if (options.verbose)
    printf("hotspot: fast_part %ld rounds in %lld ms, slow_part %ld rounds in %lld ms\n", rounds,
           (slow_start - fast_start) / 1000000, factor * rounds, (end_ns - slow_start) / 1000000);
  return 0;
}
