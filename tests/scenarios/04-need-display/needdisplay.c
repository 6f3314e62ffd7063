// A flag set by a worker and read by the main loop: CoreAnimation's need_display (the Argus
// paper, §3.2, Figure 5). A worker thread lays out new content and sets a global `need_display`;
// the main thread's frame loop checks the flag on every frame and draws when it is set.
// Nothing in the kernel joins the worker to the main thread: the store is a plain store.
//
//   cw-scn-needdisplay [LAYOUT_MS]     (default 400)
//
//   cw-app      the main thread. Its frame loop is driven by a 10 ms periodic timerfd (a
//               display link): it blocks in read() on it, and after each frame tick reads
//               need_display; when it is set, it clears it and draws (display_frame,
//               about 5 ms on the CPU). It hands the worker two relayout requests down a
//               pipe, one after the other, and after each runs frames until the new content
//               has been drawn once.
//   cw-layout   the layout worker: blocks in read() on the pipe for a request, lays the
//               content out (layout_content, on the CPU for as long as the request says,
//               no system call), then stores need_display = 1, and waits for the next
//               request (end of stream: it exits). The first request (a small window)
//               takes 10 ms, the second (a large document) LAYOUT_MS.
//
// The frame loop blocks in read() on the timerfd, not in epoll_wait or poll: those are an
// event loop's idle waits (linux.kernel's loop.wait), after which the thread counts as back
// in its loop, while here the main thread is waiting for the worker's content all along.
//
// What the user sees: after the second request the window is not redrawn for LAYOUT_MS; the
// main thread ticks through about LAYOUT_MS / 10 frames, each a short read() of the timer
// and a read of the flag. (The first, quick request also makes sure cw-layout is already
// back in its read() for the next request when those frames begin.)
//
// Expected diagnosis: the hang is cw-app's run of frame ticks (RepeatedYield, about
// LAYOUT_MS: the same read() over and over, each short). Without a declaration of
// need_display there is no edge from cw-layout to cw-app (an under-connection) and the
// diagnosis stops at the loop. With the scenario's pack (the flag traced by a hardware
// watchpoint) the flag edge cw-layout → cw-app explains when the loop ended, and cw-layout,
// on the CPU for the whole loop, is the root cause (LongRunning). The read that sees the
// store comes at the next frame tick, milliseconds later, well after the watchpoint has
// recorded the write (the trap follows the store within microseconds).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

// Non-static, so the executable's symbol table names it for the pack's flag rule.
volatile int need_display;

enum { kFrameMs = 10, kDisplayMs = 5, kQuickLayoutMs = 10, kMaxFrames = 1000 };

static long layout_ms = 400;    // the second request's layout time
static int request_fds[2];      // [0] the worker reads requests, [1] the main thread writes them
static volatile uint64_t sink;  // what the "work" computes, so it is not optimized away

static void fail(const char* what) {
  fprintf(stderr, "cw-scn-needdisplay: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void name_thread(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail("prctl");
}

static long long monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

// On the CPU for `ms` milliseconds with no system call (the vDSO answers clock_gettime).
static void burn_cpu(long ms) {
  uint64_t x = 88172645463325252ULL;
  long long deadline = monotonic_ns() + ms * 1000000LL;
  do {
    for (int i = 0; i < 20000; ++i) {  // xorshift rounds
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
  } while (monotonic_ns() < deadline);
  sink = x;
}

__attribute__((noinline)) static void layout_content(long ms) {
  burn_cpu(ms);
}

__attribute__((noinline)) static void display_frame(void) {
  burn_cpu(kDisplayMs);
}

static void* run_layout(void* unused) {
  (void)unused;
  name_thread("cw-layout");
  for (;;) {
    uint32_t request;
    ssize_t got;
    do {
      got = read(request_fds[0], &request, sizeof request);
    } while (got < 0 && errno == EINTR);
    if (got < 0) fail("layout: read");
    if (got == 0) return NULL;  // the app closed the pipe: no more requests
    if (got != (ssize_t)sizeof request) {
      errno = EPROTO;
      fail("layout: short read");
    }
    layout_content(request);
    need_display = 1;  // the main loop draws it on its next frame
  }
}

// One frame tick of the display link: blocks until the timer expires.
static void wait_for_frame(int timer) {
  uint64_t expirations;
  ssize_t got;
  do {
    got = read(timer, &expirations, sizeof expirations);
  } while (got < 0 && errno == EINTR);
  if (got != (ssize_t)sizeof expirations) fail("read timerfd");
}

// Frames until the new content has been drawn once; returns how many ticks that took.
__attribute__((noinline)) static int run_frames(int timer) {
  for (int frame = 1; frame <= kMaxFrames; ++frame) {
    wait_for_frame(timer);
    if (need_display) {
      need_display = 0;
      display_frame();
      return frame;
    }
  }
  errno = ETIMEDOUT;
  fail("the layout never asked for a display");
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: cw-scn-needdisplay [LAYOUT_MS]\n");
    return 1;
  }
  if (argc == 2) {
    char* end = NULL;
    layout_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || layout_ms <= 0 || layout_ms > 3000) {
      fprintf(stderr, "cw-scn-needdisplay: LAYOUT_MS must be 1..3000, got '%s'\n", argv[1]);
      return 1;
    }
  }
  name_thread("cw-app");
  if (pipe(request_fds) != 0) fail("pipe");
  int timer = timerfd_create(CLOCK_MONOTONIC, 0);
  if (timer < 0) fail("timerfd_create");
  pthread_t layout;
  int error = pthread_create(&layout, NULL, run_layout, NULL);
  if (error != 0) errno = error, fail("pthread_create");

  struct itimerspec frames = {{0, kFrameMs * 1000000L}, {0, kFrameMs * 1000000L}};
  if (timerfd_settime(timer, 0, &frames, NULL) != 0) fail("timerfd_settime");
  const uint32_t requests[2] = {kQuickLayoutMs, (uint32_t)layout_ms};  // how long each takes
  for (int k = 0; k < 2; ++k) {
    if (write(request_fds[1], &requests[k], sizeof requests[k]) != (ssize_t)sizeof requests[k])
      fail("write request");
    run_frames(timer);
  }

  close(request_fds[1]);  // end of stream: the worker exits
  error = pthread_join(layout, NULL);
  if (error != 0) errno = error, fail("pthread_join");
  close(timer);
  return 0;
}
