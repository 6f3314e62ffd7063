/* The client side of tests/hosts/two_hosts.sh: connects (retrying while the server
 * starts), sends three line requests and reads each reply with a plain read(). The
 * third read blocks about 800 ms, the server's slow_lookup(): the hang to diagnose.
 * Usage: cw-client ADDR PORT */
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

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s ADDR PORT\n", argv[0]);
    return 2;
  }
  prctl(PR_SET_NAME, "cw-client");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) die("inet_pton");
  int fd = -1;
  /* Up to 5 s (50 x 100 ms) for the server to listen. */
  for (int tries = 0; tries < 50; tries++) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr*)&a, sizeof a) == 0) break;
    close(fd);
    fd = -1;
    struct timespec t = {0, 100 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
  if (fd < 0) die("connect");
  char req[64], reply[64];
  for (int i = 1; i <= 3; i++) {
    int n = snprintf(req, sizeof req, "request %d\n", i);
    if (write(fd, req, (size_t)n) != n) die("write");
    /* Each reply is one short line sent in one write: one read() gets it. */
    ssize_t r = read(fd, reply, sizeof reply - 1);
    if (r <= 0) die("read");
    reply[r] = '\0';
    printf("cw-client: %s", reply);
  }
  close(fd);
  return 0;
}
