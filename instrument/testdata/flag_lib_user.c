// A test fixture for the scans of instrument/: defines the flag flag_lib.c reaches through
// its GOT, then polls it in the library's lib_wait.
//
//   cw-instr-flag-libuser [N]   sets the flag to N first (default: leave it 0 and spin)
#include <stdlib.h>

volatile int extern_flag;

void lib_set(int value);
void lib_wait(void);

int main(int argc, char** argv) {
  if (argc > 1) lib_set(atoi(argv[1]));
  lib_wait();
  return 0;
}
