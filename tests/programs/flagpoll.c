// A main thread polling a global flag through a small function until another thread sets
// it: the data flag and the function boundary the instrumentation tests probe.
//
//   cw-prog-flagpoll [-v] [-t] [SET_AFTER_MS] [gate]   SET_AFTER_MS default 100
//
// The main thread calls poll_once() (which reads `ready`) every millisecond until it
// returns 1; the setter thread, created first, sleeps SET_AFTER_MS and stores ready = 1.
// With `gate` the main thread first reads one byte from stdin, so that a test can attach
// probes and watchpoints to the running program before the setter thread exists.
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

// Non-static, so that the symbol table names them.
volatile int ready;
// A slot holding ready's address, as a GOT entry would: tests of GOT-indirect flag sites
// read the flag's address from it. Relocated at load time, so it holds the runtime address.
volatile int* volatile ready_slot = &ready;

static long set_after_ms;
static pid_t poller_tid, setter_tid;
static long polls;

// The one read of `ready` on the main thread; noinline so that it is a function to probe.
__attribute__((noinline)) int poll_once(void) {
  return ready;
}

static void* setter(void* unused) {
  (void)unused;
  setter_tid = (pid_t)syscall(SYS_gettid);
  sleep_ns(set_after_ms * 1000000LL);
  ready = 1;
  return NULL;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-flagpoll");
  if (options.positional_count > 2) fail("usage: cw-prog-flagpoll [-v] [-t] [SET_AFTER_MS] [gate]");
  set_after_ms = count_argument(&options, 0, 100, "SET_AFTER_MS");
  if (options.positional_count > 1) {
    if (strcmp(options.positional[1], "gate") != 0)
      fail("the second argument must be 'gate', got '%s'", options.positional[1]);
    char go;
    if (read(0, &go, 1) != 1) fail_errno("reading the gate byte from stdin");
  }

  poller_tid = (pid_t)syscall(SYS_gettid);
  long long start_ns = monotonic_ns();
  pthread_t setter_thread;
  int error = pthread_create(&setter_thread, NULL, setter, NULL);
  if (error != 0) errno = error, fail_errno("pthread_create");
  while (!poll_once()) {
    ++polls;
    sleep_ns(1000000LL);
  }
  error = pthread_join(setter_thread, NULL);
  if (error != 0) errno = error, fail_errno("pthread_join");
  report_elapsed(&options, start_ns);
  if (options.verbose)
    printf("flagpoll: poller %d polled %ld times; setter %d stored ready at %p\n", (int)poller_tid,
           polls, (int)setter_tid, (void*)&ready);
  return 0;
}
