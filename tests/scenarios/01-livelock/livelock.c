// A circular wait broken by a timeout: the Argus paper's Chromium input-method livelock (§2.3).
//
//   cw-scn-livelock [TIMEOUT_MS]     (default 1500)
//
// Two processes joined by a unix socket, each with a main thread and an I/O thread:
//
//   cw-browser  main: sends the renderer an input-method request ("where is the caret?")
//               and waits for the answer on a condition variable, for at most TIMEOUT_MS;
//               between requests it runs the tasks its I/O thread queued for it.
//   cw-br-io    reads the socket: an answer signals the main thread's condition variable;
//               a request from the renderer is queued as a task for the main thread.
//   cw-renderer main: runs what its I/O thread queues. An input-method request is answered
//               at once. A key press runs "JavaScript" that needs the browser's help: it
//               sends the browser a request and waits on a semaphore for the answer.
//   cw-rn-io    reads the socket: requests are queued for the renderer's main thread, the
//               browser's help is handed over by posting the semaphore.
//
// Two normal rounds (an input-method request, answered within a millisecond), then the
// slow round: the browser sends a key press and an input-method request. The renderer's
// main thread takes the key press first and blocks on its semaphore waiting for the
// browser, whose main thread is blocked waiting for the renderer: a deadlock that the
// browser's timeout breaks after TIMEOUT_MS. Only then does the browser run the queued
// request, the renderer's semaphore is posted, and the late answer arrives.
//
// Expected diagnosis: the hang is cw-browser's timed wait (LongWait, about TIMEOUT_MS);
// compared with a normal round, the renderer's main thread did not answer because it was
// itself blocked on its semaphore (the culprit); diagnosed in turn, that wait was ended by
// the browser's main thread, once its own wait timed out: the circle.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void fail(const char* what) {
  fprintf(stderr, "cw-scn-livelock: %s: %s\n", what, strerror(errno));
  exit(1);
}

enum kind { IME_REQUEST = 1, IME_ANSWER, KEY_PRESS, HELP_REQUEST, HELP_ANSWER, QUIT };

struct message {
  uint32_t kind;
  uint32_t round;
};

static void name_thread(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail("prctl");
}

static void send_message(int fd, uint32_t kind, uint32_t round) {
  struct message m = {kind, round};
  if (write(fd, &m, sizeof m) != (ssize_t)sizeof m) fail("write");
}

// 0 at end of stream.
static int receive_message(int fd, struct message* m) {
  ssize_t got;
  do {
    got = read(fd, m, sizeof *m);
  } while (got < 0 && errno == EINTR);
  if (got < 0) fail("read");
  if (got == 0) return 0;
  if (got != (ssize_t)sizeof *m) {
    errno = EPROTO;
    fail("short read");
  }
  return 1;
}

// A queue of messages one thread hands to another, with a condition variable.
struct queue {
  pthread_mutex_t lock;
  pthread_cond_t ready;
  struct message items[16];
  int head, count;
};

static void queue_init(struct queue* q) {
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->ready, NULL);
  q->head = q->count = 0;
}

static void queue_push(struct queue* q, struct message m) {
  pthread_mutex_lock(&q->lock);
  if (q->count == 16) {
    errno = ENOBUFS;
    fail("queue full");
  }
  q->items[(q->head + q->count++) % 16] = m;
  pthread_cond_signal(&q->ready);
  pthread_mutex_unlock(&q->lock);
}

// Waits for a message; 0 if none came before `deadline` (NULL: wait for ever).
static int queue_pop(struct queue* q, struct message* m, const struct timespec* deadline) {
  int got = 0;
  pthread_mutex_lock(&q->lock);
  while (q->count == 0) {
    int rc = deadline ? pthread_cond_timedwait(&q->ready, &q->lock, deadline)
                      : pthread_cond_wait(&q->ready, &q->lock);
    if (rc == ETIMEDOUT) break;
  }
  if (q->count > 0) {
    *m = q->items[q->head];
    q->head = (q->head + 1) % 16;
    --q->count;
    got = 1;
  }
  pthread_mutex_unlock(&q->lock);
  return got;
}

// ---- the browser ----

static int browser_fd;
static struct queue browser_tasks;    // requests from the renderer, for the main thread
static struct queue browser_answers;  // input-method answers, for the main thread

static void* browser_io(void* unused) {
  (void)unused;
  name_thread("cw-br-io");
  struct message m;
  while (receive_message(browser_fd, &m)) {
    if (m.kind == IME_ANSWER)
      queue_push(&browser_answers, m);
    else
      queue_push(&browser_tasks, m);
  }
  return NULL;
}

// Runs the tasks the renderer queued: its requests for help are answered.
static void browser_run_tasks(void) {
  struct timespec now;
  struct message m;
  clock_gettime(CLOCK_REALTIME, &now);
  while (queue_pop(&browser_tasks, &m, &now))
    if (m.kind == HELP_REQUEST) send_message(browser_fd, HELP_ANSWER, m.round);
}

// Asks the renderer where the caret is; waits at most timeout_ms for the answer.
static void browser_ask_caret(uint32_t round, long timeout_ms) {
  send_message(browser_fd, IME_REQUEST, round);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  struct message answer;
  queue_pop(&browser_answers, &answer, &deadline);  // a timeout gives up on the answer
}

static void run_browser(pid_t renderer, long timeout_ms) {
  name_thread("cw-browser");
  queue_init(&browser_tasks);
  queue_init(&browser_answers);
  pthread_t io;
  if (pthread_create(&io, NULL, browser_io, NULL) != 0) fail("pthread_create");
  struct timespec pause = {0, 20 * 1000000L};
  for (uint32_t round = 1; round <= 2; ++round) {  // normal rounds: answered at once
    browser_ask_caret(round, timeout_ms);
    browser_run_tasks();
    nanosleep(&pause, NULL);
  }
  send_message(browser_fd, KEY_PRESS, 3);  // the renderer now needs the browser's help
  browser_ask_caret(3, timeout_ms);        // ... while the browser waits for the renderer
  browser_run_tasks();                     // the timeout broke the circle: help at last
  struct message late;
  queue_pop(&browser_answers, &late, NULL);  // the answer to round 3, late
  nanosleep(&pause, NULL);
  send_message(browser_fd, QUIT, 0);
  pthread_join(io, NULL);
  int status = 0;
  if (waitpid(renderer, &status, 0) != renderer) fail("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = ECHILD;
    fail("renderer failed");
  }
}

// ---- the renderer ----

static int renderer_fd;
static struct queue renderer_tasks;
static sem_t help_arrived;

static void* renderer_io(void* unused) {
  (void)unused;
  name_thread("cw-rn-io");
  struct message m;
  while (receive_message(renderer_fd, &m)) {
    if (m.kind == HELP_ANSWER) {
      sem_post(&help_arrived);
    } else {
      queue_push(&renderer_tasks, m);
      if (m.kind == QUIT) break;
    }
  }
  return NULL;
}

// JavaScript that needs the browser: ask, and wait for the help on the semaphore.
static void renderer_run_script(uint32_t round) {
  send_message(renderer_fd, HELP_REQUEST, round);
  while (sem_wait(&help_arrived) != 0)
    if (errno != EINTR) fail("sem_wait");
}

static void run_renderer(void) {
  name_thread("cw-renderer");
  queue_init(&renderer_tasks);
  if (sem_init(&help_arrived, 0, 0) != 0) fail("sem_init");
  pthread_t io;
  if (pthread_create(&io, NULL, renderer_io, NULL) != 0) fail("pthread_create");
  struct message m;
  while (queue_pop(&renderer_tasks, &m, NULL) && m.kind != QUIT) {
    if (m.kind == KEY_PRESS) renderer_run_script(m.round);
    if (m.kind == IME_REQUEST) send_message(renderer_fd, IME_ANSWER, m.round);
  }
  pthread_join(io, NULL);
}

int main(int argc, char** argv) {
  long timeout_ms = argc > 1 ? strtol(argv[1], NULL, 10) : 1500;
  if (timeout_ms <= 0 || timeout_ms > 60000) {
    fprintf(stderr, "cw-scn-livelock: usage: cw-scn-livelock [TIMEOUT_MS (1..60000)]\n");
    return 1;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) fail("socketpair");
  pid_t renderer = fork();
  if (renderer < 0) fail("fork");
  if (renderer == 0) {
    close(fds[0]);
    renderer_fd = fds[1];
    run_renderer();
    return 0;
  }
  close(fds[1]);
  browser_fd = fds[0];
  run_browser(renderer, timeout_ms);
  return 0;
}
