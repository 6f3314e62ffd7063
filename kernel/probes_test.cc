// The recorder against the real kernel: each test forks a workload, records it and checks
// the records. They need root (CI runs them as root) and fail, never skip, without it.
#include "kernel/probes.h"

#include <bpf/libbpf.h>
#include <doctest/doctest.h>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "kernel/records.h"
#include "kernel/syscalls.h"
#include "kernel/test_records.h"

using namespace cw::kernel;
using namespace cw::kernel::testing;

namespace {

ProbeOptions options_recording(pid_t pid) {
  ProbeOptions options;
  options.pids = {static_cast<uint32_t>(pid)};
  options.ring_buffer_bytes = 8u << 20;
  for (const auto& info : recorded_syscalls())
    options.syscall_classes.emplace_back(info.nr, info.sys_class);
  return options;
}

void write_all(int fd, size_t bytes) {
  std::vector<char> data(bytes, 'x');
  if (write(fd, data.data(), bytes) != static_cast<ssize_t>(bytes)) _exit(10);
}

void read_exactly(int fd, size_t bytes) {
  std::vector<char> data(bytes);
  if (read(fd, data.data(), bytes) != static_cast<ssize_t>(bytes)) _exit(11);
}

struct Recording {
  pid_t child = 0;
  std::vector<Record> records;
};

// Forks `workload` held at a gate until the probes are attached, records it (and the
// processes it forks) until it exits with status 0, and returns the records.
Recording record_child(const std::function<void()>& workload,
                       const std::function<void(pid_t)>& while_running = {}) {
  std::string missing = missing_privileges();
  REQUIRE_MESSAGE(missing.empty(), missing);
  int gate[2];
  REQUIRE(pipe(gate) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(gate[1]);
    char go;
    if (read(gate[0], &go, 1) != 1) _exit(12);
    close(gate[0]);
    workload();
    _exit(0);
  }
  close(gate[0]);
  Recording recording{child, {}};
  try {
    Probes probes(options_recording(child));
    REQUIRE(write(gate[1], "g", 1) == 1);
    close(gate[1]);
    if (while_running) while_running(child);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    recording.records = drain_all(probes);
  } catch (...) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    throw;
  }
  return recording;
}

struct Range {
  uint64_t object, offset, len;
  bool operator==(const Range&) const = default;
};

// The XFER records of one kind sent (or received) by thread `tid` in order.
std::vector<Range> transfers(const std::vector<Record>& records, uint32_t kind, bool sends,
                             uint32_t tid) {
  std::vector<Range> ranges;
  for (const auto& xfer : of_type<cw_rec_xfer>(records, CW_REC_XFER))
    if (xfer.obj_kind == kind && xfer.is_send == sends && xfer.h.tid == tid)
      ranges.push_back({xfer.object, xfer.offset, xfer.len});
  return ranges;
}

// The thread that forked the stream's other end: the only FORK record of a new process.
uint32_t forked_child(const std::vector<Record>& records) {
  auto forks = of_type<cw_rec_fork>(records, CW_REC_FORK);
  REQUIRE(forks.size() == 1);
  CHECK(forks[0].is_thread == 0);
  return forks[0].child_tid;
}

// Two processes: the parent writes 100 + 50 then 200 bytes, the child reads 150 then
// 120 + 80. `writer_fd` and `reader_fd` are the two ends.
void stream_workload(int writer_fd, int reader_fd) {
  int turn[2];
  if (pipe(turn) != 0) _exit(13);
  pid_t reader = fork();
  if (reader == 0) {
    char go;
    if (read(turn[0], &go, 1) != 1) _exit(14);
    read_exactly(reader_fd, 150);
    if (read(turn[0], &go, 1) != 1) _exit(14);
    read_exactly(reader_fd, 120);
    read_exactly(reader_fd, 80);
    _exit(0);
  }
  write_all(writer_fd, 100);
  write_all(writer_fd, 50);
  if (write(turn[1], "1", 1) != 1) _exit(15);
  usleep(50 * 1000);  // the 150-byte read happens before the next write
  write_all(writer_fd, 200);
  if (write(turn[1], "2", 1) != 1) _exit(15);
  int status = 0;
  if (waitpid(reader, &status, 0) != reader || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    _exit(16);
}

void check_matching_ranges(const std::vector<Range>& sent, const std::vector<Range>& received) {
  REQUIRE(sent.size() == 3);
  REQUIRE(received.size() == 3);
  uint64_t object = sent[0].object;
  CHECK(object != 0);
  CHECK(sent == std::vector<Range>{{object, 0, 100}, {object, 100, 50}, {object, 150, 200}});
  CHECK(received == std::vector<Range>{{object, 0, 150}, {object, 150, 120}, {object, 270, 80}});
}

}  // namespace

TEST_CASE("a unix socket's sends and receives cover the same byte ranges of one object") {
  Recording recording = record_child([] {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) _exit(20);
    stream_workload(pair[0], pair[1]);
  });
  uint32_t reader = forked_child(recording.records);
  auto sent = transfers(recording.records, CW_OBJ_UNIX, true, recording.child);
  auto received = transfers(recording.records, CW_OBJ_UNIX, false, reader);
  check_matching_ranges(sent, received);
  // socketpair's peer credentials are those of the process that created the pair.
  for (const auto& xfer : of_type<cw_rec_xfer>(recording.records, CW_REC_XFER))
    if (xfer.obj_kind == CW_OBJ_UNIX) CHECK(xfer.peer_pid == recording.child);
}

TEST_CASE("a pipe's writes and reads cover the same byte ranges of one object") {
  Recording recording = record_child([] {
    int ends[2];
    if (pipe(ends) != 0) _exit(20);
    stream_workload(ends[1], ends[0]);
  });
  uint32_t reader = forked_child(recording.records);
  // The test's own gate pipes are pipes too; the stream is the one with three sends.
  auto sent = transfers(recording.records, CW_OBJ_PIPE, true, recording.child);
  auto received = transfers(recording.records, CW_OBJ_PIPE, false, reader);
  std::erase_if(sent, [](const Range& r) { return r.len == 1; });
  std::erase_if(received, [](const Range& r) { return r.len == 1; });
  check_matching_ranges(sent, received);
}

namespace {
uint32_t futex_word = 0;
}

TEST_CASE("a futex wake names the address and wakes the waiting thread") {
  Recording recording = record_child([] {
    std::thread waiter([] {
      while (__atomic_load_n(&futex_word, __ATOMIC_ACQUIRE) == 0)
        syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
    });
    usleep(100 * 1000);
    __atomic_store_n(&futex_word, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    waiter.join();
  });
  uint32_t waiter = 0, waker = 0;
  for (const auto& enter : of_type<cw_rec_sys_enter>(recording.records, CW_REC_SYS_ENTER)) {
    if (enter.nr != SYS_futex || enter.resource != reinterpret_cast<uint64_t>(&futex_word))
      continue;
    CHECK(enter.sys_class == CW_SYS_FUTEX);
    if (enter.op == FUTEX_WAIT) {
      waiter = enter.h.tid;
      CHECK(enter.timeout_ns == -1);
    }
    if (enter.op == FUTEX_WAKE) {
      waker = enter.h.tid;
      CHECK(enter.value == 1);
    }
  }
  REQUIRE(waiter != 0);
  REQUIRE(waker == static_cast<uint32_t>(recording.child));
  bool woken = false;
  for (const auto& wake : of_type<cw_rec_wake>(recording.records, CW_REC_WAKING))
    woken |= wake.h.tid == waker && wake.target_tid == waiter && wake.in_irq == 0;
  CHECK(woken);
}

TEST_CASE("the wakeups that end a sleep come from interrupt context") {
  Recording recording = record_child([] {
    for (int i = 0; i < 3; ++i) usleep(20 * 1000);
  });
  int timer_wakes = 0;
  for (const auto& wake : of_type<cw_rec_wake>(recording.records, CW_REC_WAKING)) {
    if (wake.target_tid != static_cast<uint32_t>(recording.child)) continue;
    if (wake.h.pid == static_cast<uint32_t>(getpid())) continue;  // the test opening the gate
    ++timer_wakes;
    CHECK(wake.in_irq == 1);
  }
  CHECK(timer_wakes == 3);
}

TEST_CASE("fork, exit and wait4 are recorded with the child's pid and exit status") {
  Recording recording = record_child([] {
    pid_t grandchild = fork();
    if (grandchild == 0) _exit(3);
    int status = 0;
    if (wait4(grandchild, &status, 0, nullptr) != grandchild) _exit(21);
  });
  uint32_t grandchild = forked_child(recording.records);
  auto forks = of_type<cw_rec_fork>(recording.records, CW_REC_FORK);
  CHECK(forks[0].h.pid == static_cast<uint32_t>(recording.child));
  CHECK(forks[0].child_pid == grandchild);
  bool exited = false;
  for (const auto& exit : of_type<cw_rec_exit>(recording.records, CW_REC_EXIT))
    if (exit.h.tid == grandchild) exited = exit.code == 3 << 8;
  CHECK(exited);
  std::vector<uint64_t> wait_seqs;
  for (const auto& enter : of_type<cw_rec_sys_enter>(recording.records, CW_REC_SYS_ENTER))
    if (enter.nr == SYS_wait4) {
      CHECK(enter.resource == grandchild);
      wait_seqs.push_back(enter.seq);
    }
  REQUIRE(wait_seqs.size() == 1);
  bool returned = false;
  for (const auto& exit : of_type<cw_rec_sys_exit>(recording.records, CW_REC_SYS_EXIT))
    if (exit.seq == wait_seqs[0]) returned = exit.nr == SYS_wait4 && exit.ret == grandchild;
  CHECK(returned);
}

TEST_CASE("a timerfd armed and read gives an arm and a fire of the same timer") {
  Recording recording = record_child([] {
    int timer = timerfd_create(CLOCK_MONOTONIC, 0);
    itimerspec spec{};
    spec.it_value.tv_nsec = 20 * 1000 * 1000;
    if (timerfd_settime(timer, 0, &spec, nullptr) != 0) _exit(30);
    uint64_t expirations = 0;
    if (read(timer, &expirations, sizeof(expirations)) != 8) _exit(31);
  });
  auto timers = of_type<cw_rec_timer>(recording.records, CW_REC_TIMER);
  REQUIRE(timers.size() == 2);
  CHECK(timers[0].op == CW_TIMER_ARM);
  CHECK(timers[0].timer != 0);
  CHECK(timers[0].expires_ns > timers[0].h.ts);
  CHECK(timers[0].expires_ns <= timers[0].h.ts + 20 * 1000 * 1000);
  CHECK(timers[0].interval_ns == 0);
  CHECK(timers[1].op == CW_TIMER_FIRE);
  CHECK(timers[1].timer == timers[0].timer);
  CHECK(timers[1].h.tid == static_cast<uint32_t>(recording.child));
  CHECK(timers[1].h.ts >= timers[0].expires_ns);
}

TEST_CASE("a read that blocks gives the user stack of that read") {
  constexpr int kBlockingFd = 100;
  int late[2];
  REQUIRE(pipe(late) == 0);
  Recording recording = record_child(
      [&] {
        close(late[1]);
        if (dup2(late[0], kBlockingFd) != kBlockingFd) _exit(40);
        read_exactly(kBlockingFd, 1);
      },
      [&](pid_t) {
        usleep(100 * 1000);
        REQUIRE(write(late[1], "x", 1) == 1);
      });
  close(late[0]);
  close(late[1]);
  uint64_t read_seq = 0;
  for (const auto& enter : of_type<cw_rec_sys_enter>(recording.records, CW_REC_SYS_ENTER))
    if (enter.nr == SYS_read && enter.fd == kBlockingFd) {
      CHECK(enter.obj_kind == CW_OBJ_PIPE);
      read_seq = enter.seq;
    }
  REQUIRE(read_seq != 0);
  bool found = false;
  for (const auto& record : recording.records) {
    cw_rec_stack stack{};
    std::memcpy(&stack, record.data(), std::min(record.size(), sizeof(stack)));
    if (stack.h.type != CW_REC_STACK || stack.seq != read_seq) continue;
    found = true;
    CHECK(stack.h.tid == static_cast<uint32_t>(recording.child));
    CHECK(stack.n > 0);
    CHECK(stack.h.size == offsetof(cw_rec_stack, ips) + stack.n * sizeof(uint64_t));
    CHECK(record.size() >= stack.h.size);
    CHECK(stack.ips[0] != 0);
  }
  CHECK(found);
}

TEST_CASE("recording system-wide leaves out the recorder and counts losses per possible CPU") {
  std::string missing = missing_privileges();
  REQUIRE_MESSAGE(missing.empty(), missing);
  ProbeOptions options;
  options.exclude_pid = static_cast<uint32_t>(getpid());
  options.ring_buffer_bytes = 4u << 20;
  for (const auto& info : recorded_syscalls())
    options.syscall_classes.emplace_back(info.nr, info.sys_class);
  Probes probes(options);
  pid_t sleeper = fork();  // another process, so that something is recorded on a quiet machine
  REQUIRE(sleeper >= 0);
  if (sleeper == 0) {
    usleep(10 * 1000);
    _exit(0);
  }
  REQUIRE(waitpid(sleeper, nullptr, 0) == sleeper);
  std::vector<Record> records;
  probes.poll(100, [&](const void* data, size_t size) {
    auto* bytes = static_cast<const uint8_t*>(data);
    records.emplace_back(bytes, bytes + size);
  });
  CHECK(!records.empty());
  for (const auto& record : records) {
    cw_rec_header header;
    std::memcpy(&header, record.data(), sizeof(header));
    CHECK(header.size == record.size());
    CHECK_MESSAGE(header.pid != static_cast<uint32_t>(getpid()), "record type ", header.type);
  }
  CHECK(probes.lost_per_cpu().size() == static_cast<size_t>(libbpf_num_possible_cpus()));
}
