// What the scenario programs share: failing with a message and a monotonic clock (from
// tests/programs/common.h; set `program_name` first thing in main), naming the calling
// thread, and waiting until another process sleeps.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include "../programs/common.h"

// Names the calling thread (its comm: what the trace and the ground truth call it).
static inline void set_name(const char* name) {
  if (prctl(PR_SET_NAME, name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME, %s)", name);
}

// Returns once process `pid` is asleep (state S in /proc/PID/stat): a program orders its
// steps by what the peer waits for, not by sleeping and hoping. Yields the CPU between
// looks. (No timer: a timer's expiry would wake this thread from whatever thread its
// interrupt landed on.)
static inline void wait_until_asleep(pid_t pid, const char* who) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  for (;;) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_errno("%s: open %s", who, path);
    char text[512];
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) fail_errno("%s: read %s", who, path);
    text[got] = '\0';
    const char* paren = strrchr(text, ')');  // the state follows "(comm) "
    if (!paren || paren[1] != ' ') fail("%s: unexpected %s: %s", who, path, text);
    if (paren[2] == 'S') return;
    sched_yield();
  }
}
