// A small real program for the preload library's end-to-end test (preload_test.cc): calls
// outer() (exported), which calls the static inner() twice, in several threads, in a forked
// child and in an exec'd image of itself; tiny() is too short to hook.
//
//   cw-hooked-program threads THREADS CALLS   main calls outer once, then each thread
//                                              calls it CALLS times
//   cw-hooked-program family                  outer(1); fork: the child calls outer(2)
//                                              and execs "leaf", which calls outer(3);
//                                              the parent waits, then calls outer(4)
//
// Prints one line per process with what the calls returned, so a run with the hooks can be
// compared with one without.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int bias = 1;

// Static: only the symbol table (.symtab) names it.
static __attribute__((noinline, noclone, used)) int inner(int x) {
  return x * 3 + bias;
}

__attribute__((noinline, noclone)) int outer(int x) {
  return inner(x) + inner(x + 1);
}

__attribute__((noinline, noclone, used)) int tiny(void) {
  return 0;
}

static long calls_per_thread;

static void* worker(void* arg) {
  long base = (long)arg, sum = 0;
  for (long i = 0; i < calls_per_thread; ++i) sum += outer((int)(base + i));
  return (void*)sum;
}

static int run_threads(int threads, long calls) {
  calls_per_thread = calls;
  long sum = outer(0) + tiny();
  pthread_t ids[64];
  if (threads > 64) threads = 64;
  for (int t = 0; t < threads; ++t)
    if (pthread_create(&ids[t], NULL, worker, (void*)(long)(t * 1000)) != 0) return 1;
  for (int t = 0; t < threads; ++t) {
    void* result;
    pthread_join(ids[t], &result);
    sum += (long)result;
  }
  printf("threads %d calls %ld sum %ld\n", threads, calls, sum);
  return 0;
}

static int run_family(const char* self) {
  printf("parent before fork %d\n", outer(1));
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    printf("child %d\n", outer(2));
    fflush(stdout);
    execl(self, self, "leaf", (char*)NULL);
    _exit(127);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return 1;
  printf("parent after child %d\n", outer(4));
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "threads") == 0)
    return run_threads(atoi(argv[2]), atol(argv[3]));
  if (argc == 2 && strcmp(argv[1], "family") == 0) return run_family("/proc/self/exe");
  if (argc == 2 && strcmp(argv[1], "leaf") == 0) {
    printf("exec'd leaf %d\n", outer(3));
    return 0;
  }
  fprintf(stderr, "usage: %s threads THREADS CALLS | family\n", argv[0]);
  return 2;
}
