// A missing wake-up: a helper that normally wakes a daemon does not (the Argus paper, §6.2,
// 4-Installer: Installer waits for authd, which waits for SecurityAgent; with the pointer
// moved out of the authentication dialog, SecurityAgent never wakes authd).
//
//   cw-scn-missingwakeup [TIMEOUT_MS]     (default 1000)
//
// Three processes: the application talks to the daemon over two pipes (requests, replies),
// the daemon to the agent over a unix socketpair (for SO_RCVTIMEO; pipes elsewhere, since a
// read on a unix socket also wakes its peer if blocked reading the other end, a wake-up
// that would look like a cause):
//
//   cw-installer  the application (main thread of the parent): waits for the daemon to say
//                 it is ready, then sends it an authorization request and blocks in read()
//                 for the verdict, twice, 100 ms apart. Round 1 asks for a right the user
//                 already granted; round 2 for one that needs the password.
//   cw-authd      the daemon: reads a request, forwards it to the agent, and waits for the
//                 agent's answer in read() for at most TIMEOUT_MS (SO_RCVTIMEO on its
//                 socket to the agent); then replies to the application with the answer,
//                 or with "timed out".
//   cw-agent      the helper that talks to the user: reads a question; a right already
//                 granted is answered at once. For one that needs the password it shows
//                 its dialog and waits for the user's keys on its input channel, in 100 ms
//                 poll() slices (the caret blinks between them), for 1.5 × TIMEOUT_MS in
//                 all. The pointer has left the dialog, so no key reaches it: it keeps
//                 blinking, never answers, and drops the question when its dialog gives up.
//
// Round 1 is the baseline: cw-agent's answer wakes cw-authd, whose reply wakes
// cw-installer, within a millisecond. In round 2 cw-installer waits TIMEOUT_MS: the edge
// cw-agent → cw-authd is missing, and cw-authd's wait ends only by its timeout. cw-agent is
// not stuck in any one wait (none longer than 100 ms): it simply does not act.
//
// Expected diagnosis: the hang is cw-installer's read (LongWait, about TIMEOUT_MS). Its
// baseline (round 1) shows the path cw-agent → cw-authd → cw-installer; comparing it with
// the hang, cw-authd was itself blocked in read for the whole wait (a culprit, diagnosed in
// turn). cw-authd's own baseline (round 1's read, ended by cw-agent's answer) names
// cw-agent, which was not hung in the meantime: the root cause is cw-agent, which "did not
// send the message that woke cw-authd in the baseline".
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum verdict { GRANTED = 1, TIMED_OUT = 2, READY = 3 };
enum { kBlinkMs = 100, kRoundGapMs = 100 };

// What travels on the pipes and the socket.
struct message {
  uint32_t round;
  uint32_t needs_password;  // request and question: whether the user must type it
  uint32_t verdict;         // answer and reply
};

static long timeout_ms = 1000;

static void fail(const char* what) {
  fprintf(stderr, "cw-scn-missingwakeup: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void name_process(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail("prctl");
}

static void send_message(int fd, const struct message* m) {
  if (write(fd, m, sizeof *m) != (ssize_t)sizeof *m) fail("write");
}

// One read() of one message; 0 at end of stream, -1 when the socket's receive timeout
// expired first.
static int receive_message(int fd, struct message* m) {
  ssize_t got;
  do {
    got = read(fd, m, sizeof *m);
  } while (got < 0 && errno == EINTR);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -1;
  if (got < 0) fail("read");
  if (got == 0) return 0;
  if (got != (ssize_t)sizeof *m) {
    errno = EPROTO;
    fail("short read");
  }
  return 1;
}

// poll() for input on one descriptor: 1 when readable, 0 on timeout.
static int wait_readable(int fd, long ms) {
  struct pollfd p = {fd, POLLIN, 0};
  int n;
  do {
    n = poll(&p, 1, (int)ms);
  } while (n < 0 && errno == EINTR);
  if (n < 0) fail("poll");
  return n;
}

static void run_agent(int authd_fd, int input_fd) {
  name_process("cw-agent");
  struct message question;
  while (receive_message(authd_fd, &question) > 0) {
    if (!question.needs_password) {
      struct message answer = {question.round, 0, GRANTED};
      send_message(authd_fd, &answer);  // the wake-up cw-authd waits for
      continue;
    }
    // Show the dialog and wait for the user's keys, blinking the caret between slices.
    // None come: the pointer left the dialog. The question is dropped, unanswered.
    for (long waited = 0; waited < timeout_ms * 3 / 2; waited += kBlinkMs) {
      if (wait_readable(input_fd, kBlinkMs)) {
        errno = EPROTO;
        fail("agent: unexpected input");
      }
    }
  }
  exit(0);
}

static void run_authd(int request_fd, int reply_fd, int agent_fd) {
  name_process("cw-authd");
  struct timeval limit = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  if (setsockopt(agent_fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) != 0)
    fail("setsockopt SO_RCVTIMEO");
  struct message ready = {0, 0, READY};
  send_message(reply_fd, &ready);
  struct message request;
  while (receive_message(request_fd, &request) > 0) {
    struct message question = {request.round, request.needs_password, 0};
    send_message(agent_fd, &question);
    struct message reply = {request.round, 0, TIMED_OUT}, answer;
    int got = receive_message(agent_fd, &answer);  // the agent's answer, or the timeout
    if (got == 0) {
      errno = EPIPE;
      fail("authd: the agent closed its socket");
    }
    if (got > 0) reply.verdict = answer.verdict;
    send_message(reply_fd, &reply);
  }
  exit(0);
}

static void wait_for_exit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) fail("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = ECHILD;
    fail("a child failed");
  }
}

int main(int argc, char** argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: cw-scn-missingwakeup [TIMEOUT_MS]\n");
    return 1;
  }
  if (argc == 2) {
    char* end = NULL;
    timeout_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || timeout_ms < 10 || timeout_ms > 1500) {
      fprintf(stderr, "cw-scn-missingwakeup: TIMEOUT_MS must be 10..1500, got '%s'\n", argv[1]);
      return 1;
    }
  }
  name_process("cw-installer");
  int requests[2], replies[2], authd_agent[2], input[2];  // pipes: [0] read end, [1] write end
  if (pipe(requests) != 0 || pipe(replies) != 0) fail("pipe");
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, authd_agent) != 0) fail("socketpair");
  // The agent's input channel: the keys the user types into its dialog. This process holds
  // the write end and never writes.
  if (pipe(input) != 0) fail("pipe");

  pid_t agent = fork();
  if (agent < 0) fail("fork");
  if (agent == 0) {
    close(requests[0]);
    close(requests[1]);
    close(replies[0]);
    close(replies[1]);
    close(authd_agent[0]);
    close(input[1]);
    run_agent(authd_agent[1], input[0]);
  }
  close(authd_agent[1]);
  close(input[0]);
  pid_t authd = fork();
  if (authd < 0) fail("fork");
  if (authd == 0) {
    close(requests[1]);
    close(replies[0]);
    close(input[1]);
    run_authd(requests[0], replies[1], authd_agent[0]);
  }
  close(authd_agent[0]);
  close(requests[0]);
  close(replies[1]);

  struct message ready;
  if (receive_message(replies[0], &ready) <= 0 || ready.verdict != READY) {
    errno = EPROTO;
    fail("installer: the daemon did not say it was ready");
  }
  const uint32_t verdicts[2] = {GRANTED, TIMED_OUT};
  for (uint32_t round = 0; round < 2; ++round) {
    if (round > 0) {
      struct timespec gap = {0, kRoundGapMs * 1000000L};
      while (nanosleep(&gap, &gap) != 0)
        if (errno != EINTR) fail("nanosleep");
    }
    struct message request = {round, round == 1, 0}, reply;
    send_message(requests[1], &request);
    if (receive_message(replies[0], &reply) <= 0) {
      errno = EPIPE;
      fail("installer: the daemon closed its socket");
    }
    if (reply.round != round || reply.verdict != verdicts[round]) {
      errno = EPROTO;
      fail("installer: unexpected verdict");
    }
  }
  close(requests[1]);  // end of stream: the daemon exits, and so the agent
  close(replies[0]);
  wait_for_exit(authd);
  wait_for_exit(agent);
  close(input[1]);
  return 0;
}
