// Instrumentation must never change what a program does. cw-prog-hookstress is
// built with AddressSanitizer and exercises what a hook or a watchpoint going in and out
// could break, with output that does not depend on timing, so that an instrumented run
// can be compared with a plain one byte for byte:
//
//   - 8 worker threads, ROUNDS rounds each (a 20 ms pause between rounds, so a recording
//     attaches and detaches while they run): each round calls the hooked stress_work()
//     (inside the hooked stress_round()) 200 times, checks every result against the same
//     computation done without a call, and adds 1 to the watched flag `stress_flag`;
//   - a thread that sends SIGUSR1 to each worker in turn, one at a time, waiting until it
//     is handled; the handler calls stress_work() too (a hook entered from a handler);
//   - a thread that forks a child every 50 ms (the child calls stress_work(), touches the
//     flag and exits with a status from the result) and waits for it, and every other time
//     the child execs this program again (`child N`), which does the same after its exec;
//   - at the end the process execs itself (`final CHECKSUM`) while the recorder may still
//     be attached, and that image prints the last line and exits 3.
//
//   cw-prog-hookstress [ROUNDS]     (default 100: about 2 s)
//
// Prints the workers' checksum, the flag's final value, the counts of signals, forks and
// execs checked, then "final: ok"; exits 3 when all was right (0 would not tell an exit
// status passed on from a lost one), 1 on the first thing that was not.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum { kWorkers = 8, kCallsPerRound = 200, kSignals = 40, kForks = 20 };

// The watched flag (tests/record/packs/stress.cw); every access is an atomic add or load.
volatile int stress_flag;

static long rounds = 100;
static atomic_int workers_done;
static pthread_t worker_threads[kWorkers];
static atomic_int handled[kWorkers];
// Workers that have set their index: a signal sent before would find none to count it.
static atomic_int workers_started;
static atomic_int handler_wrong;
static __thread int worker_index = -1;

// What stress_work computes, written again without a call, to check it.
static uint64_t expected_work(uint64_t x) {
  uint64_t h = x * 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 8; ++i) h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull + (uint64_t)i;
  return h;
}

// Hooked (non-static, never inlined: its prologue is a normal one). A stack array ASan
// guards with redzones, so a hook that corrupted the stack would show; no malloc, since
// the signal handler calls it too.
__attribute__((noinline)) uint64_t stress_work(uint64_t x) {
  uint64_t cells[8];
  uint64_t h = x * 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 8; ++i) {
    h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull + (uint64_t)i;
    cells[i] = h;
  }
  volatile int last = 7;
  return cells[last];
}

// Hooked too: the rule's "within" call; returns how many results were wrong.
// The results go through the heap, which ASan checks.
__attribute__((noinline)) int stress_round(uint64_t seed, uint64_t* checksum) {
  uint64_t* got = malloc(kCallsPerRound * sizeof *got);
  if (!got) fail_errno("malloc");
  int wrong = 0;
  for (int i = 0; i < kCallsPerRound; ++i)
    got[i] = stress_work(seed * kCallsPerRound + (uint64_t)i);
  for (int i = 0; i < kCallsPerRound; ++i) {
    if (got[i] != expected_work(seed * kCallsPerRound + (uint64_t)i)) ++wrong;
    *checksum = (*checksum ^ got[i]) * 0x100000001b3ull;
  }
  free(got);
  return wrong;
}

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static void on_usr1(int signal_number) {
  (void)signal_number;
  int saved = errno;
  if (worker_index >= 0) {
    if (stress_work((uint64_t)worker_index) != expected_work((uint64_t)worker_index))
      atomic_fetch_add(&handler_wrong, 1);
    atomic_fetch_add(&handled[worker_index], 1);
  }
  errno = saved;
}

struct worker_result {
  uint64_t checksum;
  int wrong;
};
static struct worker_result results[kWorkers];

static void* worker(void* argument) {
  worker_index = (int)(intptr_t)argument;
  atomic_fetch_add(&workers_started, 1);
  struct worker_result* r = &results[worker_index];
  for (long round = 0; round < rounds; ++round) {
    r->wrong += stress_round((uint64_t)(worker_index * rounds + round), &r->checksum);
    __atomic_fetch_add(&stress_flag, 1, __ATOMIC_SEQ_CST);
    (void)__atomic_load_n(&stress_flag, __ATOMIC_SEQ_CST);
    pause_ms(20);
  }
  atomic_fetch_add(&workers_done, 1);
  return NULL;
}

// One signal at a time, each waited for: none merges with another, so all are counted.
static void* signaller(void* argument) {
  (void)argument;
  // A worker that has not run yet has no index, and its handler would count nothing.
  while (atomic_load(&workers_started) < kWorkers) pause_ms(1);
  for (int i = 0; i < kSignals; ++i) {
    int target = i % kWorkers;
    int before = atomic_load(&handled[target]);
    if (atomic_load(&workers_done) > 0) fail("a worker ended before the signals were sent");
    if (pthread_kill(worker_threads[target], SIGUSR1) != 0) fail("pthread_kill");
    for (int waited = 0; atomic_load(&handled[target]) == before; ++waited) {
      if (waited > 5000) fail("signal %d to worker %d not handled within 5 s", i, target);
      pause_ms(1);
    }
    pause_ms(5);
  }
  return NULL;
}

// The child's work: a hooked call and the flag, then an exit status from the result.
static int child_status(long n) {
  uint64_t got = stress_work((uint64_t)n);
  __atomic_fetch_add(&stress_flag, 1, __ATOMIC_SEQ_CST);
  return got == expected_work((uint64_t)n) ? (int)(10 + n % 100) : 2;
}

static const char* self_path;
static int forks_checked, execs_checked;

static void* forker(void* argument) {
  (void)argument;
  for (long n = 0; n < kForks; ++n) {
    const int exec_it = n % 2 == 1;
    pid_t child = fork();
    if (child < 0) fail_errno("fork");
    if (child == 0) {
      if (exec_it) {
        char number[32];
        snprintf(number, sizeof number, "%ld", n);
        execl(self_path, self_path, "child", number, (char*)NULL);
        _exit(126);
      }
      _exit(child_status(n));
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
      if (errno != EINTR) fail_errno("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 10 + n % 100)
      fail("child %ld (%s) ended with status 0x%x, not exit %ld", n, exec_it ? "exec" : "fork",
           status, 10 + n % 100);
    if (exec_it)
      ++execs_checked;
    else
      ++forks_checked;
    pause_ms(50);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "child") == 0) return child_status(strtol(argv[2], NULL, 10));
  if (argc == 3 && strcmp(argv[1], "final") == 0) {
    // The image after the process's own exec: the hook or probe state must not follow.
    if (stress_work(7) != expected_work(7)) fail("stress_work wrong after exec");
    printf("final: ok (%s)\n", argv[2]);
    return 3;
  }
  struct options options = parse_options(argc, argv, "cw-prog-hookstress");
  rounds = count_argument(&options, 0, 100, "ROUNDS");
  // The program's own path, so that an exec'd image keeps the name (not "exe").
  static char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) fail_errno("readlink /proc/self/exe");
  path[length] = '\0';
  self_path = path;
  setvbuf(stdout, NULL, _IONBF, 0);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) fail_errno("sigaction");

  for (int i = 0; i < kWorkers; ++i)
    if (pthread_create(&worker_threads[i], NULL, worker, (void*)(intptr_t)i) != 0)
      fail("pthread_create");
  pthread_t signal_thread, fork_thread;
  if (pthread_create(&signal_thread, NULL, signaller, NULL) != 0) fail("pthread_create");
  if (pthread_create(&fork_thread, NULL, forker, NULL) != 0) fail("pthread_create");
  pthread_join(signal_thread, NULL);
  pthread_join(fork_thread, NULL);
  for (int i = 0; i < kWorkers; ++i) pthread_join(worker_threads[i], NULL);

  uint64_t checksum = 0;
  int wrong = 0, signals = 0;
  for (int i = 0; i < kWorkers; ++i) {
    checksum = checksum * 31 + results[i].checksum;
    wrong += results[i].wrong;
    signals += atomic_load(&handled[i]);
  }
  printf("workers: %d x %ld rounds x %d calls, %d wrong, checksum %016llx\n", kWorkers, rounds,
         kCallsPerRound, wrong, (unsigned long long)checksum);
  // The children's adds went to their own copies: only the workers' count here.
  printf("flag: %d\n", __atomic_load_n(&stress_flag, __ATOMIC_SEQ_CST));
  printf("signals: %d sent, %d handled, %d wrong in the handler\n", kSignals, signals,
         atomic_load(&handler_wrong));
  printf("children: %d forked, %d exec'd, all exited as expected\n", forks_checked, execs_checked);
  if (wrong || atomic_load(&handler_wrong) || signals != kSignals) return 1;
  char text[32];
  snprintf(text, sizeof text, "%016llx", (unsigned long long)checksum);
  execl(self_path, self_path, "final", text, (char*)NULL);
  fail_errno("exec %s", self_path);
}
