// A steady, high rate of syscalls and wake-ups for SECONDS (default 30; fractions allowed):
// two pairs of threads ping-pong 64-byte messages over unix socketpairs and one thread
// loops on 50 us nanosleeps.
//
//   cw-prog-busy [-v] [-t] [SECONDS]
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

enum { kPairs = 2, kMessageBytes = 64 };

static long long deadline_ns;
static atomic_int stopping;

struct pair {
  int fds[2];
  long rounds;
};

// Asks until the deadline, then shuts its end down so the answerer reads end-of-stream.
static void* ask(void* argument) {
  struct pair* pair = argument;
  char message[kMessageBytes] = {0};
  while (monotonic_ns() < deadline_ns) {
    if (write(pair->fds[0], message, sizeof message) != (ssize_t)sizeof message)
      fail_errno("asker: write");
    if (read(pair->fds[0], message, sizeof message) <= 0) fail_errno("asker: read");
    ++pair->rounds;
  }
  if (shutdown(pair->fds[0], SHUT_WR) != 0) fail_errno("shutdown");
  return NULL;
}

static void* answer(void* argument) {
  struct pair* pair = argument;
  char message[kMessageBytes];
  for (;;) {
    ssize_t got = read(pair->fds[1], message, sizeof message);
    if (got == 0) return NULL;
    if (got < 0) fail_errno("answerer: read");
    if (write(pair->fds[1], message, (size_t)got) != got) fail_errno("answerer: write");
  }
}

static void* nap(void* argument) {
  long* naps = argument;
  while (!atomic_load(&stopping)) {
    sleep_ns(50 * 1000LL);
    ++*naps;
  }
  return NULL;
}

static void start(pthread_t* thread, void* (*body)(void*), void* argument) {
  int error = pthread_create(thread, NULL, body, argument);
  if (error != 0) errno = error, fail_errno("pthread_create");
}

static void join(pthread_t thread) {
  int error = pthread_join(thread, NULL);
  if (error != 0) errno = error, fail_errno("pthread_join");
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-busy");
  double seconds = 30;
  if (options.positional_count > 1) fail("usage: cw-prog-busy [-v] [-t] [SECONDS]");
  if (options.positional_count == 1) {
    char* end = NULL;
    seconds = strtod(options.positional[0], &end);
    if (end == options.positional[0] || *end != '\0' || !(seconds > 0))
      fail("SECONDS must be a positive number, got '%s'", options.positional[0]);
  }

  long long start_ns = monotonic_ns();
  deadline_ns = start_ns + (long long)(seconds * 1e9);
  struct pair pairs[kPairs];
  pthread_t askers[kPairs], answerers[kPairs], napper;
  long naps = 0;
  for (int i = 0; i < kPairs; ++i) {
    pairs[i].rounds = 0;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[i].fds) != 0) fail_errno("socketpair");
    start(&answerers[i], answer, &pairs[i]);
    start(&askers[i], ask, &pairs[i]);
  }
  start(&napper, nap, &naps);
  long rounds = 0;
  for (int i = 0; i < kPairs; ++i) {
    join(askers[i]);
    join(answerers[i]);
    rounds += pairs[i].rounds;
  }
  atomic_store(&stopping, 1);
  join(napper);
  report_elapsed(&options, start_ns);
  if (options.verbose)
    printf("busy: %d pairs, %ld round trips, %ld naps in %.3f s\n", kPairs, rounds, naps,
           (double)(monotonic_ns() - start_ns) / 1e9);
  return 0;
}
