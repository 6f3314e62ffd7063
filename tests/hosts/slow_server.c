/* The server side of tests/hosts/two_hosts.sh: one connection, three line requests;
 * the first two are answered at once, the third only after slow_lookup() has slept
 * 800 ms. That sleep is the ground truth the client's hang must be traced back to.
 * Usage: cw-slow-server ADDR PORT */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char* what) {
  perror(what);
  exit(1);
}

/* Kept a frame of its own (noinline) so the blocked stack names it. */
__attribute__((noinline)) static void slow_lookup(void) {
  struct timespec t = {0, 800 * 1000 * 1000};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* Reads one request line: the client sends each in one short write, so one read()
 * normally gets it whole (one recv event per request); 0 at end of stream. */
static int read_line(int fd, char* buf, size_t size) {
  size_t n = 0;
  while (n + 1 < size) {
    ssize_t r = read(fd, buf + n, size - 1 - n);
    if (r <= 0) return 0;
    n += (size_t)r;
    if (buf[n - 1] == '\n') break;
  }
  buf[n] = '\0';
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s ADDR PORT\n", argv[0]);
    return 2;
  }
  prctl(PR_SET_NAME, "cw-slow-server");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) die("inet_pton");
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) die("socket");
  if (bind(ls, (struct sockaddr*)&a, sizeof a) != 0 || listen(ls, 1) != 0) die("bind/listen");
  int c = accept(ls, NULL, NULL);
  if (c < 0) die("accept");
  char line[128], reply[160];
  for (int i = 1; i <= 3; i++) {
    if (!read_line(c, line, sizeof line)) die("request");
    if (i == 3) slow_lookup();
    int n = snprintf(reply, sizeof reply, "reply %d\n", i);
    if (write(c, reply, (size_t)n) != n) die("write");
  }
  close(c);
  close(ls);
  return 0;
}
