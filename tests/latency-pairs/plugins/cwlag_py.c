/* A plain C library that Python loads with ctypes: cw_checksum(BYTES, N), an FNV-1a hash,
 * with the injected lag of lag.h. */
#include <stddef.h>
#include "lag.h"

__attribute__((noinline)) unsigned long long cw_checksum(const unsigned char* s, size_t n) {
  unsigned long long h = 14695981039346656037ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ s[i]) * 1099511628211ULL;
  cw_lag();
  return h;
}
