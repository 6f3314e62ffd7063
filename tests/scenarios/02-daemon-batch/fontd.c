// A daemon that serves many clients inside one callback (the Argus paper, §3.1, "dispatch
// message batching": fontd's dispatch_mig_server() runs a whole server loop inside one
// callback, so one "segment" holds the requests of many apps).
//
//   cw-scn-fontd [RENDER_MS]   RENDER_MS (default 600): how long cw-fontd renders for
//                              cw-client-b in the slow round
//
// Story. cw-fontd (the parent process) serves two client processes, cw-client-b and
// cw-client-a, through a shared-memory mailbox: a client writes its request into its slot,
// bumps the mailbox's doorbell and wakes it (FUTEX_WAKE), then sleeps on its slot's reply
// word until the daemon bumps it and wakes it (a process-shared futex, the way fast IPC
// avoids a system call per message). The daemon sleeps on the doorbell; when woken it calls
// serve_ready(), which keeps scanning the slots and calls handle_request() for every
// pending request until none is left, then goes back to sleep. Every request is one call
// of handle_request(): render_glyphs() for the request's cost, then the reply.
// Each client makes two requests at fixed times from the start: cw-client-b at 50 ms and
// 200 ms, cw-client-a at 100 ms and 350 ms. cw-client-b's second request costs RENDER_MS of
// rendering; the others cost nothing. cw-client-a's second request thus arrives while the
// daemon renders for cw-client-b, and the same serve_ready() call serves it right after,
// ~RENDER_MS - 150 ms late.
//
// Expected diagnosis, for cw-client-a's long wait (LongWait in futex): the daemon is the
// thread that normally answers it, and it ran on a CPU all along: the root cause is
// cw-fontd's handle_request() for cw-client-b (LongRunning, render_glyphs() under
// handle_request()). With no rule, nothing cuts serve_ready(): its whole run, from the
// doorbell wait through both requests, is one segment tied to both clients, and the
// culprit reported is that segment, whose telling stack is the doorbell wait in main().
// The scenario's pack (pack.cw) declares the batch: each handle_request() call in
// serve_ready() is its own segment. (Recorded with --stacks all, so that the reply's
// FUTEX_WAKE, which does not block, carries a stack naming handle_request; and with
// --hooks uprobe: an inline hook's exit stub stands in for the hooked function's return
// address, so stacks walked through it lose handle_request and serve_ready.)
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kClients = 2, kRounds = 2 };

struct slot {
  _Atomic uint32_t pending;  // 1: a request is waiting in this slot
  uint32_t round;            // the request: its round (1, 2) ...
  uint32_t cost_ms;          // ... and how long rendering it takes
  _Atomic uint32_t replied;  // the latest round answered (a futex word: the client sleeps on it)
};

struct mailbox {
  _Atomic uint32_t doorbell;  // bumped per request (a futex word: the daemon sleeps on it)
  long long start_ns;         // the schedule's time origin
  struct slot slots[kClients];
};

// Who sends what, when (ms after the start): slot 0 is cw-client-b, slot 1 cw-client-a.
static const char* const kNames[kClients] = {"cw-client-b", "cw-client-a"};
static const long kSendAtMs[kClients][kRounds] = {{50, 200}, {100, 350}};
static long render_ms = 600;
static struct mailbox* box;
static volatile unsigned long long sink;

static void fail(const char* what) {
  fprintf(stderr, "cw-scn-fontd: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void set_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail("prctl(PR_SET_NAME)");
}

static long long monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);  // the vDSO: no system call
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

// Process-shared futex calls (no FUTEX_PRIVATE_FLAG: the words live in a shared mapping).
// Not inlined, so a stack taken in the system call names the function that called them.
__attribute__((noinline)) void futex_sleep(_Atomic uint32_t* word, uint32_t expected) {
  if (syscall(SYS_futex, word, FUTEX_WAIT, expected, NULL, NULL, 0) != 0 && errno != EAGAIN &&
      errno != EINTR)
    fail("futex wait");
}

__attribute__((noinline)) void futex_wake_one(_Atomic uint32_t* word) {
  if (syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0) < 0) fail("futex wake");
}

// The rendering: RENDER_MS of CPU work, with no system call.
__attribute__((noinline)) void render_glyphs(long ms) {
  unsigned long long x = 88172645463325252ULL;
  long long end = monotonic_ns() + ms * 1000000LL;
  while (monotonic_ns() < end)
    for (int i = 0; i < 1000; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  sink += x;
}

static long served_total;

// One request: render, then reply. (The count after the wake keeps the wake a real call,
// not a tail jump, so that handle_request stays in the wake's stack.)
__attribute__((noinline)) void handle_request(struct slot* slot) {
  if (slot->cost_ms > 0) render_glyphs(slot->cost_ms);
  atomic_store(&slot->pending, 0);
  atomic_store(&slot->replied, slot->round);
  futex_wake_one(&slot->replied);
  ++served_total;
}

// Every pending request, until none is left (requests that arrive meanwhile included):
// the callback that holds a whole server loop. Returns how many it served.
__attribute__((noinline)) int serve_ready(void) {
  int served = 0, found;
  do {
    found = 0;
    for (int k = 0; k < kClients; ++k) {
      if (!atomic_load(&box->slots[k].pending)) continue;
      handle_request(&box->slots[k]);
      ++served;
      found = 1;
    }
  } while (found);
  return served;
}

// The daemon's idle wait: until a client rings after `seen`.
__attribute__((noinline)) void wait_for_requests(uint32_t seen) {
  while (atomic_load(&box->doorbell) == seen) futex_sleep(&box->doorbell, seen);
}

static void sleep_until_ms(long ms) {
  long long at = box->start_ns + ms * 1000000LL;
  struct timespec when = {(time_t)(at / 1000000000LL), (long)(at % 1000000000LL)};
  int error;
  while ((error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &when, NULL)) == EINTR) {
  }
  if (error != 0) errno = error, fail("clock_nanosleep");
}

static void run_client(int k) {
  set_name(kNames[k]);
  struct slot* slot = &box->slots[k];
  for (uint32_t round = 1; round <= kRounds; ++round) {
    sleep_until_ms(kSendAtMs[k][round - 1]);
    slot->round = round;
    slot->cost_ms = (k == 0 && round == kRounds) ? (uint32_t)render_ms : 0;
    atomic_store(&slot->pending, 1);
    atomic_fetch_add(&box->doorbell, 1);
    futex_wake_one(&box->doorbell);
    uint32_t got;
    while ((got = atomic_load(&slot->replied)) != round) futex_sleep(&slot->replied, got);
  }
  exit(0);
}

int main(int argc, char** argv) {
  if (argc > 2) {
    fprintf(stderr, "cw-scn-fontd: usage: cw-scn-fontd [RENDER_MS]\n");
    return 1;
  }
  if (argc == 2) {
    char* end = NULL;
    render_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || render_ms < 200 || render_ms > 1500) {
      fprintf(stderr, "cw-scn-fontd: RENDER_MS must be 200..1500, got '%s'\n", argv[1]);
      return 1;
    }
  }
  set_name("cw-fontd");
  box = mmap(NULL, sizeof *box, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (box == MAP_FAILED) fail("mmap");
  memset(box, 0, sizeof *box);
  box->start_ns = monotonic_ns();
  pid_t pids[kClients];
  for (int k = 0; k < kClients; ++k) {
    pids[k] = fork();
    if (pids[k] < 0) fail("fork");
    if (pids[k] == 0) run_client(k);
  }
  int left = kClients * kRounds;
  uint32_t seen = 0;
  while (left > 0) {
    wait_for_requests(seen);
    seen = atomic_load(&box->doorbell);
    left -= serve_ready();
  }
  for (int k = 0; k < kClients; ++k) {
    int status;
    if (waitpid(pids[k], &status, 0) != pids[k]) fail("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "cw-scn-fontd: %s failed (wait status 0x%x)\n", kNames[k], status);
      return 1;
    }
  }
  return 0;
}
