// Round trips over unix stream sockets: PAIRS client/server process pairs, each client
// writing a 64-byte request and reading a 256-byte reply, each server the other way round,
// for SECONDS. Prints the round trips per second of all pairs together.
//
// What a database under pgbench -S does per transaction, without the database: two sends,
// two reads, the wake-ups and the switches they cause. Its cost per round trip under a
// recorder is the cost of recording those events, with far less of the host's noise than a
// real server's throughput has (bench/RESULTS.md): the lens for the per-event cost.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// Moves exactly n bytes (reading when `reading`): 0, or -1 at the end of the stream.
static int move_all(int fd, char* buf, int n, int reading) {
  for (int done = 0; done < n;) {
    ssize_t r = reading ? read(fd, buf + done, n - done) : write(fd, buf + done, n - done);
    if (r <= 0) return -1;
    done += (int)r;
  }
  return 0;
}

int main(int argc, char** argv) {
  int pairs = argc > 1 ? atoi(argv[1]) : 4;
  double seconds = argc > 2 ? atof(argv[2]) : 3;
  if (pairs < 1 || pairs > MAX_PAIRS || !(seconds > 0)) {
    fprintf(stderr, "usage: pingpong [PAIRS (1..%d)] [SECONDS]\n", MAX_PAIRS);
    return 2;
  }
  // Each client's count, and the stop flag, shared with the children.
  volatile long* counts =
      mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (counts == MAP_FAILED) return perror("mmap"), 1;
  volatile int* stop = (volatile int*)(counts + MAX_PAIRS);
  pid_t servers[MAX_PAIRS], clients[MAX_PAIRS];
  for (int p = 0; p < pairs; p++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return perror("socketpair"), 1;
    if ((servers[p] = fork()) == 0) {
      close(sv[0]);
      char buf[256] = {0};
      while (move_all(sv[1], buf, 64, 1) == 0 && move_all(sv[1], buf, 256, 0) == 0) {
      }
      _exit(0);
    }
    if ((clients[p] = fork()) == 0) {
      close(sv[1]);
      char buf[256] = {0};
      long n = 0;
      while (!*stop && move_all(sv[0], buf, 64, 0) == 0 && move_all(sv[0], buf, 256, 1) == 0) n++;
      counts[p] = n;
      _exit(0);
    }
    if (servers[p] < 0 || clients[p] < 0) return perror("fork"), 1;
    close(sv[0]);
    close(sv[1]);
  }
  double start = now();
  struct timespec span = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
  nanosleep(&span, NULL);
  *stop = 1;
  for (int p = 0; p < pairs; p++) waitpid(clients[p], NULL, 0);
  double elapsed = now() - start;
  for (int p = 0; p < pairs; p++) {
    kill(servers[p], SIGKILL);
    waitpid(servers[p], NULL, 0);
  }
  long total = 0;
  for (int p = 0; p < pairs; p++) total += counts[p];
  printf("%.0f\n", total / elapsed);
  return 0;
}
