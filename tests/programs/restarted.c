// A read woken by another thread draining a stream, then interrupted by a signal before it
// runs: it returns to run the handler and the kernel restarts it (SA_RESTART), a second
// call.
//
//   cw-prog-restarted [-v]
//
// On a unix socket pair (a, b), with every thread on CPU 0: the reader (cw-restarted)
// blocks reading b. A byte sent from b waits on a. The drainer (cw-drainer, SCHED_FIFO, so
// that the reader cannot run before it sleeps) reads that byte, which wakes the reader (a
// unix socket wakes those waiting on the sender's end as its bytes are read), and at once
// sends the reader SIGUSR1: the reader, already woken, is not woken again. When the drainer
// sleeps the reader runs, finds no bytes and the signal pending, returns to run its handler
// and reads again, restarted by the kernel, and blocks: two calls, the first ended by
// nothing but the drain. 50 ms later the drainer writes the byte that ends the second.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static int a_end, b_end;
static pid_t reader_tid;
static volatile sig_atomic_t handled;

static void set_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME, %s)", name);
}

static void on_signal(int sig) {
  (void)sig;
  handled = 1;
}

static void* reader(void* unused) {
  (void)unused;
  set_name("cw-restarted");
  __atomic_store_n(&reader_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
  char byte;
  if (read(b_end, &byte, 1) != 1) fail_errno("reader: read");  // restarted once, inside
  if (!handled) fail("reader: the signal was not handled");
  return NULL;
}

static void* drainer(void* unused) {
  (void)unused;
  set_name("cw-drainer");
  char byte;
  if (read(a_end, &byte, 1) != 1) fail_errno("drainer: read");  // wakes the reader
  if (syscall(SYS_tgkill, getpid(), __atomic_load_n(&reader_tid, __ATOMIC_ACQUIRE), SIGUSR1) != 0)
    fail_errno("tgkill");
  sleep_ns(50000000LL);
  if (write(a_end, "x", 1) != 1) fail_errno("drainer: write");  // ends the restarted read
  return NULL;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-restarted");
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) fail_errno("sched_setaffinity");
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  if (sigaction(SIGUSR1, &action, NULL) != 0) fail_errno("sigaction");
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) fail_errno("socketpair");
  a_end = fds[0];
  b_end = fds[1];
  if (write(b_end, "x", 1) != 1) fail_errno("main: write");  // waits on a for the drainer
  pthread_t reading, draining;
  int err = pthread_create(&reading, NULL, reader, NULL);
  if (err != 0) fail("pthread_create: %s", strerror(err));
  sleep_ns(20000000LL);  // the reader blocks meanwhile
  if (__atomic_load_n(&reader_tid, __ATOMIC_ACQUIRE) == 0) fail("the reader did not start");
  pthread_attr_t real_time;
  struct sched_param priority = {.sched_priority = 1};
  if (pthread_attr_init(&real_time) != 0 ||
      pthread_attr_setinheritsched(&real_time, PTHREAD_EXPLICIT_SCHED) != 0 ||
      pthread_attr_setschedpolicy(&real_time, SCHED_FIFO) != 0 ||
      pthread_attr_setschedparam(&real_time, &priority) != 0)
    fail("pthread_attr: SCHED_FIFO");
  err = pthread_create(&draining, &real_time, drainer, NULL);
  if (err != 0) fail("pthread_create (SCHED_FIFO, needs CAP_SYS_NICE): %s", strerror(err));
  pthread_join(draining, NULL);
  pthread_join(reading, NULL);
  if (options.verbose) printf("pid %d\n", (int)getpid());
  return 0;
}
