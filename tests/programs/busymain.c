// A main thread that computes for a long time on CPU, started by another process's message,
// so a diagnosis finds a long-running segment and slices it back to the message's write.
//
//   cw-prog-busymain [-v] [-t] [WORK_MS]   WORK_MS (default 300) of computation
//
// "cw-ui" (the parent's main thread) blocks in read() on a unix socketpair; "cw-sender" (the
// child) sleeps 50 ms, so that read is blocked, and writes one "work" message. cw-ui runs
// expensive_work() for WORK_MS without a syscall, writes "done", and blocks in read() again;
// cw-sender, blocked in read() for that "done", then writes "quit", and cw-ui exits.
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum { kMessageBytes = 8 };

static void set_process_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME, %s)", name);
}

static void write_word(int fd, const char* word, const char* what) {
  char message[kMessageBytes] = {0};
  strncpy(message, word, sizeof message - 1);
  ssize_t written = write(fd, message, sizeof message);
  if (written != (ssize_t)sizeof message) fail_errno("%s: write of %d bytes", what, kMessageBytes);
}

// One read() of one message, which must be `word`.
static void read_word(int fd, const char* word, const char* what) {
  char message[kMessageBytes];
  ssize_t got;
  do {
    got = read(fd, message, sizeof message);
  } while (got < 0 && errno == EINTR);
  if (got < 0) fail_errno("%s: read", what);
  if (got != (ssize_t)sizeof message) fail("%s: read %zd of %d bytes", what, got, kMessageBytes);
  message[kMessageBytes - 1] = '\0';
  if (strcmp(message, word) != 0) fail("%s: got '%s', expected '%s'", what, message, word);
}

// Keeps the CPU busy for `duration_ns`. clock_gettime(CLOCK_MONOTONIC) is answered by the
// vDSO, so the loop makes no syscall: the thread stays on CPU (runnable) the whole time.
// noinline so the function shows in user stacks under its own name.
__attribute__((noinline)) static uint64_t expensive_work(long long duration_ns) {
  volatile uint64_t state = 88172645463325252ULL;
  long long deadline_ns = monotonic_ns() + duration_ns;
  uint64_t rounds = 0;
  do {
    for (int i = 0; i < 100000; ++i) {  // xorshift: work the compiler cannot drop
      uint64_t x = state;
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      state = x;
    }
    ++rounds;
  } while (monotonic_ns() < deadline_ns);
  return rounds;
}

static void run_sender(int ui_fd) {
  set_process_name("cw-sender");
  sleep_ns(50 * 1000000LL);
  write_word(ui_fd, "work", "cw-sender: work");
  read_word(ui_fd, "done", "cw-sender: done");
  write_word(ui_fd, "quit", "cw-sender: quit");
  exit(0);
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-busymain");
  if (options.positional_count > 1) fail("usage: cw-prog-busymain [-v] [-t] [WORK_MS]");
  long work_ms = count_argument(&options, 0, 300, "WORK_MS");

  long long start_ns = monotonic_ns();
  set_process_name("cw-ui");
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) != 0) fail_errno("socketpair");
  pid_t sender = fork();
  if (sender < 0) fail_errno("fork");
  if (sender == 0) {
    close(sockets[0]);
    run_sender(sockets[1]);
  }
  close(sockets[1]);
  int ui_fd = sockets[0];
  read_word(ui_fd, "work", "cw-ui: work");
  long long work_start_ns = monotonic_ns();
  uint64_t rounds = expensive_work(work_ms * 1000000LL);
  long long worked_ns = monotonic_ns() - work_start_ns;
  write_word(ui_fd, "done", "cw-ui: done");
  read_word(ui_fd, "quit", "cw-ui: quit");
  int status = 0;
  if (waitpid(sender, &status, 0) != sender) fail_errno("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail("cw-sender failed (wait status 0x%x)", status);
  report_elapsed(&options, start_ns);
  if (options.verbose)
    printf("busymain: cw-ui %d cw-sender %d: expensive_work ran %lld ms (%llu rounds)\n",
           (int)getpid(), (int)sender, worked_ns / 1000000, (unsigned long long)rounds);
  return 0;
}
