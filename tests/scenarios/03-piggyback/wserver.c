// Reply to the previous request and receive the next one in one call (the Argus paper, §3.1,
// "batching in event processing": WindowServer sends the reply to the last request and
// receives the next message in one mach_msg(SEND|RCV)).
//
//   cw-scn-wserver [REDRAW_MS]   REDRAW_MS (default 500): how long cw-wserver composes
//                                cw-app-b's redraw
//
// Story. cw-wserver (the parent process) serves two app processes, cw-app-a and cw-app-b.
// Every app writes its 16-byte requests into the server's one request pipe and reads its
// reply from a pipe of its own. The server's loop is reply_and_receive(), which sends the
// reply to the previous request and receives the next request in ONE system call: a write
// to the previous app's reply pipe and a read of the request pipe, submitted together to
// an io_uring and waited for with one io_uring_enter() (the Linux analog of WindowServer's
// mach_msg). The write goes out at once; the read waits until an app sends.
// Schedule (ms from the start): cw-app-a asks for a small update (1 ms to compose) at 50 ms,
// then every 150 ms from 700 ms to 1300 ms (a cursor blinking); cw-app-b asks for a full
// redraw at 150 ms, which compose_frame() computes for REDRAW_MS on a CPU. Each app exits
// after its last reply, and the server when both have (end of file on the request pipe).
//
// Expected diagnosis of cw-wserver (hang "cw-wserver"): LongRunning, the REDRAW_MS redraw,
// started by cw-app-b's request: the causal path runs from cw-app-b to cw-wserver.
// Without a rule the recorder sees no system call in the server's loop at all (io_uring_enter
// is not one it decodes: no boundary, no send or receive), only the wake-ups the call makes
// and its blocks: the whole loop is one segment tied to both apps, every reply's wake-up and
// every request's in one, and over all of it the server waited (~800 ms) more than it ran,
// so the symptom comes out as one LongWait of the whole loop. The scenario's pack (pack.cw)
// declares reply_and_receive(): the block inside it is where the server goes back to its loop (the
// next request begins after it), a wake-up it makes is a reply, a wake-up that ends its block is a
// request.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
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

enum { kApps = 2, kMessageBytes = 16, kMaxRequests = 7 };

struct message {
  uint32_t app;      // who asks (0: cw-app-a, 1: cw-app-b)
  uint32_t seq;      // its request number
  uint32_t cost_ms;  // how long composing the answer takes
  uint32_t pad;
};

static const char* const kNames[kApps] = {"cw-app-a", "cw-app-b"};
static long redraw_ms = 500;
static long long start_ns;
static volatile unsigned long long sink;

static void fail(const char* what, int error) {
  fprintf(stderr, "cw-scn-wserver: %s: %s\n", what, strerror(error));
  exit(1);
}

static void set_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail("prctl(PR_SET_NAME)", errno);
}

static long long monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);  // the vDSO: no system call
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

// ---- a minimal io_uring (no liburing) ----------------------------------------------------

struct ring {
  int fd;
  _Atomic unsigned *sq_head, *sq_tail, *cq_head, *cq_tail;
  unsigned sq_mask, cq_mask, *sq_array;
  struct io_uring_sqe* sqes;
  struct io_uring_cqe* cqes;
};

static void ring_init(struct ring* r) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  r->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
  if (r->fd < 0) fail("io_uring_setup", errno);
  size_t sq_bytes = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cq_bytes = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  if (!(p.features & IORING_FEAT_SINGLE_MMAP)) fail("io_uring without IORING_FEAT_SINGLE_MMAP", 0);
  size_t bytes = sq_bytes > cq_bytes ? sq_bytes : cq_bytes;
  char* rings = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                     IORING_OFF_SQ_RING);
  if (rings == MAP_FAILED) fail("mmap io_uring rings", errno);
  r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
  if (r->sqes == MAP_FAILED) fail("mmap io_uring sqes", errno);
  r->sq_head = (_Atomic unsigned*)(rings + p.sq_off.head);
  r->sq_tail = (_Atomic unsigned*)(rings + p.sq_off.tail);
  r->sq_mask = *(unsigned*)(rings + p.sq_off.ring_mask);
  r->sq_array = (unsigned*)(rings + p.sq_off.array);
  r->cq_head = (_Atomic unsigned*)(rings + p.cq_off.head);
  r->cq_tail = (_Atomic unsigned*)(rings + p.cq_off.tail);
  r->cq_mask = *(unsigned*)(rings + p.cq_off.ring_mask);
  r->cqes = (struct io_uring_cqe*)(rings + p.cq_off.cqes);
}

// Queues a read or write of `len` bytes at `buf` on the stream `fd`; `tag` comes back in
// its completion.
static void ring_queue(struct ring* r, uint8_t op, int fd, void* buf, unsigned len, uint64_t tag) {
  unsigned tail = atomic_load_explicit(r->sq_tail, memory_order_relaxed);
  unsigned index = tail & r->sq_mask;
  struct io_uring_sqe* sqe = &r->sqes[index];
  memset(sqe, 0, sizeof *sqe);
  sqe->opcode = op;
  sqe->fd = fd;
  sqe->addr = (uint64_t)(uintptr_t)buf;
  sqe->len = len;
  sqe->off = (uint64_t)-1;  // streams: the current position
  sqe->user_data = tag;
  r->sq_array[index] = index;
  atomic_store_explicit(r->sq_tail, tail + 1, memory_order_release);
}

// Submits what is queued and waits for `count` completions: ONE system call. Returns the
// result of the completion tagged `tag`.
static int ring_submit_and_wait(struct ring* r, unsigned count, uint64_t tag) {
  int result = 0;
  for (;;) {
    long n = syscall(SYS_io_uring_enter, r->fd, count, count, IORING_ENTER_GETEVENTS, NULL, 0);
    if (n >= 0 || errno != EINTR) {
      if (n < 0) fail("io_uring_enter", errno);
      break;
    }
    count = 0;  // interrupted: already submitted, wait again (rare)
  }
  unsigned head = atomic_load_explicit(r->cq_head, memory_order_relaxed);
  unsigned tail = atomic_load_explicit(r->cq_tail, memory_order_acquire);
  for (; head != tail; ++head) {
    const struct io_uring_cqe* cqe = &r->cqes[head & r->cq_mask];
    if (cqe->res < 0) fail("io_uring completion", -cqe->res);
    if (cqe->user_data == tag) result = cqe->res;
  }
  atomic_store_explicit(r->cq_head, head, memory_order_release);
  return result;
}

// ---- the server ----------------------------------------------------------------------------

static struct ring ring;
static int request_fd;        // the read end of the request pipe
static int reply_fds[kApps];  // the write ends of the apps' reply pipes

// The piggyback: sends `reply` to its app (none when `reply` is NULL) and receives the next
// request into `next`, in one io_uring_enter. Returns 0 at end of file (every app is gone).
__attribute__((noinline)) int reply_and_receive(const struct message* reply, struct message* next) {
  unsigned count = 0;
  if (reply) {
    ring_queue(&ring, IORING_OP_WRITE, reply_fds[reply->app], (void*)reply, kMessageBytes, 1);
    ++count;
  }
  ring_queue(&ring, IORING_OP_READ, request_fd, next, kMessageBytes, 2);
  ++count;
  int got = ring_submit_and_wait(&ring, count, 2);
  if (got != 0 && got != kMessageBytes) fail("short request", EPROTO);
  return got == kMessageBytes;
}

// The answer to a request: composing takes the request's cost on a CPU, no system call.
__attribute__((noinline)) void compose_frame(long ms) {
  unsigned long long x = 88172645463325252ULL;
  long long end = monotonic_ns() + ms * 1000000LL;
  while (monotonic_ns() < end)
    for (int i = 0; i < 1000; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  sink += x;
}

static void serve(void) {
  ring_init(&ring);
  struct message request, reply;
  int have = reply_and_receive(NULL, &request);
  while (have) {
    if (request.app >= kApps) fail("request from an unknown app", EPROTO);
    compose_frame(request.cost_ms);
    reply = request;
    have = reply_and_receive(&reply, &request);
  }
}

// ---- the apps ------------------------------------------------------------------------------

static void sleep_until_ms(long ms) {
  long long at = start_ns + ms * 1000000LL;
  struct timespec when = {(time_t)(at / 1000000000LL), (long)(at % 1000000000LL)};
  int error;
  while ((error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &when, NULL)) == EINTR) {
  }
  if (error != 0) fail("clock_nanosleep", error);
}

static void run_app(uint32_t app, int request_write_fd, int reply_read_fd) {
  set_name(kNames[app]);
  // When each request goes out (ms from the start; -1 ends the list).
  static const long kAtMs[kApps][kMaxRequests] = {{50, 700, 850, 1000, 1150, 1300, -1}, {150, -1}};
  for (uint32_t seq = 0; seq < kMaxRequests && kAtMs[app][seq] >= 0; ++seq) {
    sleep_until_ms(kAtMs[app][seq]);
    struct message request = {app, seq, app == 1 ? (uint32_t)redraw_ms : 1, 0}, reply;
    if (write(request_write_fd, &request, sizeof request) != (ssize_t)sizeof request)
      fail("write request", errno);
    ssize_t got = read(reply_read_fd, &reply, sizeof reply);
    if (got != (ssize_t)sizeof reply) fail("read reply", got < 0 ? errno : EPROTO);
    if (reply.app != app || reply.seq != seq) fail("a reply to someone else's request", EPROTO);
  }
  exit(0);
}

int main(int argc, char** argv) {
  if (argc > 2) {
    fprintf(stderr, "cw-scn-wserver: usage: cw-scn-wserver [REDRAW_MS]\n");
    return 1;
  }
  if (argc == 2) {
    char* end = NULL;
    redraw_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || redraw_ms < 100 || redraw_ms > 1000) {
      fprintf(stderr, "cw-scn-wserver: REDRAW_MS must be 100..1000, got '%s'\n", argv[1]);
      return 1;
    }
  }
  set_name("cw-wserver");
  start_ns = monotonic_ns();
  int requests[2];
  if (pipe2(requests, O_CLOEXEC) != 0) fail("pipe2", errno);
  request_fd = requests[0];
  pid_t pids[kApps];
  for (uint32_t app = 0; app < kApps; ++app) {
    int replies[2];
    if (pipe2(replies, O_CLOEXEC) != 0) fail("pipe2", errno);
    pids[app] = fork();
    if (pids[app] < 0) fail("fork", errno);
    if (pids[app] == 0) {
      close(requests[0]);
      close(replies[1]);
      run_app(app, requests[1], replies[0]);
    }
    close(replies[0]);
    reply_fds[app] = replies[1];
  }
  close(requests[1]);  // end of file once both apps have exited
  serve();
  for (uint32_t app = 0; app < kApps; ++app) {
    int status;
    if (waitpid(pids[app], &status, 0) != pids[app]) fail("waitpid", errno);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "cw-scn-wserver: %s failed (wait status 0x%x)\n", kNames[app], status);
      return 1;
    }
  }
  return 0;
}
