// Interrupts landing on a thread as it enters a system call. The main thread ("cw-poller"),
// pinned to CPU 0, calls poll() on one pipe with a zero timeout in a tight loop: each call
// returns 0 at once and blocks never. A second thread ("cw-napper"), pinned to the same
// CPU, sleeps 50 µs at a time: each of its sleeps ends in a timer interrupt on CPU 0 that
// wakes it, mostly while cw-poller runs, often while cw-poller is entering poll().
//
//   cw-prog-irqpoll [-v] [-t] [MILLISECONDS]   default 1000
//
// What a recording must show: none of cw-poller's polls blocked or found anything, so
// none of them is worth a record; an interrupt's wake-up says nothing about the call of
// the thread it landed on (kernel/causeway.bpf.c, record_wake).
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static long run_ms;
static volatile int done;
static pid_t poller_tid, napper_tid;
static long polls, naps;

static void set_thread_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME, %s)", name);
}

static void pin_to_cpu0(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) fail_errno("sched_setaffinity(CPU 0)");
}

static void* napper(void* unused) {
  (void)unused;
  set_thread_name("cw-napper");
  napper_tid = (pid_t)syscall(SYS_gettid);
  pin_to_cpu0();
  while (!done) {
    sleep_ns(50000LL);
    ++naps;
  }
  return NULL;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-irqpoll");
  if (options.positional_count > 1) fail("usage: cw-prog-irqpoll [-v] [-t] [MILLISECONDS]");
  run_ms = count_argument(&options, 0, 1000, "MILLISECONDS");

  set_thread_name("cw-poller");
  poller_tid = (pid_t)syscall(SYS_gettid);
  pin_to_cpu0();
  int fds[2];
  if (pipe(fds) != 0) fail_errno("pipe");
  long long start_ns = monotonic_ns();
  pthread_t napper_thread;
  int error = pthread_create(&napper_thread, NULL, napper, NULL);
  if (error != 0) errno = error, fail_errno("pthread_create cw-napper");
  const long long end_ns = start_ns + run_ms * 1000000LL;
  struct pollfd p = {.fd = fds[0], .events = POLLIN};
  while (monotonic_ns() < end_ns) {
    if (poll(&p, 1, 0) != 0) fail("poll on an empty pipe found something");
    ++polls;
  }
  done = 1;
  error = pthread_join(napper_thread, NULL);
  if (error != 0) errno = error, fail_errno("pthread_join cw-napper");
  report_elapsed(&options, start_ns);
  if (options.verbose)
    printf("irqpoll: cw-poller %d polled %ld times; cw-napper %d napped %ld times\n",
           (int)poller_tid, polls, (int)napper_tid, naps);
  return 0;
}
