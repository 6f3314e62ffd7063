// The main thread polling a global flag with sched_yield() or 1 ms sleeps until another
// thread sets it with a plain store: repeated yields with no causal edge between the two
// threads (only a data-flag rule on `ready_flag` could join them).
//
//   cw-prog-spin [-v] [-t] [yield|sleep] [SET_AFTER_MS]   mode default yield, SET_AFTER_MS
//       default 300
//
// The main thread renames itself "cw-spinner", creates "cw-setter", then loops
// `while (!ready_flag) sched_yield();` (or clock_nanosleep 1 ms) and joins cw-setter (so the
// only thread-to-thread edges are the creation and the exit). cw-setter clock_nanosleeps
// SET_AFTER_MS, then stores ready_flag = 1 and exits.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

// Non-static, so the symbol table names it for a data-flag rule.
volatile int ready_flag;

static int spin_with_sleep;
static long set_after_ms;
static pid_t spinner_tid, setter_tid;
static long polls;

static void set_thread_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME, %s)", name);
}

// The main thread's loop: poll until cw-setter stores the flag.
static void spin(void) {
  while (!ready_flag) {
    ++polls;
    if (spin_with_sleep)
      sleep_ns(1000000LL);
    else
      sched_yield();
  }
}

static void* setter(void* unused) {
  (void)unused;
  set_thread_name("cw-setter");
  setter_tid = (pid_t)syscall(SYS_gettid);
  sleep_ns(set_after_ms * 1000000LL);
  ready_flag = 1;
  return NULL;
}

static void start_thread(pthread_t* thread, void* (*body)(void*), const char* what) {
  int error = pthread_create(thread, NULL, body, NULL);
  if (error != 0) errno = error, fail_errno("pthread_create %s", what);
}

static void join_thread(pthread_t thread, const char* what) {
  int error = pthread_join(thread, NULL);
  if (error != 0) errno = error, fail_errno("pthread_join %s", what);
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-spin");
  if (options.positional_count > 2)
    fail("usage: cw-prog-spin [-v] [-t] [yield|sleep] [SET_AFTER_MS]");
  const char* mode = options.positional_count > 0 ? options.positional[0] : "yield";
  if (strcmp(mode, "sleep") == 0)
    spin_with_sleep = 1;
  else if (strcmp(mode, "yield") != 0)
    fail("mode must be yield or sleep, got '%s'", mode);
  set_after_ms = count_argument(&options, 1, 300, "SET_AFTER_MS");

  set_thread_name("cw-spinner");
  spinner_tid = (pid_t)syscall(SYS_gettid);
  long long start_ns = monotonic_ns();
  pthread_t setter_thread;
  start_thread(&setter_thread, setter, "cw-setter");
  spin();
  join_thread(setter_thread, "cw-setter");
  report_elapsed(&options, start_ns);
  if (options.verbose)
    printf("spin: %s: cw-spinner %d polled %ld times; cw-setter %d set ready_flag at %p\n", mode,
           (int)spinner_tid, polls, (int)setter_tid, (void*)&ready_flag);
  return 0;
}
