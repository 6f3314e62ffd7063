// A request that waits in a socket's queue while its server is busy with something else.
//
//   cw-prog-queued [-v] [unix|tcp|pipe] [prompt [N]]
//
// The server (a child, named cw-queued-srv) computes 200 ms on its own; meanwhile the client
// (cw-queued-cli) sends its 16-byte request after 50 ms and blocks reading the answer. The
// server then reads the request, which is already there (its read neither blocks nor is
// woken), computes 300 ms for it and writes a 16-byte answer. No wake-up joins the client's
// send to the server's read: only the bytes do.
//
// `pipe` carries the request and the answer on two pipes instead of one socket.
//
// With `prompt` the server polls for the request instead, with reads that do not block, and
// takes it within microseconds of its sending: no wake-up again, but bytes that never waited.
// `prompt N` asks N times, one request after the other's answer, and the server computes 1 ms
// for each: a poller takes some of them before the send has returned, some after.
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum { kMessageBytes = 16 };

static void set_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME, %s)", name);
}

static void compute_ms(long ms) {
  const long long until = monotonic_ns() + ms * 1000000LL;
  volatile unsigned long sink = 0;
  while (monotonic_ns() < until) {
    for (int i = 0; i < 1000; ++i) sink += (unsigned long)i;
  }
}

static void sleep_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0) {
    if (errno != EINTR) fail_errno("nanosleep");
  }
}

static void read_message(int fd, const char* what) {
  char bytes[kMessageBytes];
  size_t done = 0;
  while (done < sizeof bytes) {
    ssize_t got = read(fd, bytes + done, sizeof bytes - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_errno("%s: read", what);
    if (got == 0) fail("%s: end of stream after %zu bytes", what, done);
    done += (size_t)got;
  }
}

static void write_message(int fd, const char* what) {
  char bytes[kMessageBytes];
  memset(bytes, 'q', sizeof bytes);
  if (write(fd, bytes, sizeof bytes) != (ssize_t)sizeof bytes) fail_errno("%s: write", what);
}

// Reads a message as it arrives, never blocking (the descriptor is non-blocking) until it
// is whole.
static void poll_message(int fd, const char* what) {
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) fail_errno("%s: fcntl", what);
  char bytes[kMessageBytes];
  size_t done = 0;
  while (done < sizeof bytes) {
    ssize_t got = read(fd, bytes + done, sizeof bytes - done);
    if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (got < 0) fail_errno("%s: read", what);
    if (got == 0) fail("%s: end of stream after %zu bytes", what, done);
    done += (size_t)got;
  }
}

// One side's descriptors: what it reads from and writes to (the same socket, or two pipes).
struct end {
  int in, out;
};

static void serve(struct end fd, bool prompt, long requests) {
  set_name("cw-queued-srv");
  for (long i = 0; i < requests; ++i) {
    if (prompt) {
      poll_message(fd.in, "server");
    } else {
      compute_ms(200);  // busy with something else while the request arrives
      read_message(fd.in, "server");
    }
    compute_ms(requests > 1 ? 1 : 300);  // the request's own work
    write_message(fd.out, "server");
  }
}

static void ask(struct end fd, long requests) {
  set_name("cw-queued-cli");
  sleep_ms(50);
  for (long i = 0; i < requests; ++i) {
    write_message(fd.out, "client");
    read_message(fd.in, "client");
  }
}

// A connected pair: [0] the client's end, [1] the server's.
static void connect_pair(const char* transport, struct end ends[2]) {
  int fds[2];
  if (strcmp(transport, "pipe") == 0) {
    int request[2], answer[2];
    if (pipe(request) != 0 || pipe(answer) != 0) fail_errno("pipe");
    ends[0] = (struct end){answer[0], request[1]};
    ends[1] = (struct end){request[0], answer[1]};
    return;
  }
  if (strcmp(transport, "unix") == 0) {
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) fail_errno("socketpair");
    ends[0] = (struct end){fds[0], fds[0]};
    ends[1] = (struct end){fds[1], fds[1]};
    return;
  }
  if (strcmp(transport, "tcp") != 0) fail("unknown transport %s (unix, tcp or pipe)", transport);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) fail_errno("socket");
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(listener, (struct sockaddr*)&address, sizeof address) != 0) fail_errno("bind");
  if (listen(listener, 1) != 0) fail_errno("listen");
  if (getsockname(listener, (struct sockaddr*)&address, &length) != 0) fail_errno("getsockname");
  fds[0] = socket(AF_INET, SOCK_STREAM, 0);
  if (fds[0] < 0) fail_errno("socket");
  if (connect(fds[0], (struct sockaddr*)&address, sizeof address) != 0) fail_errno("connect");
  fds[1] = accept(listener, NULL, NULL);
  if (fds[1] < 0) fail_errno("accept");
  close(listener);
  int on = 1;
  for (int i = 0; i < 2; ++i) {
    if (setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0)
      fail_errno("setsockopt TCP_NODELAY");
    ends[i] = (struct end){fds[i], fds[i]};
  }
}

// Closes the descriptors of `e` (once: a socket is both).
static void close_end(struct end e) {
  close(e.in);
  if (e.out != e.in) close(e.out);
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-queued");
  const char* transport = options.positional_count > 0 ? options.positional[0] : "unix";
  const bool prompt = options.positional_count > 1 && strcmp(options.positional[1], "prompt") == 0;
  if (options.positional_count > 1 && !prompt)
    fail("unknown mode %s (prompt, or none)", options.positional[1]);
  const long requests = options.positional_count > 2 ? atol(options.positional[2]) : 1;
  if (requests < 1 || requests > 1000) fail("requests: 1 to 1000, not %s", options.positional[2]);
  struct end ends[2];
  connect_pair(transport, ends);
  pid_t server = fork();
  if (server < 0) fail_errno("fork");
  if (server == 0) {
    close_end(ends[0]);
    serve(ends[1], prompt, requests);
    _exit(0);
  }
  close_end(ends[1]);
  ask(ends[0], requests);
  int status = 0;
  if (waitpid(server, &status, 0) != server) fail_errno("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("server failed (0x%x)", status);
  if (options.verbose) printf("server %d\n", (int)server);
  return 0;
}
