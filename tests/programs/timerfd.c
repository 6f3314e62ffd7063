// A read() on a timerfd, woken when the timer expires (a timer interrupt).
//
//   cw-prog-timerfd [-v] [-t]        the main thread arms a 30 ms one-shot CLOCK_MONOTONIC
//       timer; a second thread, started before, blocks in read() on it
//   cw-prog-timerfd [-v] [-t] same   one thread arms the timer and reads it
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common.h"

static int timer_fd;
static pid_t reader_tid;
static int verbose;  // gettid() only when -v asks, so that quiet runs make no extra syscall

static void arm_timer(void) {
  struct itimerspec once = {{0, 0}, {0, 30 * 1000000L}};
  if (timerfd_settime(timer_fd, 0, &once, NULL) != 0) fail_errno("timerfd_settime");
}

static void read_expiry(void) {
  if (verbose) reader_tid = (pid_t)syscall(SYS_gettid);
  uint64_t expirations = 0;
  ssize_t got = read(timer_fd, &expirations, sizeof expirations);
  if (got < 0) fail_errno("read timerfd");
  if (got != (ssize_t)sizeof expirations) fail("read timerfd returned %zd bytes", got);
  if (expirations != 1)
    fail("the one-shot timer expired %llu times", (unsigned long long)expirations);
}

static void* reader_thread(void* unused) {
  (void)unused;
  read_expiry();
  return NULL;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-timerfd");
  int same_thread = 0;
  if (options.positional_count == 1 && strcmp(options.positional[0], "same") == 0)
    same_thread = 1;
  else if (options.positional_count != 0)
    fail("usage: cw-prog-timerfd [-v] [-t] [same]");

  verbose = options.verbose;
  long long start_ns = monotonic_ns();
  timer_fd = timerfd_create(CLOCK_MONOTONIC, 0);
  if (timer_fd < 0) fail_errno("timerfd_create");
  if (same_thread) {
    arm_timer();
    read_expiry();
  } else {
    pthread_t reader;
    int error = pthread_create(&reader, NULL, reader_thread, NULL);
    if (error != 0) errno = error, fail_errno("pthread_create");
    arm_timer();
    error = pthread_join(reader, NULL);
    if (error != 0) errno = error, fail_errno("pthread_join");
  }
  report_elapsed(&options, start_ns);
  if (options.verbose) printf("timerfd: armed by %d read by %d\n", (int)getpid(), (int)reader_tid);
  return 0;
}
