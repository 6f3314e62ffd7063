// Scenario 09-dead-peer: an application's main thread blocked reading the reply of a peer
// that stopped answering (the Argus paper, §6, Sequel Pro: the app froze while its database
// connection was lost; its main thread waited on the connection).
//
//   cw-scn-deadpeer [HOLD_MS]   HOLD_MS (default 1000): how long the checkpoint stalls
//
// The story. "cw-sequel" (the parent's main thread) talks to a database process over a
// unix socket: it writes a query and blocks in read() for the reply. The database
// ("cw-mysqld", the child) serves the connection on a thread of its own, "cw-db-conn" (a
// blocking read loop); its main thread leaves once that thread runs. Round 1 is an
// UPDATE, answered at once. Having answered it, cw-db-conn writes a checkpoint of the
// table it changed, in write_checkpoint(), whose disk stalls for HOLD_MS (a sleep in
// wait_for_disk()). Round 2's SELECT, sent meanwhile, waits in the socket: the reply
// reaches cw-sequel HOLD_MS late. The client then closes the socket and the database exits.
//
// Expected diagnosis: LongWait of cw-sequel's main thread in read() (≈ HOLD_MS) in round 2,
// with round 1 as the baseline: cw-db-conn, which answered at once in the baseline, was
// itself blocked HOLD_MS in clock_nanosleep under write_checkpoint() during the hang: the
// root cause, inside the database.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../scenario.h"

enum { kMessageBytes = 32 };

// One message: `kMessageBytes` bytes holding a string.
static void send_message(int fd, const char* text, const char* who) {
  char message[kMessageBytes] = {0};
  snprintf(message, sizeof message, "%s", text);
  if (write(fd, message, sizeof message) != (ssize_t)sizeof message) fail_errno("%s: write", who);
}

// Reads one message; returns 0 at end of stream.
static int receive_message(int fd, char* message, const char* who) {
  size_t got = 0;
  while (got < kMessageBytes) {
    ssize_t n = read(fd, message + got, kMessageBytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno("%s: read", who);
    if (n == 0) {
      if (got == 0) return 0;
      fail("%s: end of stream inside a message", who);
    }
    got += (size_t)n;
  }
  message[kMessageBytes - 1] = '\0';
  return 1;
}

// ---- the database ----------------------------------------------------------------------

static int database_fd;
static long long stall_ns;
static long table_rows = 41;
static int table_dirty;

// The disk the checkpoint goes to stalls: `duration_ns` before the write completes.
// noinline, like write_checkpoint, so that both have frames of their own (the caller of a
// libc function without a frame pointer is the frame a stack walk loses).
__attribute__((noinline)) static void wait_for_disk(long long duration_ns) {
  struct timespec delay = {(time_t)(duration_ns / 1000000000LL),
                           (long)(duration_ns % 1000000000LL)};
  while (nanosleep(&delay, &delay) != 0) {
    if (errno != EINTR) fail_errno("cw-db-conn: nanosleep");
  }
}

__attribute__((noinline)) static void write_checkpoint(void) {
  wait_for_disk(stall_ns);
  table_dirty = 0;
}

// One query: an UPDATE adds a row and dirties the table; a SELECT counts the rows.
static void run_query(const char* query, char* reply) {
  if (strncmp(query, "UPDATE", 6) == 0) {
    ++table_rows;
    table_dirty = 1;
    snprintf(reply, kMessageBytes, "OK 1 row");
  } else {
    snprintf(reply, kMessageBytes, "OK %ld rows", table_rows);
  }
}

static void* run_connection(void* unused) {
  (void)unused;
  set_name("cw-db-conn");
  char query[kMessageBytes], reply[kMessageBytes];
  while (receive_message(database_fd, query, "cw-db-conn")) {
    run_query(query, reply);
    send_message(database_fd, reply, "cw-db-conn");
    if (table_dirty) write_checkpoint();  // before the next query is read
  }
  exit(0);
}

static void run_database(int fd) {
  set_name("cw-mysqld");
  database_fd = fd;
  pthread_t connection;
  int error = pthread_create(&connection, NULL, run_connection, NULL);
  if (error != 0) {
    errno = error;
    fail_errno("cw-mysqld: pthread_create");
  }
  pthread_exit(NULL);  // the connection's thread serves; it ends the process
}

// ---- the client ------------------------------------------------------------------------

// One round trip; returns how long the reply took.
static long long query(int fd, const char* text, const char* expected) {
  long long start = monotonic_ns();
  send_message(fd, text, "cw-sequel");
  char reply[kMessageBytes];
  if (!receive_message(fd, reply, "cw-sequel")) fail("cw-sequel: the database closed");
  if (strcmp(reply, expected) != 0) fail("cw-sequel: got '%s', expected '%s'", reply, expected);
  return monotonic_ns() - start;
}

int main(int argc, char** argv) {
  program_name = "cw-scn-deadpeer";
  long hold_ms = 1000;
  if (argc > 2) fail("usage: cw-scn-deadpeer [HOLD_MS]");
  if (argc == 2) {
    char* end = NULL;
    hold_ms = strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || hold_ms <= 0 || hold_ms > 5000)
      fail("HOLD_MS must be from 1 to 5000, got '%s'", argv[1]);
  }
  stall_ns = hold_ms * 1000000LL;
  set_name("cw-sequel");

  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) fail_errno("socketpair");
  pid_t database = fork();
  if (database < 0) fail_errno("fork");
  if (database == 0) {
    close(pair[0]);
    run_database(pair[1]);
  }
  close(pair[1]);

  query(pair[0], "UPDATE t SET a = 1", "OK 1 row");  // round 1: the baseline
  long long slow = query(pair[0], "SELECT count(*) FROM t", "OK 42 rows");
  close(pair[0]);

  int status = 0;
  if (waitpid(database, &status, 0) != database) fail_errno("cw-sequel: waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("cw-mysqld failed (status %d)", status);
  if (slow < stall_ns / 2)
    fail("cw-sequel: round 2 took %lld ms, expected about %ld", slow / 1000000, hold_ms);
  return 0;
}
