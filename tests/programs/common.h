// What every test program shares: its options (-v says what happened, -t prints the
// workload's own wall time), failing with a message, and a monotonic clock. Everything is
// static inline so each program stays one translation unit.
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct options {
  int verbose;        // -v: say what happened (pids, counts) once the workload is done
  int print_elapsed;  // -t: print "elapsed_ns=N", the workload's wall time
  int positional_count;
  char** positional;  // the other arguments, in order
};

static const char* program_name = "cw-prog";

// Prints "NAME: message" (with strerror(errno) when `with_errno`) and exits 1.
static inline void fail_impl(int with_errno, const char* format, ...) {
  int saved_errno = errno;
  va_list args;
  va_start(args, format);
  fprintf(stderr, "%s: ", program_name);
  vfprintf(stderr, format, args);
  va_end(args);
  if (with_errno) fprintf(stderr, ": %s", strerror(saved_errno));
  fputc('\n', stderr);
  exit(1);
}
#define fail(...) fail_impl(0, __VA_ARGS__)
#define fail_errno(...) fail_impl(1, __VA_ARGS__)

static inline struct options parse_options(int argc, char** argv, const char* name) {
  program_name = name;
  struct options options = {0, 0, 0, NULL};
  options.positional = calloc((size_t)argc + 1, sizeof(char*));
  if (!options.positional) fail_errno("calloc");
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-v") == 0) {
      options.verbose = 1;
    } else if (strcmp(argv[i], "-t") == 0) {
      options.print_elapsed = 1;
    } else {
      options.positional[options.positional_count++] = argv[i];
    }
  }
  return options;
}

// The positional argument at `index` as a positive count, or `fallback` when absent.
static inline long count_argument(const struct options* options, int index, long fallback,
                                  const char* what) {
  if (index >= options->positional_count) return fallback;
  const char* text = options->positional[index];
  char* end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value <= 0)
    fail("%s must be a positive integer, got '%s'", what, text);
  return value;
}

static inline long long monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static inline void sleep_ns(long long duration_ns) {
  struct timespec duration = {(time_t)(duration_ns / 1000000000LL),
                              (long)(duration_ns % 1000000000LL)};
  while (nanosleep(&duration, &duration) != 0) {
    if (errno != EINTR) fail_errno("nanosleep");
  }
}

static inline void report_elapsed(const struct options* options, long long start_ns) {
  if (options->print_elapsed) printf("elapsed_ns=%lld\n", monotonic_ns() - start_ns);
}
