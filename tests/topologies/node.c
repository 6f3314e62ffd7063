// cw-topo-node: one process of a generated topology (tests/topologies/README.md), or one of
// the noise processes beside it.
//
//   NODE SPEC_FILE            play the nodes SPEC_FILE describes (one per thread)
//   NODE --noise KIND         spin | ping | pong | tick | hog | disk, until killed;
//                             watchdog: after 6 s, kill every node (run.sh's bound)
//
// The program is run through a symlink named after its first node, so that the process's
// comm is that node's name (exec takes the comm from the file name); its other nodes are
// threads that name themselves. Everything is relative to the current folder, the
// topology's work folder that run.sh made (FIFOs, lock files, shared-memory files and
// folders are made there by run.sh before any node starts).
//
// A spec file, one directive a line:
//   total N                 the number of nodes of the whole topology (for the barrier)
//   eventfd CHAN            an eventfd shared by this process's threads (before `node`)
//   node NAME               a new node (thread); the first is the main thread
//   stage KIND              none | sleep | busy | disk | lock | timer | timerfd
//   in MECH CHAN [EXE SPEC] an input, waited for in the order given; the wait mechanisms
//                           (wait4, waitid, pidfd) name the child to fork: EXE SPEC
//   out MECH CHAN           an output, signalled once the stage is over
//   in|out server-WAIT CHAN LISTEN TRANSPORT ACCEPT DELAY
//                           an edge of the event-loop server (WAIT: epoll | poll | select):
//                           its listener LISTEN (LISTEN.sock or LISTEN.port), unix | tcp,
//                           when it accepts (setup | loop | backlog), the queued client's
//                           delay in ms. A node with server inputs and outputs is the
//                           server (its input: its loop, which runs its stage); one with a
//                           server output alone its requester; one with a server input
//                           alone a queued client (README.md, "The event-loop server").
//
// A node's life: setup (its channels; upstreams connect to their downstreams), the barrier
// (every node of the topology ready: files in ready/, at most 5 s), its inputs in order,
// its stage, its outputs, exit 0. Each node writes times/NAME (monotonic ns: barrier
// passed, inputs done, stage done) for run.sh's checks.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STAGE_NS 1200000000LL   // how long the slow stage lasts
#define SETUP_NS 5000000000LL   // how long a setup wait may take before the node gives up
#define BIG_WRITE (256 * 1024)  // a write that fills a FIFO (64 KiB) several times over
#define MAX_EDGES 16
#define MAX_NODES 8
#define MAX_EVENTFDS 8

static char program[64] = "cw-topo-node";

static void fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "%s: ", program);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  exit(1);
}
#define fail_errno(fmt, ...) fail(fmt ": %s", ##__VA_ARGS__, strerror(errno))

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

// A short sleep between looks at a setup file (never during the measured part).
static void nap_ms(int ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

static void wait_file(const char* path, const char* who) {
  long long end = now_ns() + SETUP_NS;
  while (access(path, F_OK) != 0) {
    if (now_ns() > end) fail("%s: %s did not appear within 5 s", who, path);
    nap_ms(1);
  }
}

// Writes `text` to `path` whole (a temp file renamed), so a reader never sees half of it.
static void write_file(const char* path, const char* text) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail_errno("open %s", tmp);
  size_t n = strlen(text);
  if (write(fd, text, n) != (ssize_t)n) fail_errno("write %s", tmp);
  close(fd);
  if (rename(tmp, path) != 0) fail_errno("rename %s", path);
}

static void read_file(const char* path, char* out, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_errno("open %s", path);
  ssize_t n = read(fd, out, size - 1);
  if (n < 0) fail_errno("read %s", path);
  out[n] = '\0';
  close(fd);
}

// The signal the signal mechanisms send: a real-time one, so that two sent to one thread
// before it looks are both kept.
static int edge_signal(void) {
  return SIGRTMIN + 1;
}

enum { F_NONE = 0 };

struct edge {
  char mech[24];
  char chan[64];
  char exe[256], spec[256];  // the child to fork (wait mechanisms)
  int fd, fd2;               // the FIFO, socket, lock file, inotify, signalfd, pidfd, epoll …
  pid_t child;
  void* shm;
  // A server edge: the listener, unix | tcp, setup | loop | backlog, the queued client's
  // delay; the server's clients accepted in setup.
  char listen[64], transport[8], accept[8];
  int delay_ms;
  int conn[MAX_EDGES + 1], n_conn;
};

struct node {
  char name[16];
  char stage[16];
  struct edge in[MAX_EDGES], out[MAX_EDGES];
  int n_in, n_out;
  pthread_t thread;
  int looped;  // the server's loop ran the stage, at these times:
  long long t_inputs, t_stage;
};

static struct node nodes[MAX_NODES];
static int n_nodes;
static int total_nodes;
static struct {
  char chan[64];
  int fd;
} eventfds[MAX_EVENTFDS];
static int n_eventfds;

static int eventfd_of(const char* chan) {
  for (int i = 0; i < n_eventfds; ++i)
    if (strcmp(eventfds[i].chan, chan) == 0) return eventfds[i].fd;
  fail("no eventfd %s in the spec", chan);
  return -1;
}

static int is(const char* mech, const char* name) {
  return strcmp(mech, name) == 0;
}
static int starts(const char* mech, const char* prefix) {
  return strncmp(mech, prefix, strlen(prefix)) == 0;
}
static int is_fifo_wait(const char* m) {
  return is(m, "pipe") || is(m, "readt") || starts(m, "poll") || starts(m, "select") ||
         starts(m, "epoll");
}
static int is_server_edge(const struct edge* e) {
  return starts(e->mech, "server-");
}
// The server: a node with server inputs (its requester's) and outputs (its queued clients').
static int is_server(const struct node* n) {
  int in = 0, out = 0;
  for (int i = 0; i < n->n_in; ++i) in |= is_server_edge(&n->in[i]);
  for (int i = 0; i < n->n_out; ++i) out |= is_server_edge(&n->out[i]);
  return in && out;
}

static void* map_shm(const char* chan) {
  char path[128];
  snprintf(path, sizeof path, "%s.shm", chan);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) fail_errno("open %s", path);
  void* p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail_errno("mmap %s", path);
  close(fd);
  return p;
}

struct condbox {
  pthread_mutex_t m;
  pthread_cond_t c;
  int flag;
};

static void marker(const char* chan) {
  char path[128];
  snprintf(path, sizeof path, "%s.ok", chan);
  write_file(path, "ok\n");
}

static void wait_marker(const char* chan, const char* who) {
  char path[128];
  snprintf(path, sizeof path, "%s.ok", chan);
  wait_file(path, who);
}

static int open_lock_file(const char* chan) {
  char path[128];
  snprintf(path, sizeof path, "%s.lock", chan);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) fail_errno("open %s", path);
  return fd;
}

static void posix_lock(int fd, int cmd, short type, const char* who) {
  struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
  while (fcntl(fd, cmd, &l) != 0)
    if (errno != EINTR) fail_errno("%s: fcntl lock", who);
}

static int listen_tcp(const char* chan) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) fail_errno("socket");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (bind(s, (struct sockaddr*)&a, sizeof a) != 0) fail_errno("bind 127.0.0.1:0");
  if (listen(s, 8) != 0) fail_errno("listen");
  socklen_t len = sizeof a;
  getsockname(s, (struct sockaddr*)&a, &len);
  char path[128], text[32];
  snprintf(path, sizeof path, "%s.port", chan);
  snprintf(text, sizeof text, "%d\n", ntohs(a.sin_port));
  write_file(path, text);
  return s;
}

static int connect_tcp(const char* chan, const char* who) {
  char path[128], text[32];
  snprintf(path, sizeof path, "%s.port", chan);
  wait_file(path, who);
  read_file(path, text, sizeof text);
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) fail_errno("socket");
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                          .sin_port = htons((uint16_t)atoi(text))};
  if (connect(s, (struct sockaddr*)&a, sizeof a) != 0) fail_errno("%s: connect %s", who, chan);
  return s;
}

static int listen_unix(const char* chan) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) fail_errno("socket");
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s.sock", chan);
  if (bind(s, (struct sockaddr*)&a, sizeof a) != 0) fail_errno("bind %s", a.sun_path);
  if (listen(s, 8) != 0) fail_errno("listen");
  marker(chan);
  return s;
}

static int connect_unix(const char* chan, const char* who) {
  wait_marker(chan, who);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) fail_errno("socket");
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s.sock", chan);
  if (connect(s, (struct sockaddr*)&a, sizeof a) != 0) fail_errno("%s: connect %s", who, chan);
  return s;
}

static int connect_server(const struct edge* e, const char* who) {
  return is(e->transport, "unix") ? connect_unix(e->listen, who) : connect_tcp(e->listen, who);
}

// accept() during setup, bounded: the upstream connects in its own setup.
static int accept_bounded(int listener, const char* who) {
  struct pollfd p = {.fd = listener, .events = POLLIN};
  int r = poll(&p, 1, (int)(SETUP_NS / 1000000));
  if (r <= 0) fail("%s: nobody connected within 5 s", who);
  int s = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
  if (s < 0) fail_errno("%s: accept", who);
  return s;
}

static int open_fifo(const char* chan, int flags) {
  int fd = open(chan, flags | O_CLOEXEC);
  if (fd < 0) fail_errno("open FIFO %s", chan);
  return fd;
}

static pid_t spawn(const char* exe, const char* spec) {
  pid_t pid = fork();
  if (pid < 0) fail_errno("fork");
  if (pid == 0) {
    execl(exe, exe, spec, (char*)NULL);
    fprintf(stderr, "%s: exec %s: %s\n", program, exe, strerror(errno));
    _exit(127);
  }
  return pid;
}

static void check_child(const char* who, pid_t pid, int status) {
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail("%s: child %d failed (status 0x%x)", who, (int)pid, status);
}

// Setup, phase 1: what needs nobody else (listeners, readers, held locks, forked children).
static void setup_first(struct node* n) {
  for (int i = 0; i < n->n_in; ++i) {
    struct edge* e = &n->in[i];
    const char* m = e->mech;
    if (is_fifo_wait(m) || is(m, "pipefull")) {
      e->fd = open_fifo(e->chan, O_RDWR);
      if (starts(m, "epoll")) {
        e->fd2 = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = e->fd};
        if (e->fd2 < 0 || epoll_ctl(e->fd2, EPOLL_CTL_ADD, e->fd, &ev) != 0) fail_errno("epoll");
      }
    } else if (starts(m, "eof")) {
      e->fd = open_fifo(e->chan, O_RDONLY | O_NONBLOCK);
      fcntl(e->fd, F_SETFL, 0);
      marker(e->chan);
    } else if (is(m, "unix")) {
      e->fd2 = listen_unix(e->chan);
    } else if (is(m, "tcp") || is(m, "accept")) {
      e->fd2 = listen_tcp(e->chan);
    } else if (starts(m, "flock") || starts(m, "fcntl") || starts(m, "ofd")) {
      e->fd = open_lock_file(e->chan);
    } else if (is(m, "futex") || is(m, "mutex") || is(m, "cond") || is(m, "sem")) {
      e->shm = map_shm(e->chan);
    } else if (is(m, "wait4") || is(m, "waitid") || is(m, "pidfd")) {
      e->child = spawn(e->exe, e->spec);
      if (is(m, "pidfd")) {
        e->fd = (int)syscall(SYS_pidfd_open, e->child, 0);
        if (e->fd < 0) fail_errno("pidfd_open");
      }
    } else if (is(m, "sigwaitinfo") || is(m, "sigsuspend") || is(m, "signalfd")) {
      char path[128], text[64];
      snprintf(path, sizeof path, "%s.tid", e->chan);
      snprintf(text, sizeof text, "%d %d\n", (int)getpid(), (int)gettid());
      write_file(path, text);
      if (is(m, "signalfd")) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, edge_signal());
        e->fd = signalfd(-1, &set, SFD_CLOEXEC);
        if (e->fd < 0) fail_errno("signalfd");
      }
    } else if (is(m, "inotify")) {
      e->fd = inotify_init1(IN_CLOEXEC);
      char dir[128];
      snprintf(dir, sizeof dir, "%s.dir", e->chan);
      if (e->fd < 0 || inotify_add_watch(e->fd, dir, IN_CREATE) < 0) fail_errno("inotify %s", dir);
    } else if (is(m, "eventfd")) {
      e->fd = eventfd_of(e->chan);
    } else if (is_server_edge(e)) {
      if (is_server(n))
        e->fd2 = is(e->transport, "unix") ? listen_unix(e->listen) : listen_tcp(e->listen);
    } else {
      fail("%s: unknown input mechanism %s", n->name, m);
    }
  }
  for (int i = 0; i < n->n_out; ++i) {
    struct edge* e = &n->out[i];
    const char* m = e->mech;
    if (is_fifo_wait(m) || is(m, "pipefull")) {
      e->fd = open_fifo(e->chan, O_RDWR);
    } else if (starts(m, "flock")) {
      e->fd = open_lock_file(e->chan);
      if (flock(e->fd, LOCK_EX) != 0) fail_errno("flock");
    } else if (starts(m, "fcntl")) {
      e->fd = open_lock_file(e->chan);
      posix_lock(e->fd, F_SETLKW, F_WRLCK, n->name);
    } else if (starts(m, "ofd")) {
      e->fd = open_lock_file(e->chan);
      posix_lock(e->fd, F_OFD_SETLKW, F_WRLCK, n->name);
    } else if (is(m, "futex")) {
      e->shm = map_shm(e->chan);
    } else if (is(m, "mutex")) {
      e->shm = map_shm(e->chan);
      pthread_mutexattr_t a;
      pthread_mutexattr_init(&a);
      pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
      pthread_mutex_init(e->shm, &a);
      pthread_mutex_lock(e->shm);
    } else if (is(m, "cond")) {
      struct condbox* b = e->shm = map_shm(e->chan);
      pthread_mutexattr_t a;
      pthread_mutexattr_init(&a);
      pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
      pthread_mutex_init(&b->m, &a);
      pthread_condattr_t c;
      pthread_condattr_init(&c);
      pthread_condattr_setpshared(&c, PTHREAD_PROCESS_SHARED);
      pthread_cond_init(&b->c, &c);
      b->flag = 0;
    } else if (is(m, "sem")) {
      e->shm = map_shm(e->chan);
      if (sem_init(e->shm, 1, 0) != 0) fail_errno("sem_init");
    } else if (is(m, "eventfd")) {
      e->fd = eventfd_of(e->chan);
    }
  }
}

// Phase 2: the upstream side of connections (the downstream listens since phase 1).
static void setup_connect(struct node* n) {
  for (int i = 0; i < n->n_out; ++i) {
    struct edge* e = &n->out[i];
    if (is(e->mech, "unix")) e->fd = connect_unix(e->chan, n->name);
    if (is(e->mech, "tcp")) e->fd = connect_tcp(e->chan, n->name);
    if (starts(e->mech, "eof")) {
      wait_marker(e->chan, n->name);
      e->fd = open_fifo(e->chan, O_WRONLY | O_NONBLOCK);
      fcntl(e->fd, F_SETFL, 0);
    }
    if (is_server_edge(e) && !is_server(n)) e->fd = connect_server(e, n->name);  // requester
  }
  // A queued client connects now, unless its connection is to wait in the listen backlog.
  for (int i = 0; i < n->n_in; ++i) {
    struct edge* e = &n->in[i];
    if (is_server_edge(e) && !is_server(n) && !is(e->accept, "backlog"))
      e->fd = connect_server(e, n->name);
  }
}

// Phase 3: the downstream side of connections.
static void setup_accept(struct node* n) {
  for (int i = 0; i < n->n_in; ++i) {
    struct edge* e = &n->in[i];
    if (is(e->mech, "unix") || is(e->mech, "tcp")) e->fd = accept_bounded(e->fd2, n->name);
    if (is_server_edge(e) && is(e->accept, "setup") && is_server(n)) {
      int clients = 1;
      for (int k = 0; k < n->n_out; ++k) clients += is_server_edge(&n->out[k]);
      while (e->n_conn < clients) e->conn[e->n_conn++] = accept_bounded(e->fd2, n->name);
    }
  }
}

static void barrier(struct node* n) {
  char path[64];
  snprintf(path, sizeof path, "ready/%s", n->name);
  write_file(path, "ready\n");
  long long end = now_ns() + SETUP_NS;
  for (;;) {
    DIR* d = opendir("ready");
    if (!d) fail_errno("opendir ready");
    int count = 0;
    struct dirent* de;
    while ((de = readdir(d)))
      if (de->d_name[0] != '.' && !strstr(de->d_name, ".tmp")) ++count;
    closedir(d);
    if (count >= total_nodes) return;
    if (now_ns() > end)
      fail("%s: only %d of %d nodes ready after 5 s", n->name, count, total_nodes);
    nap_ms(1);
  }
}

static __thread volatile sig_atomic_t signals_seen;
static void on_signal(int sig) {
  (void)sig;
  ++signals_seen;
}
static volatile sig_atomic_t alarm_rang;
static void on_alarm(int sig) {
  (void)sig;
  alarm_rang = 1;
}

static void read_byte(int fd, const char* who, const char* what) {
  char c;
  for (;;) {
    ssize_t r = read(fd, &c, 1);
    if (r == 1) return;
    if (r < 0 && errno == EINTR) continue;
    fail("%s: %s: read returned %zd (%s)", who, what, r, r < 0 ? strerror(errno) : "end");
  }
}

static void write_all(int fd, const void* buf, size_t n, const char* who) {
  const char* p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail_errno("%s: write", who);
    p += w;
    n -= (size_t)w;
  }
}

static void stage(struct node* n);

// A queued client's request: sent once the server has begun its requester's work (it
// writes LISTEN.working then) and the edge's delay later, so that the server reads it
// only after that work; on the connection made in setup, or made now (backlog: the
// server accepts it after the work).
static void send_request(struct node* n, struct edge* e) {
  char path[128];
  snprintf(path, sizeof path, "%s.working", e->listen);
  wait_file(path, n->name);
  nap_ms(e->delay_ms);
  if (is(e->accept, "backlog")) e->fd = connect_server(e, n->name);
  if (send(e->fd, "q", 1, MSG_NOSIGNAL) != 1) fail_errno("%s: request", n->name);
}

static void recv_answer(struct node* n, struct edge* e) {
  char c = 0;
  ssize_t r;
  while ((r = recv(e->fd, &c, 1, 0)) < 0 && errno == EINTR) {
  }
  if (r != 1 || c != 'a') fail("%s: no answer on %s (recv returned %zd)", n->name, e->chan, r);
}

// The server's event loop, on one thread: waits in epoll, poll or select for its listener
// and its clients, and handles the ready descriptors one at a time: accepts a connection,
// or reads one request and answers it. The requester's request ('W') is worked on (the
// node's stage) between its read and its answer; the queued clients' ('q'), sent while it
// worked, are read after. Returns when every client has its answer.
static void serve(struct node* n, struct edge* e) {
  const char* wait = e->mech + strlen("server-");
  int clients = 1;
  for (int i = 0; i < n->n_out; ++i) clients += is_server_edge(&n->out[i]);
  int fds[MAX_EDGES + 2], n_fds = 0;
  fds[n_fds++] = e->fd2;
  for (int i = 0; i < e->n_conn; ++i) fds[n_fds++] = e->conn[i];
  int ep = -1;
  if (is(wait, "epoll")) {
    if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0) fail_errno("epoll_create1");
    for (int i = 0; i < n_fds; ++i) {
      struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
      if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) != 0) fail_errno("epoll_ctl");
    }
  }
  int answered = 0, worked = 0;
  while (answered < clients) {
    int ready[MAX_EDGES + 2], n_ready = 0, r;
    if (ep >= 0) {
      struct epoll_event evs[MAX_EDGES + 2];
      r = epoll_wait(ep, evs, MAX_EDGES + 2, -1);
      for (int i = 0; i < r; ++i) ready[n_ready++] = evs[i].data.fd;
    } else if (is(wait, "poll")) {
      struct pollfd p[MAX_EDGES + 2];
      for (int i = 0; i < n_fds; ++i) p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
      r = poll(p, (nfds_t)n_fds, -1);
      for (int i = 0; r > 0 && i < n_fds; ++i)
        if (p[i].revents) ready[n_ready++] = fds[i];
    } else {
      fd_set set;
      FD_ZERO(&set);
      int top = 0;
      for (int i = 0; i < n_fds; ++i) {
        FD_SET(fds[i], &set);
        if (fds[i] > top) top = fds[i];
      }
      r = select(top + 1, &set, NULL, NULL, NULL);
      for (int i = 0; r > 0 && i < n_fds; ++i)
        if (FD_ISSET(fds[i], &set)) ready[n_ready++] = fds[i];
    }
    if (r < 0 && errno != EINTR) fail_errno("%s: %s", n->name, wait);
    for (int i = 0; i < n_ready; ++i) {
      int fd = ready[i];
      if (fd == e->fd2) {
        int s = accept4(e->fd2, NULL, NULL, SOCK_CLOEXEC);
        if (s < 0) fail_errno("%s: accept", n->name);
        if (n_fds == MAX_EDGES + 2) fail("%s: too many clients", n->name);
        fds[n_fds++] = s;
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = s};
        if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) != 0) fail_errno("epoll_ctl");
        continue;
      }
      char c;
      ssize_t got;
      while ((got = recv(fd, &c, 1, 0)) < 0 && errno == EINTR) {
      }
      if (got <= 0) {
        // A client that left (the requester, once answered): no request. Its descriptor
        // stays open, so that its number is not another's in this turn's list.
        for (int k = 0; k < n_fds; ++k)
          if (fds[k] == fd) fds[k] = fds[--n_fds];
        if (ep >= 0) epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
        continue;
      }
      if (c == 'W') {
        char path[128];
        snprintf(path, sizeof path, "%s.working", e->listen);
        n->t_inputs = now_ns();
        write_file(path, "working\n");
        stage(n);
        n->t_stage = now_ns();
        worked = n->looped = 1;
      } else if (!worked) {
        fail("%s: a queued client's request came before the requester's", n->name);
      }
      if (send(fd, "a", 1, MSG_NOSIGNAL) != 1) fail_errno("%s: answer", n->name);
      ++answered;
    }
  }
  if (ep >= 0) close(ep);
}

static void wait_input(struct node* n, struct edge* e) {
  const char* m = e->mech;
  const char* who = n->name;
  if (is(m, "pipe")) {
    read_byte(e->fd, who, m);
  } else if (is_server_edge(e)) {
    if (is_server(n))
      serve(n, e);
    else
      recv_answer(n, e);
  } else if (is(m, "poll") || is(m, "poll-loop")) {
    struct pollfd p = {.fd = e->fd, .events = POLLIN};
    int timeout = is(m, "poll") ? -1 : 20;
    while (poll(&p, 1, timeout) <= 0) {
    }
    read_byte(e->fd, who, m);
  } else if (is(m, "select") || is(m, "select-loop")) {
    for (;;) {
      fd_set r;
      FD_ZERO(&r);
      FD_SET(e->fd, &r);
      struct timeval tv = {0, 20000};
      if (select(e->fd + 1, &r, NULL, NULL, is(m, "select") ? NULL : &tv) > 0) break;
    }
    read_byte(e->fd, who, m);
  } else if (is(m, "epoll") || is(m, "epoll-loop")) {
    struct epoll_event ev;
    while (epoll_wait(e->fd2, &ev, 1, is(m, "epoll") ? -1 : 20) <= 0) {
    }
    read_byte(e->fd, who, m);
  } else if (is(m, "pipefull")) {
    static char big[BIG_WRITE];
    write_all(e->fd, big, sizeof big, who);
  } else if (is(m, "unix") || is(m, "tcp")) {
    char c;
    ssize_t r;
    while ((r = recv(e->fd, &c, 1, 0)) < 0 && errno == EINTR) {
    }
    if (r != 1) fail("%s: recv on %s returned %zd", who, e->chan, r);
  } else if (is(m, "accept")) {
    int s;
    while ((s = accept4(e->fd2, NULL, NULL, SOCK_CLOEXEC)) < 0 && errno == EINTR) {
    }
    if (s < 0) fail_errno("%s: accept", who);
    close(s);
  } else if (starts(m, "eof")) {
    char buf[64];
    ssize_t r;
    while ((r = read(e->fd, buf, sizeof buf)) != 0)
      if (r < 0 && errno != EINTR) fail_errno("%s: read to the end", who);
  } else if (is(m, "futex")) {
    atomic_uint* word = e->shm;
    while (atomic_load(word) == 0) syscall(SYS_futex, word, FUTEX_WAIT, 0, NULL, NULL, 0);
  } else if (is(m, "mutex")) {
    if (pthread_mutex_lock(e->shm) != 0) fail("%s: pthread_mutex_lock", who);
    pthread_mutex_unlock(e->shm);
  } else if (is(m, "cond")) {
    struct condbox* b = e->shm;
    pthread_mutex_lock(&b->m);
    while (!b->flag) pthread_cond_wait(&b->c, &b->m);
    pthread_mutex_unlock(&b->m);
  } else if (is(m, "sem")) {
    while (sem_wait(e->shm) != 0)
      if (errno != EINTR) fail_errno("%s: sem_wait", who);
  } else if (starts(m, "flock")) {
    while (flock(e->fd, LOCK_EX) != 0)
      if (errno != EINTR) fail_errno("%s: flock", who);
    flock(e->fd, LOCK_UN);
  } else if (starts(m, "fcntl")) {
    posix_lock(e->fd, F_SETLKW, F_WRLCK, who);
    posix_lock(e->fd, F_SETLK, F_UNLCK, who);
  } else if (starts(m, "ofd")) {
    posix_lock(e->fd, F_OFD_SETLKW, F_WRLCK, who);
    posix_lock(e->fd, F_OFD_SETLK, F_UNLCK, who);
  } else if (is(m, "wait4")) {
    int status;
    while (wait4(e->child, &status, 0, NULL) < 0)
      if (errno != EINTR) fail_errno("%s: wait4", who);
    check_child(who, e->child, status);
  } else if (is(m, "waitid") || is(m, "pidfd")) {
    if (is(m, "pidfd")) {
      struct pollfd p = {.fd = e->fd, .events = POLLIN};
      while (poll(&p, 1, -1) <= 0) {
      }
    }
    siginfo_t info;
    memset(&info, 0, sizeof info);
    while (waitid(P_PID, (id_t)e->child, &info, WEXITED) != 0)
      if (errno != EINTR) fail_errno("%s: waitid", who);
    if (info.si_code != CLD_EXITED || info.si_status != 0)
      fail("%s: child %d failed (code %d status %d)", who, (int)e->child, info.si_code,
           info.si_status);
  } else if (is(m, "sigwaitinfo")) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, edge_signal());
    while (sigwaitinfo(&set, NULL) < 0)
      if (errno != EINTR) fail_errno("%s: sigwaitinfo", who);
  } else if (is(m, "sigsuspend")) {
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, NULL, &mask);
    sigdelset(&mask, edge_signal());
    sig_atomic_t seen = signals_seen;
    while (signals_seen == seen) sigsuspend(&mask);
  } else if (is(m, "signalfd")) {
    struct signalfd_siginfo info;
    while (read(e->fd, &info, sizeof info) != sizeof info)
      if (errno != EINTR) fail_errno("%s: read signalfd", who);
  } else if (is(m, "inotify")) {
    char buf[4096] __attribute__((aligned(8)));
    while (read(e->fd, buf, sizeof buf) <= 0)
      if (errno != EINTR) fail_errno("%s: read inotify", who);
  } else if (is(m, "eventfd")) {
    uint64_t v;
    while (read(e->fd, &v, sizeof v) != sizeof v)
      if (errno != EINTR) fail_errno("%s: read eventfd", who);
  }
}

static void signal_output(struct node* n, struct edge* e) {
  const char* m = e->mech;
  const char* who = n->name;
  if (is_server_edge(e)) {
    // The requester: its request, then its answer (the server answers the queued clients
    // from its loop).
    if (!is_server(n)) {
      if (send(e->fd, "W", 1, MSG_NOSIGNAL) != 1) fail_errno("%s: request", who);
      recv_answer(n, e);
    }
  } else if (is(m, "readt")) {
    // bash's `read -t` can drop a byte it read as its timeout expires: send spares, which
    // only that reader's FIFO holds.
    write_all(e->fd, "xxxxxxxxxxxxxxxx", 16, who);
  } else if (is_fifo_wait(m)) {
    write_all(e->fd, "x", 1, who);
  } else if (is(m, "pipefull")) {
    static char sink[BIG_WRITE];
    size_t got = 0;
    while (got < sizeof sink) {
      ssize_t r = read(e->fd, sink, sizeof sink - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) fail_errno("%s: drain %s", who, e->chan);
      got += (size_t)r;
    }
  } else if (is(m, "unix") || is(m, "tcp")) {
    if (send(e->fd, "x", 1, MSG_NOSIGNAL) != 1) fail_errno("%s: send", who);
  } else if (is(m, "accept")) {
    close(connect_tcp(e->chan, who));
  } else if (is(m, "eof-close") || is(m, "flock-close") || is(m, "fcntl-close") ||
             is(m, "ofd-close")) {
    close(e->fd);
  } else if (is(m, "flock-unlock")) {
    flock(e->fd, LOCK_UN);
  } else if (is(m, "fcntl-unlock")) {
    posix_lock(e->fd, F_SETLK, F_UNLCK, who);
  } else if (is(m, "ofd-unlock")) {
    posix_lock(e->fd, F_OFD_SETLK, F_UNLCK, who);
  } else if (is(m, "futex")) {
    atomic_store((atomic_uint*)e->shm, 1);
    syscall(SYS_futex, e->shm, FUTEX_WAKE, 1, NULL, NULL, 0);
  } else if (is(m, "mutex")) {
    pthread_mutex_unlock(e->shm);
  } else if (is(m, "cond")) {
    struct condbox* b = e->shm;
    pthread_mutex_lock(&b->m);
    b->flag = 1;
    pthread_cond_signal(&b->c);
    pthread_mutex_unlock(&b->m);
  } else if (is(m, "sem")) {
    sem_post(e->shm);
  } else if (is(m, "sigwaitinfo") || is(m, "sigsuspend") || is(m, "signalfd")) {
    char path[128], text[64];
    snprintf(path, sizeof path, "%s.tid", e->chan);
    read_file(path, text, sizeof text);
    int pid = 0, tid = 0;
    if (sscanf(text, "%d %d", &pid, &tid) != 2) fail("%s: bad %s", who, path);
    if (syscall(SYS_tgkill, pid, tid, edge_signal()) != 0) fail_errno("%s: tgkill", who);
  } else if (is(m, "inotify")) {
    char path[160];
    snprintf(path, sizeof path, "%s.dir/%s", e->chan, who);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) fail_errno("%s: create %s", who, path);
    close(fd);
  } else if (is(m, "eventfd")) {
    uint64_t one = 1;
    if (write(e->fd, &one, sizeof one) != sizeof one) fail_errno("%s: write eventfd", who);
  }
  // eof-exit, flock-exit, fcntl-exit, ofd-exit, wait4, waitid, pidfd: the process's exit.
}

static void stage(struct node* n) {
  const char* k = n->stage;
  if (is(k, "none")) return;
  if (is(k, "sleep") || is(k, "lock")) {
    struct timespec t = {STAGE_NS / 1000000000LL, STAGE_NS % 1000000000LL};
    while (nanosleep(&t, &t) != 0) {
    }
  } else if (is(k, "busy")) {
    long long end = now_ns() + STAGE_NS;
    volatile unsigned long x = 0;
    while (now_ns() < end)
      for (int i = 0; i < 1000; ++i) x += (unsigned long)i * 2654435761u;
  } else if (is(k, "disk")) {
    char path[64];
    snprintf(path, sizeof path, "disk.%s", n->name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) fail_errno("open %s", path);
    char block[4096];
    memset(block, 'd', sizeof block);
    long long end = now_ns() + STAGE_NS;
    for (off_t at = 0; now_ns() < end; at = (at + 4096) % (1 << 20)) {
      if (pwrite(fd, block, sizeof block, at) != sizeof block) fail_errno("pwrite %s", path);
      if (fdatasync(fd) != 0) fail_errno("fdatasync %s", path);
    }
    close(fd);
  } else if (is(k, "timer")) {
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    struct itimerval it = {.it_value = {STAGE_NS / 1000000000LL, (STAGE_NS % 1000000000LL) / 1000}};
    if (setitimer(ITIMER_REAL, &it, NULL) != 0) fail_errno("setitimer");
    while (!alarm_rang) pause();
  } else if (is(k, "timerfd")) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec it = {.it_value = {STAGE_NS / 1000000000LL, STAGE_NS % 1000000000LL}};
    if (fd < 0 || timerfd_settime(fd, 0, &it, NULL) != 0) fail_errno("timerfd");
    uint64_t v;
    while (read(fd, &v, sizeof v) != sizeof v)
      if (errno != EINTR) fail_errno("read timerfd");
    close(fd);
  } else {
    fail("%s: unknown stage %s", n->name, k);
  }
}

static void* run_node(void* arg) {
  struct node* n = arg;
  if (prctl(PR_SET_NAME, n->name, 0, 0, 0) != 0) fail_errno("prctl(PR_SET_NAME)");
  setup_first(n);
  setup_connect(n);
  setup_accept(n);
  barrier(n);
  long long t_barrier = now_ns();
  for (int i = 0; i < n->n_in; ++i)
    if (is_server_edge(&n->in[i]) && !is_server(n)) send_request(n, &n->in[i]);
  for (int i = 0; i < n->n_in; ++i) wait_input(n, &n->in[i]);
  long long t_inputs = now_ns();
  if (!n->looped) stage(n);  // (the server's loop ran it, and kept its times)
  long long t_stage = now_ns();
  if (n->looped) t_inputs = n->t_inputs, t_stage = n->t_stage;
  for (int i = 0; i < n->n_out; ++i) signal_output(n, &n->out[i]);
  char path[64], text[96];
  snprintf(path, sizeof path, "times/%s", n->name);
  snprintf(text, sizeof text, "%lld %lld %lld\n", t_barrier, t_inputs, t_stage);
  write_file(path, text);
  return NULL;
}

static void parse_spec(const char* file) {
  FILE* f = fopen(file, "re");
  if (!f) fail_errno("open %s", file);
  char line[700];
  int at = 0;
  while (fgets(line, sizeof line, f)) {
    ++at;
    char word[16], a[64], b[64], c[256], d[256], x[16], y[16];
    int k = sscanf(line, "%15s %63s %63s %255s %255s %15s %15s", word, a, b, c, d, x, y);
    if (k <= 0 || word[0] == '#') continue;
    struct node* n = n_nodes ? &nodes[n_nodes - 1] : NULL;
    if (is(word, "total") && k == 2) {
      total_nodes = atoi(a);
    } else if (is(word, "eventfd") && k == 2 && n_eventfds < MAX_EVENTFDS) {
      snprintf(eventfds[n_eventfds].chan, sizeof eventfds[0].chan, "%s", a);
      eventfds[n_eventfds].fd = eventfd(0, EFD_CLOEXEC);
      if (eventfds[n_eventfds++].fd < 0) fail_errno("eventfd");
    } else if (is(word, "node") && k == 2 && n_nodes < MAX_NODES) {
      n = &nodes[n_nodes++];
      snprintf(n->name, sizeof n->name, "%.15s", a);
      snprintf(n->stage, sizeof n->stage, "none");
    } else if (n && is(word, "stage") && k == 2) {
      snprintf(n->stage, sizeof n->stage, "%.15s", a);
    } else if (n && (is(word, "in") || is(word, "out")) && k >= 3) {
      int* count = is(word, "in") ? &n->n_in : &n->n_out;
      if (*count >= MAX_EDGES) fail("%s:%d: too many edges", file, at);
      struct edge* e = is(word, "in") ? &n->in[(*count)++] : &n->out[(*count)++];
      snprintf(e->mech, sizeof e->mech, "%.23s", a);
      snprintf(e->chan, sizeof e->chan, "%s", b);
      if (starts(a, "server-")) {
        if (k != 7) fail("%s:%d: a server edge needs LISTEN TRANSPORT ACCEPT DELAY", file, at);
        snprintf(e->listen, sizeof e->listen, "%.63s", c);
        snprintf(e->transport, sizeof e->transport, "%.7s", d);
        snprintf(e->accept, sizeof e->accept, "%.7s", x);
        e->delay_ms = atoi(y);
      } else if (k >= 5) {
        snprintf(e->exe, sizeof e->exe, "%s", c);
        snprintf(e->spec, sizeof e->spec, "%s", d);
      }
      e->fd = e->fd2 = -1;
    } else {
      fail("%s:%d: cannot read '%.*s'", file, at, (int)strcspn(line, "\n"), line);
    }
  }
  fclose(f);
  if (n_nodes == 0 || total_nodes <= 0) fail("%s: no node or no total", file);
}

// Noise beside the topology: never on its truth path, running until run.sh kills it.
static int noise(const char* kind) {
  if (is(kind, "spin") || is(kind, "hog")) {
    volatile unsigned long x = 0;
    for (;;) x += 1;
  } else if (is(kind, "ping") || is(kind, "pong")) {
    int a = open_fifo("noise.a", O_RDWR), b = open_fifo("noise.b", O_RDWR);
    int me_out = is(kind, "ping") ? a : b, me_in = is(kind, "ping") ? b : a;
    if (is(kind, "ping")) write_all(me_out, "p", 1, kind);
    for (;;) {
      char c;
      if (read(me_in, &c, 1) != 1) return 1;
      if (is(kind, "ping")) nap_ms(1);
      write_all(me_out, "p", 1, kind);
    }
  } else if (is(kind, "tick")) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    struct itimerspec it = {.it_interval = {0, 50000000}, .it_value = {0, 50000000}};
    timerfd_settime(fd, 0, &it, NULL);
    for (;;) {
      uint64_t v;
      if (read(fd, &v, sizeof v) != sizeof v) return 1;
    }
  } else if (is(kind, "watchdog")) {
    // run.sh's time bound: after 6 s, every node still running is killed, and TIMEOUT says so.
    struct timespec t = {6, 0};
    while (nanosleep(&t, &t) != 0) {
    }
    write_file("TIMEOUT", "timeout\n");
    DIR* d = opendir("pids");
    struct dirent* de;
    while (d && (de = readdir(d))) {
      char path[300], text[32];
      if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp")) continue;
      snprintf(path, sizeof path, "pids/%s", de->d_name);
      read_file(path, text, sizeof text);
      if (atoi(text) > 0) kill(atoi(text), SIGKILL);
    }
    return 0;
  } else if (is(kind, "disk")) {
    int fd = open("noise.disk", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) fail_errno("open noise.disk");
    char block[65536];
    memset(block, 'n', sizeof block);
    for (off_t at = 0;; at = (at + (off_t)sizeof block) % (16 << 20)) {
      if (pwrite(fd, block, sizeof block, at) < 0) return 1;
      fdatasync(fd);
    }
  }
  fail("unknown noise %s", kind);
  return 1;
}

int main(int argc, char** argv) {
  const char* base = strrchr(argv[0], '/');
  snprintf(program, sizeof program, "%s", base ? base + 1 : argv[0]);
  if (argc == 3 && is(argv[1], "--noise")) return noise(argv[2]);
  if (argc != 2) fail("usage: %s SPEC_FILE | --noise KIND", program);
  // Every thread blocks the edge signal (it is taken by sigwaitinfo, sigsuspend or a
  // signalfd in the thread it is sent to) and SIGALRM (only the timer stage's thread takes it).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, edge_signal());
  sigaddset(&set, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(edge_signal(), &sa, NULL);
  char pidfile[64], text[32];
  parse_spec(argv[1]);
  snprintf(pidfile, sizeof pidfile, "pids/%s", nodes[0].name);
  snprintf(text, sizeof text, "%d\n", (int)getpid());
  write_file(pidfile, text);
  for (int i = 1; i < n_nodes; ++i)
    if (pthread_create(&nodes[i].thread, NULL, run_node, &nodes[i]) != 0) fail("pthread_create");
  run_node(&nodes[0]);
  for (int i = 1; i < n_nodes; ++i) pthread_join(nodes[i].thread, NULL);
  return 0;
}
