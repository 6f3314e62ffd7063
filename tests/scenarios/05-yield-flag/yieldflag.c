// A yield loop waiting for a flag (the Argus paper, §3.2 and §6.2, RepeatedYield): a main thread
// spins with sched_yield() until another thread sets a global, and what kept that thread
// from setting it lies in a third process.
//
//   cw-scn-yieldflag [FETCH_MS]     (default 500)
//
//   cw-viewer   the main thread of an image viewer. It starts the loader thread and then
//               waits for the image with `while (!image_loaded) sched_yield();`: nothing
//               in the kernel joins it to the thread that ends its loop.
//   cw-loader   a thread of the viewer: sends a request for the image to the fetcher down
//               a pipe, blocks in read() on a second pipe for the reply, then stores
//               image_loaded = 1 (a plain store: no system call, no wake-up).
//   cw-fetcher  a child process standing for a slow network: reads the request, waits
//               FETCH_MS for the "network" (a one-shot timerfd it arms and reads), writes
//               the reply.
//
// Expected diagnosis: the hang is cw-viewer's yield loop (RepeatedYield, about FETCH_MS).
// Without a declaration of image_loaded the diagnosis stops there: the loop's sched_yield
// calls and no thread behind them. With the scenario's pack (the flag traced by instruction
// probes, `record --flags probe`) the flag edge cw-loader → cw-viewer shows who ended the
// loop; cw-loader was itself blocked in read() on the fetcher's pipe for the whole loop (a
// culprit, diagnosed in turn), and cw-fetcher is the root cause: blocked FETCH_MS in read()
// on its timerfd, ended by its own timer.
//
// Why probes and not a watchpoint: a watchpoint records the write at its trap, just after
// the store, and the viewer spinning on the other CPU can read the new value before that
// record; the write would then come after the read that saw it, and no edge would join
// them. A probed store is stamped before it runs.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// Non-static, so the executable's symbol table names it for the pack's flag rule.
volatile int image_loaded;

static int request_fd, reply_fd;  // the loader's ends of the pipes to and from the fetcher
static long fetch_ms = 500;

static void fail(const char* what) {
  fprintf(stderr, "cw-scn-yieldflag: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void name_thread(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail("prctl");
}

// One read() of exactly `size` bytes; 0 at end of stream.
static int read_all(int fd, void* buffer, size_t size) {
  ssize_t got;
  do {
    got = read(fd, buffer, size);
  } while (got < 0 && errno == EINTR);
  if (got < 0) fail("read");
  if (got == 0) return 0;
  if (got != (ssize_t)size) {
    errno = EPROTO;
    fail("short read");
  }
  return 1;
}

static void write_all(int fd, const void* buffer, size_t size) {
  if (write(fd, buffer, size) != (ssize_t)size) fail("write");
}

// Blocks `ms` milliseconds in read() on a one-shot timerfd.
static void wait_for_network(long ms) {
  int timer = timerfd_create(CLOCK_MONOTONIC, 0);
  if (timer < 0) fail("timerfd_create");
  struct itimerspec once = {{0, 0}, {ms / 1000, (ms % 1000) * 1000000L}};
  if (timerfd_settime(timer, 0, &once, NULL) != 0) fail("timerfd_settime");
  uint64_t expirations = 0;
  if (!read_all(timer, &expirations, sizeof expirations) || expirations != 1) {
    errno = EPROTO;
    fail("timerfd read");
  }
  close(timer);
}

// The fetcher: one request, one slow reply.
static void run_fetcher(int in_fd, int out_fd) {
  name_thread("cw-fetcher");
  uint32_t request;
  if (!read_all(in_fd, &request, sizeof request)) exit(0);
  wait_for_network(fetch_ms);  // the network is slow today
  uint32_t reply = request + 1;
  write_all(out_fd, &reply, sizeof reply);
  exit(0);
}

static void* run_loader(void* unused) {
  (void)unused;
  name_thread("cw-loader");
  uint32_t request = 41, reply = 0;
  write_all(request_fd, &request, sizeof request);
  if (!read_all(reply_fd, &reply, sizeof reply)) {
    errno = EPIPE;
    fail("the fetcher closed its pipe");
  }
  if (reply != request + 1) {
    errno = EPROTO;
    fail("wrong reply from the fetcher");
  }
  image_loaded = 1;  // the viewer's loop sees it on its next poll
  return NULL;
}

// The viewer's wait for the image: a poll of the flag between yields.
__attribute__((noinline)) static long wait_for_image(void) {
  long polls = 0;
  while (!image_loaded) {
    ++polls;
    sched_yield();
  }
  return polls;
}

int main(int argc, char** argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: cw-scn-yieldflag [FETCH_MS]\n");
    return 1;
  }
  if (argc == 2) {
    char* end = NULL;
    fetch_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || fetch_ms <= 0 || fetch_ms > 3000) {
      fprintf(stderr, "cw-scn-yieldflag: FETCH_MS must be 1..3000, got '%s'\n", argv[1]);
      return 1;
    }
  }
  int requests[2], replies[2];  // [0] read end, [1] write end
  if (pipe(requests) != 0 || pipe(replies) != 0) fail("pipe");
  pid_t fetcher = fork();
  if (fetcher < 0) fail("fork");
  if (fetcher == 0) {
    close(requests[1]);
    close(replies[0]);
    run_fetcher(requests[0], replies[1]);
  }
  close(requests[0]);
  close(replies[1]);
  request_fd = requests[1];
  reply_fd = replies[0];
  name_thread("cw-viewer");

  pthread_t loader;
  int error = pthread_create(&loader, NULL, run_loader, NULL);
  if (error != 0) errno = error, fail("pthread_create");
  wait_for_image();
  error = pthread_join(loader, NULL);
  if (error != 0) errno = error, fail("pthread_join");
  close(request_fd);
  close(reply_fd);
  int status = 0;
  if (waitpid(fetcher, &status, 0) != fetcher) fail("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = ECHILD;
    fail("the fetcher failed");
  }
  return 0;
}
