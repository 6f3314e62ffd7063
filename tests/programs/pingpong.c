// Two processes exchanging messages, so a recording holds byte streams to pair up.
//
//   cw-prog-pingpong [-v] [-t] [unix|tcp|pipe] [ROUNDS]   ROUNDS (default 1000) rounds of a
//       64-byte request (parent -> child) and a 64-byte reply, over a unix socketpair, a
//       loopback TCP connection or two pipes
//   cw-prog-pingpong [-v] split   the fixed pattern of tests/programs/README.md: writes of
//       100 + 50 bytes read as one 150, a write of 200 read as 120 + 80
//
// Each message is one write() and, normally, one read() (a short read is continued).
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum { kMessageBytes = 64 };

// The two ends of the conversation in one process: where it reads and where it writes.
struct channel {
  int read_fd;
  int write_fd;
};

static void fill_pattern(unsigned char* bytes, size_t size, unsigned seed) {
  for (size_t i = 0; i < size; ++i) bytes[i] = (unsigned char)(seed + i * 7);
}

static void check_pattern(const unsigned char* bytes, size_t size, unsigned seed,
                          const char* what) {
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] != (unsigned char)(seed + i * 7))
      fail("%s: byte %zu is %u, expected %u", what, i, bytes[i], (unsigned char)(seed + i * 7));
  }
}

// One write() of all of `size` bytes; a short write is a failure (the tests count writes).
static void write_once(int fd, const void* bytes, size_t size, const char* what) {
  ssize_t written = write(fd, bytes, size);
  if (written < 0) fail_errno("%s: write of %zu bytes", what, size);
  if ((size_t)written != size) fail("%s: wrote %zd of %zu bytes", what, written, size);
}

// Reads exactly `size` bytes: one read() unless the stream hands back less.
static void read_fully(int fd, void* bytes, size_t size, const char* what) {
  size_t done = 0;
  while (done < size) {
    ssize_t got = read(fd, (char*)bytes + done, size - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail_errno("%s: read of %zu bytes", what, size - done);
    }
    if (got == 0) fail("%s: end of stream after %zu of %zu bytes", what, done, size);
    done += (size_t)got;
  }
}

// One read() that must return exactly `size` bytes (the split pattern's reads).
static void read_once(int fd, void* bytes, size_t size, const char* what) {
  ssize_t got = read(fd, bytes, size);
  if (got < 0) fail_errno("%s: read of %zu bytes", what, size);
  if ((size_t)got != size) fail("%s: one read returned %zd bytes, expected %zu", what, got, size);
}

static void serve_rounds(struct channel channel, long rounds) {
  unsigned char message[kMessageBytes];
  for (long round = 0; round < rounds; ++round) {
    read_fully(channel.read_fd, message, sizeof message, "child");
    check_pattern(message, sizeof message, (unsigned)round, "child: request");
    fill_pattern(message, sizeof message, (unsigned)round + 1);
    write_once(channel.write_fd, message, sizeof message, "child");
  }
}

static void ask_rounds(struct channel channel, long rounds) {
  unsigned char message[kMessageBytes];
  for (long round = 0; round < rounds; ++round) {
    fill_pattern(message, sizeof message, (unsigned)round);
    write_once(channel.write_fd, message, sizeof message, "parent");
    read_fully(channel.read_fd, message, sizeof message, "parent");
    check_pattern(message, sizeof message, (unsigned)round + 1, "parent: reply");
  }
}

static void wait_for_child(pid_t child) {
  int status = 0;
  if (waitpid(child, &status, 0) != child) fail_errno("waitpid %d", (int)child);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail("child %d failed (wait status 0x%x)", (int)child, status);
}

static pid_t fork_or_fail(void) {
  pid_t child = fork();
  if (child < 0) fail_errno("fork");
  return child;
}

// Runs `rounds` rounds between a child (serving on `child_end`) and this process (asking
// on `parent_end`); each side first closes the other's fds.
static pid_t run_rounds(struct channel parent_end, struct channel child_end, long rounds) {
  pid_t child = fork_or_fail();
  if (child == 0) {
    close(parent_end.read_fd);
    if (parent_end.write_fd != parent_end.read_fd) close(parent_end.write_fd);
    serve_rounds(child_end, rounds);
    _exit(0);
  }
  close(child_end.read_fd);
  if (child_end.write_fd != child_end.read_fd) close(child_end.write_fd);
  ask_rounds(parent_end, rounds);
  wait_for_child(child);
  return child;
}

static pid_t unix_rounds(long rounds) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) fail_errno("socketpair");
  return run_rounds((struct channel){fds[0], fds[0]}, (struct channel){fds[1], fds[1]}, rounds);
}

static pid_t pipe_rounds(long rounds) {
  int to_child[2], to_parent[2];
  if (pipe(to_child) != 0 || pipe(to_parent) != 0) fail_errno("pipe");
  return run_rounds((struct channel){to_parent[0], to_child[1]},
                    (struct channel){to_child[0], to_parent[1]}, rounds);
}

static void disable_nagle(int fd) {
  // Small request/reply messages: without this, delayed ACKs make each round ~40 ms.
  int on = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0)
    fail_errno("setsockopt TCP_NODELAY");
}

// Whether process `pid` sleeps (state S in /proc/PID/stat).
static int sleeping(pid_t pid) {
  char path[64], text[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  const char* end = strrchr(text, ')');  // the name may hold spaces and parentheses
  return end && end[1] == ' ' && end[2] == 'S';
}

// The parent listens on 127.0.0.1 (port 0: the kernel picks one) and the child connects,
// once the parent sleeps in accept (up to a second): the connect then wakes it, whichever
// of the two the scheduler ran first after the fork.
static pid_t tcp_rounds(long rounds) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) fail_errno("socket");
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (bind(listener, (struct sockaddr*)&address, sizeof address) != 0) fail_errno("bind");
  if (listen(listener, 1) != 0) fail_errno("listen");
  if (getsockname(listener, (struct sockaddr*)&address, &length) != 0) fail_errno("getsockname");

  pid_t child = fork_or_fail();
  if (child == 0) {
    close(listener);
    for (int i = 0; i < 1000 && !sleeping(getppid()); i++) usleep(1000);
    int connection = socket(AF_INET, SOCK_STREAM, 0);
    if (connection < 0) fail_errno("child: socket");
    if (connect(connection, (struct sockaddr*)&address, sizeof address) != 0)
      fail_errno("child: connect to 127.0.0.1:%u", ntohs(address.sin_port));
    disable_nagle(connection);
    serve_rounds((struct channel){connection, connection}, rounds);
    _exit(0);
  }
  int connection = accept(listener, NULL, NULL);
  if (connection < 0) fail_errno("accept");
  close(listener);
  disable_nagle(connection);
  ask_rounds((struct channel){connection, connection}, rounds);
  wait_for_child(child);
  return child;
}

// The split pattern. The child waits for SIGUSR1 (blocked before the fork, taken with
// sigwaitinfo) so that both of the parent's writes are queued before its single read: no
// other read or write happens on either side.
static pid_t split_pattern(void) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) fail_errno("socketpair");
  sigset_t go;
  sigemptyset(&go);
  sigaddset(&go, SIGUSR1);
  if (sigprocmask(SIG_BLOCK, &go, NULL) != 0) fail_errno("sigprocmask");

  unsigned char bytes[200];
  pid_t child = fork_or_fail();
  if (child == 0) {
    close(fds[0]);
    while (sigwaitinfo(&go, NULL) < 0) {
      if (errno != EINTR) fail_errno("child: sigwaitinfo");
    }
    read_once(fds[1], bytes, 150, "child: read of 100 + 50");
    check_pattern(bytes, 100, 1, "child: first 100 bytes");
    check_pattern(bytes + 100, 50, 2, "child: last 50 bytes");
    fill_pattern(bytes, 200, 3);
    write_once(fds[1], bytes, 200, "child: write of 200");
    _exit(0);
  }
  close(fds[1]);
  fill_pattern(bytes, 100, 1);
  write_once(fds[0], bytes, 100, "parent: write of 100");
  fill_pattern(bytes, 50, 2);
  write_once(fds[0], bytes, 50, "parent: write of 50");
  if (kill(child, SIGUSR1) != 0) fail_errno("kill %d", (int)child);
  unsigned char reply[200];
  read_once(fds[0], reply, 120, "parent: read of 120");
  read_once(fds[0], reply + 120, 80, "parent: read of 80");
  check_pattern(reply, 200, 3, "parent: reply");
  wait_for_child(child);
  return child;
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-pingpong");
  const char* mode = "unix";
  int rounds_index = 0;
  if (options.positional_count > 0 &&
      (options.positional[0][0] < '0' || options.positional[0][0] > '9')) {
    mode = options.positional[0];
    rounds_index = 1;
  }
  long rounds = count_argument(&options, rounds_index, 1000, "ROUNDS");

  long long start_ns = monotonic_ns();
  pid_t child;
  if (strcmp(mode, "unix") == 0) {
    child = unix_rounds(rounds);
  } else if (strcmp(mode, "tcp") == 0) {
    child = tcp_rounds(rounds);
  } else if (strcmp(mode, "pipe") == 0) {
    child = pipe_rounds(rounds);
  } else if (strcmp(mode, "split") == 0) {
    if (options.positional_count > 1) fail("split takes no ROUNDS");
    child = split_pattern();
  } else {
    fail("unknown mode '%s' (unix, tcp, pipe or split)", mode);
  }
  report_elapsed(&options, start_ns);
  if (options.verbose) {
    if (strcmp(mode, "split") == 0)
      printf("pingpong split: parent %d child %d\n", (int)getpid(), (int)child);
    else
      printf("pingpong %s: parent %d child %d rounds %ld\n", mode, (int)getpid(), (int)child,
             rounds);
  }
  return 0;
}
