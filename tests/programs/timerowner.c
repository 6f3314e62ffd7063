// A wait ended by a timer another thread armed, while unrelated processes keep the CPUs
// busy: the timer's expiry runs in an interrupt on whatever thread a CPU was running.
//
//   cw-prog-timerowner [-v] [-t] [posix|timerfd]
//
// Two bystander processes (comm cw-bystander) spin for 1.5 s. Thread cw-armer arms an
// 800 ms one-shot timer and then sleeps 2 s; thread cw-waiter blocks until the timer
// expires: posix (default) a timer_create timer that signals cw-waiter alone
// (SIGEV_THREAD_ID), awaited in sigwaitinfo; timerfd a timerfd, awaited in read(). The
// waiter's hang was ended by cw-armer's timer, never by a bystander.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define TIMER_NS (800 * 1000000L)

static int use_timerfd;
static int timer_fd = -1;
static pid_t waiter_tid;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t waiter_ready = PTHREAD_COND_INITIALIZER;

static void spin_for(long long ns) {
  long long end = monotonic_ns() + ns;
  volatile uint64_t n = 0;
  while (monotonic_ns() < end) ++n;
}

static void* waiter(void* unused) {
  (void)unused;
  prctl(PR_SET_NAME, "cw-waiter");
  pthread_mutex_lock(&lock);
  waiter_tid = (pid_t)syscall(SYS_gettid);
  pthread_cond_signal(&waiter_ready);
  pthread_mutex_unlock(&lock);
  if (use_timerfd) {
    uint64_t expirations = 0;
    if (read(timer_fd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
      fail_errno("read timerfd");
  } else {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN);
    siginfo_t info;
    if (sigwaitinfo(&set, &info) != SIGRTMIN) fail_errno("sigwaitinfo");
  }
  return NULL;
}

static void* armer(void* unused) {
  (void)unused;
  prctl(PR_SET_NAME, "cw-armer");
  // Let the waiter block first, so its wait is one long block ended by the timer.
  struct timespec settle = {0, 50 * 1000000L};
  nanosleep(&settle, NULL);
  struct itimerspec once = {{0, 0}, {0, TIMER_NS}};
  if (use_timerfd) {
    if (timerfd_settime(timer_fd, 0, &once, NULL) != 0) fail_errno("timerfd_settime");
  } else {
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SIGRTMIN;
    event._sigev_un._tid = waiter_tid;
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) fail_errno("timer_create");
    if (timer_settime(timer, 0, &once, NULL) != 0) fail_errno("timer_settime");
  }
  struct timespec rest = {2, 0};
  nanosleep(&rest, NULL);
  return NULL;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-timerowner");
  if (options.positional_count == 1 && strcmp(options.positional[0], "timerfd") == 0)
    use_timerfd = 1;
  else if (options.positional_count > 1 ||
           (options.positional_count == 1 && strcmp(options.positional[0], "posix") != 0))
    fail("usage: cw-prog-timerowner [-v] [-t] [posix|timerfd]");
  long long start_ns = monotonic_ns();

  pid_t bystanders[2];
  for (int i = 0; i < 2; ++i) {
    bystanders[i] = fork();
    if (bystanders[i] < 0) fail_errno("fork");
    if (bystanders[i] == 0) {
      prctl(PR_SET_NAME, "cw-bystander");
      spin_for(1500LL * 1000000);
      _exit(0);
    }
  }

  // The timer's signal is taken by sigwaitinfo, never delivered to a handler.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN);
  if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) fail("pthread_sigmask");
  if (use_timerfd && (timer_fd = timerfd_create(CLOCK_MONOTONIC, 0)) < 0)
    fail_errno("timerfd_create");

  pthread_t waiting, arming;
  pthread_mutex_lock(&lock);
  if (pthread_create(&waiting, NULL, waiter, NULL) != 0) fail("pthread_create");
  while (waiter_tid == 0) pthread_cond_wait(&waiter_ready, &lock);
  pthread_mutex_unlock(&lock);
  if (pthread_create(&arming, NULL, armer, NULL) != 0) fail("pthread_create");
  pthread_join(waiting, NULL);
  pthread_join(arming, NULL);
  for (int i = 0; i < 2; ++i) waitpid(bystanders[i], NULL, 0);

  if (options.verbose) printf("waiter=%d %s\n", (int)waiter_tid, use_timerfd ? "timerfd" : "posix");
  if (options.print_elapsed) printf("elapsed_ns=%lld\n", monotonic_ns() - start_ns);
  return 0;
}
