// A test fixture for the scans of instrument/: a global flag that one function stores,
// another loads and a third polls, built as a PIE and as a fixed-address executable.
//
//   cw-instr-flag-{pie,nopie} [N]   sets the flag to N (default 1) and prints what it reads;
//                                   with N = 0 it polls forever
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

// Non-static, so the symbol tables name them.
volatile int shared_flag;
volatile long neighbour;  // beside the flag: its accesses must not count as the flag's

__attribute__((noinline)) void set_flag(int value) { shared_flag = value; }

__attribute__((noinline)) int read_flag(void) { return shared_flag; }

__attribute__((noinline)) void bump_neighbour(void) { neighbour = neighbour + 1; }

// Polls until the flag is set, yielding meanwhile: the loop flags suggest finds.
__attribute__((noinline)) void wait_flag(void) {
  while (!shared_flag) sched_yield();
}

int main(int argc, char** argv) {
  set_flag(argc > 1 ? atoi(argv[1]) : 1);
  bump_neighbour();
  wait_flag();
  printf("%d\n", read_flag());
  return 0;
}
