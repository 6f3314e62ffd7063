// A long wait through three processes, so a diagnosis can walk from the waiting client
// back through the server to the timekeeper's timer.
//
//   cw-prog-chain [-v] [-t] [slow|fast|both] [DELAY_MS]
//       slow (default): one round whose timer runs DELAY_MS (default 300) milliseconds
//       fast: one round with DELAY_MS 0 (the baseline: the same syscalls, a short wait)
//       both: a fast round, then a slow round (a baseline and a slow instance in one trace)
//
// A round: the client ("cw-client") writes a request to the server ("cw-server") and blocks
// in read(); the server writes a question to the timekeeper ("cw-timekeeper") and blocks in
// read(); the timekeeper arms its timerfd, read()s the expiry, answers the server, and the
// server answers the client. Every message is one 8-byte write() and one read().
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

// What travels on both sockets: which round, and how long the timekeeper's timer runs.
struct message {
  uint32_t round;
  uint32_t delay_ms;
};

static void set_process_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME, %s)", name);
}

static void write_message(int fd, const struct message* message, const char* what) {
  ssize_t written = write(fd, message, sizeof *message);
  if (written < 0) fail_errno("%s: write", what);
  if (written != (ssize_t)sizeof *message)
    fail("%s: wrote %zd of %zu bytes", what, written, sizeof *message);
}

// One read() of a whole message; returns 0 at end of stream (the peer is done).
static int read_message(int fd, struct message* message, const char* what) {
  ssize_t got;
  do {
    got = read(fd, message, sizeof *message);
  } while (got < 0 && errno == EINTR);
  if (got < 0) fail_errno("%s: read", what);
  if (got == 0) return 0;
  if (got != (ssize_t)sizeof *message)
    fail("%s: read %zd of %zu bytes", what, got, sizeof *message);
  return 1;
}

static void expect_reply(const struct message* reply, const struct message* request,
                         const char* what) {
  if (reply->round != request->round || reply->delay_ms != request->delay_ms)
    fail("%s: reply for round %u delay %u, expected round %u delay %u", what, reply->round,
         reply->delay_ms, request->round, request->delay_ms);
}

// Arms the one-shot timer and blocks in read() until it expires. DELAY 0 arms 1 ns: a zero
// it_value would disarm the timer instead, and the read would never return.
static void wait_for_timer(int timer_fd, uint32_t delay_ms) {
  struct itimerspec once = {{0, 0}, {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L}};
  if (delay_ms == 0) once.it_value.tv_nsec = 1;
  if (timerfd_settime(timer_fd, 0, &once, NULL) != 0) fail_errno("timekeeper: timerfd_settime");
  uint64_t expirations = 0;
  ssize_t got;
  do {
    got = read(timer_fd, &expirations, sizeof expirations);
  } while (got < 0 && errno == EINTR);
  if (got < 0) fail_errno("timekeeper: read timerfd");
  if (got != (ssize_t)sizeof expirations || expirations != 1)
    fail("timekeeper: read timerfd returned %zd bytes, %llu expirations", got,
         (unsigned long long)expirations);
}

static void run_timekeeper(int server_fd) {
  set_process_name("cw-timekeeper");
  int timer_fd = timerfd_create(CLOCK_MONOTONIC, 0);
  if (timer_fd < 0) fail_errno("timekeeper: timerfd_create");
  struct message question;
  while (read_message(server_fd, &question, "timekeeper: question")) {
    wait_for_timer(timer_fd, question.delay_ms);
    write_message(server_fd, &question, "timekeeper: answer");
  }
  exit(0);
}

static void run_server(int client_fd, int timekeeper_fd) {
  set_process_name("cw-server");
  struct message request, answer;
  while (read_message(client_fd, &request, "server: request")) {
    write_message(timekeeper_fd, &request, "server: question");
    if (!read_message(timekeeper_fd, &answer, "server: answer"))
      fail("server: the timekeeper closed its socket");
    expect_reply(&answer, &request, "server: answer");
    write_message(client_fd, &answer, "server: reply");
  }
  exit(0);
}

static pid_t fork_or_fail(const char* what) {
  pid_t pid = fork();
  if (pid < 0) fail_errno("fork %s", what);
  return pid;
}

static void wait_for_exit(pid_t pid, const char* what) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) fail_errno("waitpid %s", what);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail("the %s failed (wait status 0x%x)", what, status);
}

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-chain");
  const char* mode = options.positional_count > 0 ? options.positional[0] : "slow";
  if (options.positional_count > 2)
    fail("usage: cw-prog-chain [-v] [-t] [slow|fast|both] [DELAY_MS]");
  long slow_delay_ms = count_argument(&options, 1, 300, "DELAY_MS");
  uint32_t delays[2];
  int rounds = 0;
  if (strcmp(mode, "slow") == 0) {
    delays[rounds++] = (uint32_t)slow_delay_ms;
  } else if (strcmp(mode, "fast") == 0) {
    delays[rounds++] = 0;
  } else if (strcmp(mode, "both") == 0) {
    delays[rounds++] = 0;
    delays[rounds++] = (uint32_t)slow_delay_ms;
  } else {
    fail("mode must be slow, fast or both, got '%s'", mode);
  }

  long long start_ns = monotonic_ns();
  set_process_name("cw-client");
  int client_server[2], server_timekeeper[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, client_server) != 0) fail_errno("socketpair");
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, server_timekeeper) != 0) fail_errno("socketpair");
  pid_t timekeeper = fork_or_fail("timekeeper");
  if (timekeeper == 0) {
    close(client_server[0]);
    close(client_server[1]);
    close(server_timekeeper[0]);
    run_timekeeper(server_timekeeper[1]);
  }
  close(server_timekeeper[1]);
  pid_t server = fork_or_fail("server");
  if (server == 0) {
    close(client_server[0]);
    run_server(client_server[1], server_timekeeper[0]);
  }
  close(server_timekeeper[0]);
  close(client_server[1]);

  long long waited_ns[2];
  for (int round = 0; round < rounds; ++round) {
    struct message request = {(uint32_t)round, delays[round]}, reply;
    long long sent_ns = monotonic_ns();
    write_message(client_server[0], &request, "client: request");
    if (!read_message(client_server[0], &reply, "client: reply"))
      fail("client: the server closed its socket");
    waited_ns[round] = monotonic_ns() - sent_ns;
    expect_reply(&reply, &request, "client: reply");
  }
  // End of stream tells the server to stop, whose end of stream stops the timekeeper.
  close(client_server[0]);
  wait_for_exit(server, "server");
  wait_for_exit(timekeeper, "timekeeper");
  report_elapsed(&options, start_ns);
  if (options.verbose) {
    printf("chain: cw-client %d cw-server %d cw-timekeeper %d\n", (int)getpid(), (int)server,
           (int)timekeeper);
    for (int round = 0; round < rounds; ++round)
      printf("chain: round %d delay %u ms: the client waited %lld us\n", round, delays[round],
             waited_ns[round] / 1000);
  }
  return 0;
}
