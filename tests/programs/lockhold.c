// A hang still in progress: process cw-holder takes an exclusive flock on a file and then
// never lets it go, sleeping 30 s at a time; process cw-waiter (the parent) asks for the
// same lock once the holder has it and blocks forever. Nothing ever wakes the waiter, so a
// recording that ends before the program is killed holds no waker, only the holder (/proc/locks).
//
//   cw-prog-lockhold [-v] [FILE]      (FILE: default /tmp/cw-prog-lockhold.PID)
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-lockhold");
  if (options.positional_count > 1) fail("usage: cw-prog-lockhold [-v] [FILE]");
  char path[256];
  if (options.positional_count == 1)
    snprintf(path, sizeof path, "%s", options.positional[0]);
  else
    snprintf(path, sizeof path, "/tmp/cw-prog-lockhold.%d", (int)getpid());
  int ready[2];
  if (pipe(ready) != 0) fail_errno("pipe");
  pid_t holder = fork();
  if (holder < 0) fail_errno("fork");
  if (holder == 0) {
    prctl(PR_SET_NAME, "cw-holder");
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // goes when the waiter is killed
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0) fail_errno("open %s", path);
    if (flock(fd, LOCK_EX) != 0) fail_errno("flock");
    if (write(ready[1], "x", 1) != 1) fail_errno("write");
    for (;;) sleep_ns(30LL * 1000 * 1000 * 1000);
  }
  prctl(PR_SET_NAME, "cw-waiter");
  char c;
  if (read(ready[0], &c, 1) != 1) fail("the holder did not take the lock");
  int fd = open(path, O_RDWR);
  if (fd < 0) fail_errno("open %s", path);
  unlink(path);  // the lock lives on the inode
  if (options.verbose) printf("lockhold: holder %d, waiter %d\n", (int)holder, (int)getpid());
  fflush(stdout);
  if (flock(fd, LOCK_EX) != 0) fail_errno("flock");  // blocks until the holder dies
  fail("the waiter got the lock: the holder is gone");
}
