// A test fixture for the scans of instrument/: position-independent code that reaches
// flags through the GOT — one defined elsewhere, one defined here but preemptible.
#include <sched.h>

extern volatile int extern_flag;
volatile int lib_flag;

void lib_set(int value) { extern_flag = value; }

int lib_read(void) { return extern_flag; }

void lib_set_own(int value) { lib_flag = value; }

// Polls the extern flag: the GOT load is loop-invariant, so the compiler may hoist it.
void lib_wait(void) {
  while (!extern_flag) sched_yield();
}
