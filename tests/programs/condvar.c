// A thread woken through a pthread condition variable (futex wait / futex wake).
//
//   cw-prog-condvar [-v] [-t]          the main thread waits on the condition variable until
//       a second thread, after sleeping 50 ms, sets a flag and signals
//   cw-prog-condvar [-v] [-t] loop N   N hand-offs: the two threads take turns, each waiting
//       for its turn on its own condition variable and signalling the other's
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

// --- one wake-up ---

static pthread_cond_t flag_set = PTHREAD_COND_INITIALIZER;
static int flag;
static pid_t signaller_tid;
static int verbose;  // gettid() only when -v asks, so that quiet runs make no extra syscall

static void* set_flag_later(void* unused) {
  (void)unused;
  if (verbose) signaller_tid = (pid_t)syscall(SYS_gettid);
  sleep_ns(50 * 1000000LL);
  pthread_mutex_lock(&mutex);
  flag = 1;
  pthread_cond_signal(&flag_set);
  pthread_mutex_unlock(&mutex);
  return NULL;
}

static void wait_for_flag(const struct options* options) {
  verbose = options->verbose;
  pthread_t signaller;
  int error = pthread_create(&signaller, NULL, set_flag_later, NULL);
  if (error != 0) errno = error, fail_errno("pthread_create");
  pthread_mutex_lock(&mutex);
  while (!flag) pthread_cond_wait(&flag_set, &mutex);
  pthread_mutex_unlock(&mutex);
  error = pthread_join(signaller, NULL);
  if (error != 0) errno = error, fail_errno("pthread_join");
  if (options->verbose)
    printf("condvar: waiter %d signaller %d\n", (int)getpid(), (int)signaller_tid);
}

// --- N hand-offs ---

// Hand-off k (0-based) is made by thread k % 2: it waits until `turn` == k, then advances
// it and signals the other thread's condition variable.
static pthread_cond_t turn_changed[2] = {PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};
static long turn;
static long hand_offs;

static void take_turns(int parity) {
  for (long k = parity; k < hand_offs; k += 2) {
    pthread_mutex_lock(&mutex);
    while (turn != k) pthread_cond_wait(&turn_changed[parity], &mutex);
    turn = k + 1;
    pthread_cond_signal(&turn_changed[1 - parity]);
    pthread_mutex_unlock(&mutex);
  }
}

static void* take_odd_turns(void* unused) {
  (void)unused;
  take_turns(1);
  return NULL;
}

static void hand_off_loop(const struct options* options, long count) {
  hand_offs = count;
  pthread_t other;
  int error = pthread_create(&other, NULL, take_odd_turns, NULL);
  if (error != 0) errno = error, fail_errno("pthread_create");
  take_turns(0);
  error = pthread_join(other, NULL);
  if (error != 0) errno = error, fail_errno("pthread_join");
  if (turn != count) fail("after %ld hand-offs the turn is %ld", count, turn);
  if (options->verbose) printf("condvar loop: %ld hand-offs\n", count);
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-condvar");
  long long start_ns = monotonic_ns();
  if (options.positional_count == 0) {
    wait_for_flag(&options);
  } else if (strcmp(options.positional[0], "loop") == 0 && options.positional_count <= 2) {
    hand_off_loop(&options, count_argument(&options, 1, 1000, "N"));
  } else {
    fail("usage: cw-prog-condvar [-v] [-t] [loop N]");
  }
  report_elapsed(&options, start_ns);
  return 0;
}
