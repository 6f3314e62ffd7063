// A parent blocked in wait4() until its child exits: the child sleeps 50 ms and exits with
// status 7; the parent checks the status. With `poll`, the parent looks instead: wait4 with
// WNOHANG, then a 10 ms sleep, until the child (named cw-reap-child) has slept 400 ms and
// exited.
//
//   cw-prog-waitchild [-v] [-t] [poll]
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum { kChildStatus = 7 };

int main(int argc, char** argv) {
  struct options options = parse_options(argc, argv, "cw-prog-waitchild");
  const int poll = options.positional_count == 1 && strcmp(options.positional[0], "poll") == 0;
  if (options.positional_count != (poll ? 1 : 0))
    fail("usage: cw-prog-waitchild [-v] [-t] [poll]");
  long long start_ns = monotonic_ns();
  pid_t child = fork();
  if (child < 0) fail_errno("fork");
  if (child == 0) {
    if (poll && prctl(PR_SET_NAME, "cw-reap-child", 0, 0, 0) != 0) fail_errno("prctl");
    sleep_ns((poll ? 400 : 50) * 1000000LL);
    _exit(kChildStatus);
  }
  int status = 0;
  struct rusage usage;
  pid_t reaped = wait4(child, &status, poll ? WNOHANG : 0, &usage);
  while (poll && reaped == 0) {
    sleep_ns(10 * 1000000LL);
    reaped = wait4(child, &status, WNOHANG, &usage);
  }
  if (reaped != child) fail_errno("wait4 %d returned %d", (int)child, (int)reaped);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != kChildStatus)
    fail("child %d: wait status 0x%x, expected exit status %d", (int)child, status, kChildStatus);
  report_elapsed(&options, start_ns);
  if (options.verbose)
    printf("waitchild: parent %d child %d status %d\n", (int)getpid(), (int)child,
           WEXITSTATUS(status));
  return 0;
}
