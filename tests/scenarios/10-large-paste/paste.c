// Scenario 10-large-paste: a large paste handled on the main thread, with kernel I/O and a
// timer (the Argus paper, §6, TextEdit: copying or pasting tens of megabytes of text froze
// the app in its RTF conversion; the automatic slice, the most recent incoming edge, was
// enough).
//
//   cw-scn-paste [WORK_MS]   WORK_MS (default 600): how long the conversion runs
//
// The story. "cw-textedit" (the parent's main thread) has an event loop, poll() on a unix
// socket from "cw-windowsrv" (the child, standing for the window server), and a thread
// "cw-anim" that draws the progress animation when a timerfd fires. cw-windowsrv waits
// until the editor is asleep in poll (it watches /proc/PID/stat, yielding the CPU), sends
// the key event "cmd-v" and exits. The editor's handler, handle_paste(), arms the
// animation timer (100 ms, one shot), converts the 16 MiB of pasted text to RTF in
// convert_to_rtf() (pass after pass over the text, for WORK_MS on the CPU, no system
// call), then saves the document: write() of the RTF in 1 MiB pieces and fsync() (kernel
// I/O, tens of ms here), and returns to poll, which reports the end of cw-windowsrv's
// socket. cw-anim, woken by the timer during the conversion, draws one frame and ends; the
// editor joins it and removes the document.
//
// Expected diagnosis (measured: ~600 ms on a CPU or runnable against ~10-40 ms blocked in
// the fsync, so LongRunning): LongRunning on cw-textedit's main thread, the paste handler;
// its root cause is that segment itself. The slice back from it takes the key event
// (a strong message edge from cw-windowsrv) without a question: the automatic choice is
// the right one. The timer edge goes from cw-textedit to cw-anim.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../scenario.h"

enum { kPasteBytes = 16 << 20, kPieceBytes = 1 << 20, kEventBytes = 16 };

static void arm_timer(int timer_fd, long long delay_ns, const char* who) {
  struct itimerspec when = {{0, 0}, {(time_t)(delay_ns / 1000000000LL), delay_ns % 1000000000LL}};
  if (timerfd_settime(timer_fd, 0, &when, NULL) != 0) fail_errno("%s: timerfd_settime", who);
}

static void wait_timer(int timer_fd, const char* who) {
  uint64_t expirations = 0;
  if (read(timer_fd, &expirations, sizeof expirations) != (ssize_t)sizeof expirations)
    fail_errno("%s: read of the timer", who);
}

// ---- cw-windowsrv: the key event -------------------------------------------------------

// The user presses cmd-v while the editor is idle in its event loop.
static void run_window_server(pid_t editor, int editor_fd) {
  set_name("cw-windowsrv");
  wait_until_asleep(editor, "cw-windowsrv");
  char event[kEventBytes] = "key cmd-v";
  if (write(editor_fd, event, sizeof event) != (ssize_t)sizeof event)
    fail_errno("cw-windowsrv: write");
  exit(0);  // closes the socket: the editor's end reads end-of-stream
}

// ---- cw-anim: the progress animation ---------------------------------------------------

static int animation_timer_fd;
static volatile int frames_drawn;

static void* run_animation(void* unused) {
  (void)unused;
  set_name("cw-anim");
  wait_timer(animation_timer_fd, "cw-anim");
  frames_drawn = 1;  // one frame of the spinning cursor
  return NULL;
}

// ---- cw-textedit: the paste ------------------------------------------------------------

static char folder[64];
static char document_path[96];
static char* pasted;  // the pasteboard's text
static char* rtf;     // its conversion
static size_t rtf_size;

// One conversion pass: RTF escapes for the characters RTF reserves, \uN? for the others
// beyond ASCII, a paragraph mark for each newline.
static size_t convert_pass(const char* text, size_t size, char* out) {
  size_t n = 0;
  for (size_t i = 0; i < size; ++i) {
    unsigned char c = (unsigned char)text[i];
    if (c == '\\' || c == '{' || c == '}') {
      out[n++] = '\\';
      out[n++] = (char)c;
    } else if (c == '\n') {
      memcpy(out + n, "\\par\n", 5);
      n += 5;
    } else if (c >= 0x80) {
      n += (size_t)sprintf(out + n, "\\u%u?", c);
    } else {
      out[n++] = (char)c;
    }
  }
  return n;
}

// The conversion: pass after pass over the text (runs, styles, escapes) until `work_ns`
// of wall time has gone, all on the CPU. noinline so that it has a frame of its own.
__attribute__((noinline)) static size_t convert_to_rtf(const char* text, size_t size, char* out,
                                                       long long work_ns) {
  long long deadline = monotonic_ns() + work_ns;
  size_t n;
  do {
    n = convert_pass(text, size, out);
  } while (monotonic_ns() < deadline);
  return n;
}

// The save: the RTF in 1 MiB writes, then fsync.
__attribute__((noinline)) static void save_document(const char* data, size_t size) {
  int fd = open(document_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail_errno("cw-textedit: open %s", document_path);
  for (size_t done = 0; done < size;) {
    size_t piece = size - done < kPieceBytes ? size - done : kPieceBytes;
    ssize_t wrote = write(fd, data + done, piece);
    if (wrote <= 0) fail_errno("cw-textedit: write");
    done += (size_t)wrote;
  }
  if (fsync(fd) != 0) fail_errno("cw-textedit: fsync");
  if (close(fd) != 0) fail_errno("cw-textedit: close");
}

__attribute__((noinline)) static void handle_paste(long long work_ns) {
  arm_timer(animation_timer_fd, 100 * 1000000LL, "cw-textedit");  // the spinning cursor
  rtf_size = convert_to_rtf(pasted, kPasteBytes, rtf, work_ns);
  save_document(rtf, rtf_size);
}

// The pasteboard's content: lines of text with braces, backslashes and Latin-1 letters.
static void fill_pasteboard(void) {
  static const char line[] = "{Paste} \\ caf\xe9 na\xefve r\xe9sum\xe9 -- the quick brown fox\n";
  for (size_t i = 0; i < kPasteBytes; ++i) pasted[i] = line[i % (sizeof line - 1)];
}

int main(int argc, char** argv) {
  program_name = "cw-scn-paste";
  long work_ms = 600;
  if (argc > 2) fail("usage: cw-scn-paste [WORK_MS]");
  if (argc == 2) {
    char* end = NULL;
    work_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || work_ms <= 0 || work_ms > 5000)
      fail("WORK_MS must be from 1 to 5000, got '%s'", argv[1]);
  }
  set_name("cw-textedit");

  pasted = malloc(kPasteBytes);
  rtf = malloc((size_t)kPasteBytes * 5);  // at most 5 bytes per character
  if (!pasted || !rtf) fail_errno("malloc");
  fill_pasteboard();
  memset(rtf, 0, (size_t)kPasteBytes * 5);  // fault its pages in now, not in the handler
  snprintf(folder, sizeof folder, "/tmp/cw-scn-paste.XXXXXX");
  if (!mkdtemp(folder)) fail_errno("mkdtemp");
  snprintf(document_path, sizeof document_path, "%s/pasted.rtf", folder);

  animation_timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (animation_timer_fd < 0) fail_errno("timerfd_create");
  pthread_t animation;
  int error = pthread_create(&animation, NULL, run_animation, NULL);
  if (error != 0) {
    errno = error;
    fail_errno("pthread_create");
  }

  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) fail_errno("socketpair");
  pid_t editor = getpid();
  pid_t window_server = fork();
  if (window_server < 0) fail_errno("fork");
  if (window_server == 0) {
    close(pair[0]);
    run_window_server(editor, pair[1]);
  }
  close(pair[1]);

  // The editor's event loop: one event per turn.
  int pastes = 0;
  for (;;) {
    struct pollfd fds[1] = {{pair[0], POLLIN, 0}};
    if (poll(fds, 1, -1) < 0) {
      if (errno == EINTR) continue;
      fail_errno("cw-textedit: poll");
    }
    char event[kEventBytes];
    ssize_t got = read(pair[0], event, sizeof event);
    if (got == 0) break;  // the window server went away
    if (got != (ssize_t)sizeof event) fail_errno("cw-textedit: read returned %zd", got);
    if (strcmp(event, "key cmd-v") != 0) fail("cw-textedit: unexpected event '%s'", event);
    handle_paste(work_ms * 1000000LL);
    ++pastes;
  }

  error = pthread_join(animation, NULL);
  int status = 0;
  if (waitpid(window_server, &status, 0) != window_server) fail_errno("cw-textedit: waitpid");
  unlink(document_path);
  rmdir(folder);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail("cw-windowsrv failed (status %d)", status);
  if (error != 0 || pastes != 1 || !frames_drawn)
    fail("cw-textedit: %d pastes, %d animation frames, join %d", pastes, frames_drawn, error);
  if (rtf_size <= kPasteBytes) fail("cw-textedit: the RTF is no longer than the text");
  return 0;
}
