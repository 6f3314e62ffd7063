// A known call chain in code built WITHOUT frame pointers (-fomit-frame-pointer, -O2),
// for the tests of --call-graph dwarf (tests/record/dwarf_stacks.t): main() calls
// outer_level(), which calls middle_level(), which calls inner_level(), which computes for
// ROUNDS rounds and sleeps 0.1 ms every 2^20 rounds (a blocking syscall, so a stack is
// taken there too). A frame-pointer walk from inner_level cannot reach main: none of these
// functions keeps a frame pointer, so the walk reads whatever rbp holds.
//
//   cw-prog-deepchain [-v] [-t] [ROUNDS]   ROUNDS default 300000000
#define _GNU_SOURCE
#include "common.h"

volatile unsigned long sink;

__attribute__((noinline)) unsigned long inner_level(long rounds) {
  unsigned long x = 3;
  for (long i = 0; i < rounds; ++i) {
    x = x * 6364136223846793005UL + 1442695040888963407UL;
    sink = x;
    if ((i & 0xfffff) == 0) sleep_ns(100000);
  }
  return x;
}

// Each level uses its callee's result after the call, so the call is not a tail call
// (which would leave the caller off the stack).
__attribute__((noinline)) unsigned long middle_level(long rounds) {
  unsigned long v = inner_level(rounds);
  sink = v;
  return v + 1;
}

__attribute__((noinline)) unsigned long outer_level(long rounds) {
  unsigned long v = middle_level(rounds);
  sink = v;
  return v + 2;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-deepchain");
  if (options.positional_count > 1) fail("usage: cw-prog-deepchain [-v] [-t] [ROUNDS]");
  const long rounds = count_argument(&options, 0, 300000000, "ROUNDS");
  long long start_ns = monotonic_ns();
  unsigned long v = outer_level(rounds);
  report_elapsed(&options, start_ns);
  if (options.verbose) printf("deepchain: %ld rounds, %lu\n", rounds, v);
  return 0;
}
