// A hang still in progress on a pthread mutex: thread cw-owner locks a mutex and then
// sleeps with it held, 30 s at a time, forever; the main thread, cw-mutexwait, locks the
// same mutex once the owner has it and blocks in futex(). Nothing ever wakes it, so a
// recording that ends before the program is killed holds no waker, only the owner that
// glibc keeps beside the lock word (the glibc.pthread pack's holder rule).
//
//   cw-prog-mutexhold [-v]
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int ready[2];

static void* own(void* unused) {
  (void)unused;
  prctl(PR_SET_NAME, "cw-owner");
  pthread_mutex_lock(&mutex);
  if (write(ready[1], "x", 1) != 1) fail_errno("write");
  for (;;) sleep_ns(30LL * 1000 * 1000 * 1000);
  return NULL;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-mutexhold");
  if (options.positional_count > 0) fail("usage: cw-prog-mutexhold [-v]");
  prctl(PR_SET_NAME, "cw-mutexwait");
  if (pipe(ready) != 0) fail_errno("pipe");
  pthread_t owner;
  int error = pthread_create(&owner, NULL, own, NULL);
  if (error != 0) errno = error, fail_errno("pthread_create");
  char c;
  if (read(ready[0], &c, 1) != 1) fail("the owner did not take the mutex");
  if (options.verbose) printf("mutexhold: waiting for the mutex the owner keeps\n");
  fflush(stdout);
  pthread_mutex_lock(&mutex);  // blocks until the program is killed
  fail("the waiter got the mutex: the owner let it go");
}
