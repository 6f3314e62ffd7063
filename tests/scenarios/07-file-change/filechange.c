// Scenario 07-file-change: a long main-thread handler started by another process's change
// to a file the editor watches (the Argus paper, §6, TeXstudio: touching the open .bib file
// with vim made TeXstudio's main window hang; the path led back through fseventd).
//
//   cw-scn-filechange [WORK_MS]   WORK_MS (default 600): how long the re-parse runs
//
// The story. "cw-editor" (the parent's main thread) writes a bibliography (refs.bib) to a
// temporary folder, watches it with inotify (IN_MODIFY) and forks "cw-vim". Its event loop
// is poll() on the inotify descriptor and on a socket to cw-vim. cw-vim waits until the
// editor is asleep in poll (it watches /proc/PID/stat, yielding the CPU), then saves the
// document: open(O_WRONLY), one write() of the whole text, close, and exits. The write's
// fsnotify event wakes the editor from poll (the kernel wakes the inotify reader from inside
// cw-vim's write). The editor reads the inotify event, reads the file back and re-parses it
// in parse_document() for WORK_MS on the CPU with no system call (the hang), and returns to
// poll, which reports the end of cw-vim's socket; the editor reaps cw-vim and removes the
// folder.
//
// Expected diagnosis: LongRunning on cw-editor's main thread (the re-parse, ≈ WORK_MS); the
// root cause is that long segment itself. Slicing back from it follows a strong
// file_change edge (linux.kernel/file.change: a wake-up from inside a write to a regular
// file) to cw-vim's write(), then the fork that started cw-vim: no question is asked.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../scenario.h"

enum { kDocumentBytes = 64 * 1024 };

static char folder[64];
static char document_path[96];

// The bibliography: BibTeX entries, `version` changing a few of their bytes.
static void make_document(char* text, int version) {
  static const char line[] = "@article{key%03d, title={On hangs %03d}, year={2024}}\n";
  size_t used = 0;
  for (int i = 0; used < kDocumentBytes; ++i) {
    char buffer[128];
    int n = snprintf(buffer, sizeof buffer, line, (i + version) % 1000, i % 1000);
    size_t take = (size_t)n < kDocumentBytes - used ? (size_t)n : kDocumentBytes - used;
    memcpy(text + used, buffer, take);
    used += take;
  }
}

static void write_file(const char* who, int flags, int version) {
  static char text[kDocumentBytes];
  make_document(text, version);
  int fd = open(document_path, flags, 0600);
  if (fd < 0) fail_errno("%s: open %s", who, document_path);
  if (write(fd, text, sizeof text) != (ssize_t)sizeof text) fail_errno("%s: write", who);
  if (close(fd) != 0) fail_errno("%s: close", who);
}

// cw-vim: saves the document once the editor waits in poll, and exits.
static void run_vim(pid_t editor) {
  set_name("cw-vim");
  wait_until_asleep(editor, "cw-vim");
  write_file("cw-vim", O_WRONLY, 1);
  exit(0);  // closes the socket: the editor's end reads end-of-stream
}

// The re-parse: scans the entries for fields over and over for `work_ns` of wall
// time. clock_gettime is answered by the vDSO, so the thread makes no system call.
// noinline so that it has a frame of its own.
__attribute__((noinline)) static uint64_t parse_document(const char* text, size_t size,
                                                         long long work_ns) {
  long long deadline = monotonic_ns() + work_ns;
  volatile uint64_t tokens = 0;
  do {
    uint64_t count = 0;
    for (size_t i = 0; i < size; ++i) count += text[i] == '@' || text[i] == '{' || text[i] == '=';
    tokens += count;
  } while (monotonic_ns() < deadline);
  return tokens;
}

static void reload(long long work_ns) {
  static char text[kDocumentBytes];
  int fd = open(document_path, O_RDONLY);
  if (fd < 0) fail_errno("cw-editor: open %s", document_path);
  ssize_t got = read(fd, text, sizeof text);
  if (got != (ssize_t)sizeof text) fail("cw-editor: read of the document returned %zd", got);
  close(fd);
  if (parse_document(text, sizeof text, work_ns) == 0) fail("cw-editor: no token parsed");
}

int main(int argc, char** argv) {
  program_name = "cw-scn-filechange";
  long work_ms = 600;
  if (argc > 2) fail("usage: cw-scn-filechange [WORK_MS]");
  if (argc == 2) {
    char* end = NULL;
    work_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || work_ms <= 0 || work_ms > 5000)
      fail("WORK_MS must be from 1 to 5000, got '%s'", argv[1]);
  }
  set_name("cw-editor");

  snprintf(folder, sizeof folder, "/tmp/cw-scn-filechange.XXXXXX");
  if (!mkdtemp(folder)) fail_errno("mkdtemp");
  snprintf(document_path, sizeof document_path, "%s/refs.bib", folder);
  write_file("cw-editor", O_WRONLY | O_CREAT | O_TRUNC, 0);

  int watch_fd = inotify_init1(IN_CLOEXEC);
  if (watch_fd < 0) fail_errno("inotify_init1");
  if (inotify_add_watch(watch_fd, document_path, IN_MODIFY) < 0) fail_errno("inotify_add_watch");
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) fail_errno("socketpair");

  pid_t editor = getpid();
  pid_t vim = fork();
  if (vim < 0) fail_errno("fork");
  if (vim == 0) {
    close(pair[0]);
    close(watch_fd);
    run_vim(editor);
  }
  close(pair[1]);

  // The editor's event loop.
  int reloads = 0;
  for (;;) {
    struct pollfd fds[2] = {{watch_fd, POLLIN, 0}, {pair[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      fail_errno("cw-editor: poll");
    }
    // One event per turn of the loop, the file first: after the reload the editor always
    // returns to poll, whether cw-vim has exited by then or not.
    if (fds[0].revents & POLLIN) {
      char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
      ssize_t got = read(watch_fd, events, sizeof events);
      if (got < (ssize_t)sizeof(struct inotify_event)) fail("cw-editor: inotify read %zd", got);
      reload(work_ms * 1000000LL);
      ++reloads;
    } else if (fds[1].revents & (POLLIN | POLLHUP)) {
      char byte;
      if (read(pair[0], &byte, 1) != 0) fail("cw-editor: cw-vim's socket: expected end-of-stream");
      break;
    }
  }

  int status = 0;
  if (waitpid(vim, &status, 0) != vim) fail_errno("cw-editor: waitpid");
  unlink(document_path);
  rmdir(folder);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("cw-vim failed (status %d)", status);
  if (reloads != 1) fail("cw-editor: %d reloads, expected 1", reloads);
  return 0;
}
