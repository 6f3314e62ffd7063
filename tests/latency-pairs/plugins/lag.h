/* The injected lag of the external latency pairs (tests/latency-pairs/README.md).
 * CW_LAG=spin:N burns N rounds of arithmetic in the calling function; CW_LAG=sleep:US
 * sleeps US microseconds in it (off the CPU, as a slow disk or remote lookup would);
 * unset or anything else: no lag. Always inlined, so the time is the caller's own: the
 * plug-in function that a fix would touch. */
#pragma once
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline __attribute__((always_inline)) void cw_lag(void) {
  static int mode = -1; /* 0 none, 1 spin, 2 sleep */
  static long amount;
  if (mode < 0) {
    const char* v = getenv("CW_LAG");
    mode = 0;
    if (v && strncmp(v, "spin:", 5) == 0) mode = 1, amount = atol(v + 5);
    if (v && strncmp(v, "sleep:", 6) == 0) mode = 2, amount = atol(v + 6);
  }
  if (mode == 1) {
    volatile unsigned long x = 88172645463325252UL;
    for (long i = 0; i < amount; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  } else if (mode == 2) {
    struct timespec ts = {amount / 1000000, (amount % 1000000) * 1000};
    nanosleep(&ts, NULL);
  }
}
