// Contended pthread mutex: THREADS threads (default 4) each lock, increment a shared
// counter and unlock N times (default 200000); the counter must end at THREADS * N. With
// more threads than CPUs, waiters sleep in futex() and are woken by the unlocker.
//
//   cw-prog-mutex [-v] [-t] [THREADS] [N]
#define _GNU_SOURCE
#include <pthread.h>

#include "common.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long increments_per_thread;

static void* increment(void* unused) {
  (void)unused;
  for (long i = 0; i < increments_per_thread; ++i) {
    pthread_mutex_lock(&mutex);
    ++counter;
    pthread_mutex_unlock(&mutex);
  }
  return NULL;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-mutex");
  if (options.positional_count > 2) fail("usage: cw-prog-mutex [-v] [-t] [THREADS] [N]");
  long thread_count = count_argument(&options, 0, 4, "THREADS");
  increments_per_thread = count_argument(&options, 1, 200000, "N");
  if (thread_count > 1024) fail("THREADS must be at most 1024, got %ld", thread_count);

  long long start_ns = monotonic_ns();
  pthread_t threads[1024];
  for (long i = 0; i < thread_count; ++i) {
    int error = pthread_create(&threads[i], NULL, increment, NULL);
    if (error != 0) errno = error, fail_errno("pthread_create");
  }
  for (long i = 0; i < thread_count; ++i) {
    int error = pthread_join(threads[i], NULL);
    if (error != 0) errno = error, fail_errno("pthread_join");
  }
  report_elapsed(&options, start_ns);
  if (counter != thread_count * increments_per_thread)
    fail("counter is %ld, expected %ld", counter, thread_count * increments_per_thread);
  if (options.verbose)
    printf("mutex: %ld threads x %ld increments\n", thread_count, increments_per_thread);
  return 0;
}
