// A daemon thread serving several clients from one callback per wake-up: the pattern of a
// dispatch loop that batches requests (the Argus paper's fontd), with functions for a rule
// pack to name as boundaries.
//
//   cw-prog-dispatch [-v] [-t] [CLIENTS] [REQUESTS]   CLIENTS (default 3) threads each send
//       REQUESTS (default 5) 16-byte requests and wait for each 16-byte reply
//
// The main thread renames itself "cw-daemon", creates one socketpair and one thread
// "cw-client-N" per client, then loops: poll() on every client socket, then one call of
// serve_ready(), which calls handle_request() once per readable socket (read the request,
// reply). serve_ready and handle_request are non-static and never inlined, so their
// symbols and their calls exist for probes and hooks. Clients pause 5 ms between
// requests; the daemon ends when every client has closed its socket.
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

enum { kMaxClients = 16, kMessageBytes = 16 };

static long requests_per_client;
static int client_fds[kMaxClients];  // the clients' ends
static long served;

static void set_thread_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME, %s)", name);
}

// One request and its reply.
static void exchange(int fd, const char* what) {
  char buffer[kMessageBytes] = {0};
  if (write(fd, buffer, sizeof buffer) != (ssize_t)sizeof buffer) fail_errno("%s: write", what);
  ssize_t got = read(fd, buffer, sizeof buffer);
  if (got != (ssize_t)sizeof buffer) fail_errno("%s: read returned %zd", what, got);
}

// One request: read it and reply. Returns 0 when the client has closed its socket.
__attribute__((noinline)) int handle_request(int fd) {
  char buffer[kMessageBytes];
  ssize_t got = read(fd, buffer, sizeof buffer);
  if (got == 0) return 0;
  if (got != (ssize_t)sizeof buffer) fail_errno("cw-daemon: read returned %zd", got);
  if (write(fd, buffer, sizeof buffer) != (ssize_t)sizeof buffer) fail_errno("cw-daemon: write");
  ++served;
  return 1;
}

// Everything one poll() reported, in one call: the batch a rule pack cuts into items.
// Returns how many sockets closed.
__attribute__((noinline)) int serve_ready(struct pollfd* fds, int count) {
  int closed = 0;
  for (int i = 0; i < count; ++i) {
    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
    if (!handle_request(fds[i].fd)) {
      close(fds[i].fd);
      fds[i].fd = -1;
      ++closed;
    }
  }
  return closed;
}

static void* client(void* arg) {
  long index = (long)arg;
  char name[16];
  snprintf(name, sizeof name, "cw-client-%d", (int)(index + 1) % 100);
  set_thread_name(name);
  for (long r = 0; r < requests_per_client; ++r) {
    exchange(client_fds[index], name);
    sleep_ns(5000000LL);
  }
  close(client_fds[index]);
  return NULL;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-dispatch");
  if (options.positional_count > 2) fail("usage: cw-prog-dispatch [-v] [-t] [CLIENTS] [REQUESTS]");
  long clients = count_argument(&options, 0, 3, "CLIENTS");
  if (clients < 1 || clients > kMaxClients) fail("CLIENTS must be 1..%d", kMaxClients);
  requests_per_client = count_argument(&options, 1, 5, "REQUESTS");

  set_thread_name("cw-daemon");
  long long start_ns = monotonic_ns();
  struct pollfd fds[kMaxClients];
  pthread_t threads[kMaxClients];
  for (long i = 0; i < clients; ++i) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) fail_errno("socketpair");
    fds[i].fd = pair[0];
    fds[i].events = POLLIN;
    client_fds[i] = pair[1];
  }
  for (long i = 0; i < clients; ++i) {
    int error = pthread_create(&threads[i], NULL, client, (void*)i);
    if (error != 0) errno = error, fail_errno("pthread_create client %ld", i + 1);
  }
  long open = clients;
  while (open > 0) {
    if (poll(fds, (nfds_t)clients, -1) < 0) {
      if (errno == EINTR) continue;
      fail_errno("poll");
    }
    open -= serve_ready(fds, (int)clients);
  }
  for (long i = 0; i < clients; ++i) pthread_join(threads[i], NULL);
  report_elapsed(&options, start_ns);
  if (options.verbose)
    printf("dispatch: cw-daemon served %ld requests from %ld clients\n", served, clients);
  return 0;
}
