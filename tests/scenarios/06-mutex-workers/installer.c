// Mutex contention that makes superfluous wake-up edges (the Argus paper, §3.1 "mutual
// exclusion", §6 Installer: worker threads that contend for a lock wake one another on unlock).
//
//   cw-scn-installer [HOLD_MS]   HOLD_MS (default 700): how long cw-worker-1 holds the lock
//                                in the slow round
//
// Story. The main thread "cw-installer" runs two install rounds. In each it starts three
// worker threads (a sem_post to each) and waits (sem_wait) until cw-worker-3, whose result
// it shows, reports its step done. Every worker takes the one "package database" mutex for
// its step, after some preparation on a CPU without the lock: none for cw-worker-1, 30 ms
// for cw-worker-2, 60 ms for cw-worker-3, so cw-worker-1 has the lock when the others
// queue for it, cw-worker-2 first. cw-worker-1's step, extract_payload(), takes 100 ms in
// round 1 (the baseline) and HOLD_MS in round 2; the others' steps take 5 ms. Each unlock
// wakes the next waiter: cw-worker-1 hands the lock to cw-worker-2, which hands it to
// cw-worker-3, which then posts the main thread.
//
// Expected diagnosis: the hang is cw-installer's wait (LongWait, ~HOLD_MS) in sem_wait,
// ended by cw-worker-3's post. cw-worker-3 was itself blocked on the mutex, and the wake-up
// that let it in came from cw-worker-2's unlock: a lock hand-off, not the cause (cw-worker-2
// waited behind the same holder). Root cause: cw-worker-1, LongRunning, HOLD_MS on a CPU in
// extract_payload() with the lock held. The diagnosis compares the waiters on the baseline
// round's path with what they did during the hang: cw-worker-3 and cw-worker-2 only
// waited, in the lock they were handed on that path, for a holder that was itself hung, so
// it passes over them to cw-worker-1 (an engine that recursed into each would need a
// "diagnose" answer for each of the two).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

enum { kWorkers = 3, kRounds = 2 };

static pthread_mutex_t package_db = PTHREAD_MUTEX_INITIALIZER;  // what the workers contend for
static sem_t go[kWorkers];                                      // main -> worker k: a round started
static sem_t done;  // cw-worker-3 -> main: its step is done
static long hold_ms = 700;
static volatile unsigned long long sink;

static void fail(const char* what, int error) {
  fprintf(stderr, "cw-scn-installer: %s: %s\n", what, strerror(error));
  exit(1);
}

static void set_thread_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail("prctl(PR_SET_NAME)", errno);
}

static void wait_for(sem_t* sem) {
  while (sem_wait(sem) != 0)
    if (errno != EINTR) fail("sem_wait", errno);
}

static long long monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);  // the vDSO: no system call
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

// CPU work for `ms` milliseconds of wall time, with no system call.
static void spin_ms(long ms) {
  unsigned long long x = 88172645463325252ULL;
  long long end = monotonic_ns() + ms * 1000000LL;
  while (monotonic_ns() < end)
    for (int i = 0; i < 1000; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  sink += x;
}

// Preparation without the lock.
__attribute__((noinline)) void read_manifest(long ms) {
  spin_ms(ms);
}

// cw-worker-1's step: unpack the payload into the database. Slow in round 2.
__attribute__((noinline)) void extract_payload(long ms) {
  spin_ms(ms);
}

// The other workers' steps.
__attribute__((noinline)) void update_receipts(long ms) {
  spin_ms(ms);
}

static const long kPrepareMs[kWorkers + 1] = {0, 0, 30, 60};  // by worker number
static const long kStepMs[kWorkers + 1] = {0, 100, 5, 5};

static void* worker(void* arg) {
  int index = (int)(long)arg;  // 1..kWorkers
  char name[16];
  snprintf(name, sizeof name, "cw-worker-%d", index);
  set_thread_name(name);
  for (int round = 1; round <= kRounds; ++round) {
    wait_for(&go[index - 1]);
    if (kPrepareMs[index] > 0) read_manifest(kPrepareMs[index]);
    pthread_mutex_lock(&package_db);
    if (index == 1)
      extract_payload(round == kRounds ? hold_ms : kStepMs[1]);
    else
      update_receipts(kStepMs[index]);
    pthread_mutex_unlock(&package_db);
    if (index == kWorkers && sem_post(&done) != 0) fail("sem_post", errno);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 2) {
    fprintf(stderr, "cw-scn-installer: usage: cw-scn-installer [HOLD_MS]\n");
    return 1;
  }
  if (argc == 2) {
    char* end = NULL;
    hold_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || hold_ms <= 0 || hold_ms > 5000) {
      fprintf(stderr, "cw-scn-installer: HOLD_MS must be 1..5000, got '%s'\n", argv[1]);
      return 1;
    }
  }
  set_thread_name("cw-installer");
  if (sem_init(&done, 0, 0) != 0) fail("sem_init", errno);
  for (int i = 0; i < kWorkers; ++i)
    if (sem_init(&go[i], 0, 0) != 0) fail("sem_init", errno);
  pthread_t threads[kWorkers];
  for (long i = 0; i < kWorkers; ++i) {
    int error = pthread_create(&threads[i], NULL, worker, (void*)(i + 1));
    if (error != 0) fail("pthread_create", error);
    pthread_detach(threads[i]);  // each ends after its last round; nobody waits for it
  }
  for (int round = 1; round <= kRounds; ++round) {
    for (int i = 0; i < kWorkers; ++i)
      if (sem_post(&go[i]) != 0) fail("sem_post", errno);
    wait_for(&done);
  }
  return 0;
}
