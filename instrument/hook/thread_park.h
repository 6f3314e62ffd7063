// Stopping every other thread of this process, so code can be patched with no thread
// between two of its bytes: each thread gets a dedicated real-time signal and waits in
// the handler, with every signal blocked, until released. Its saved context (ucontext)
// can be changed meanwhile, e.g. to move its instruction pointer. Only async-signal-safe
// raw system calls run between stop_all() and release(): a stopped thread may hold any
// lock, malloc's included.
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <cstdint>

namespace cw::hook {

struct ParkedThread {
  int tid;
  ucontext_t* context;  // the thread's saved registers, restored when it is released
};

// How long stop_all() waits for a thread to answer (default 1000 ms).
void set_park_timeout_ms(unsigned milliseconds);
unsigned park_timeout_ms();

class ThreadPark {
 public:
  ThreadPark() = default;
  ~ThreadPark() { release(); }
  ThreadPark(const ThreadPark&) = delete;
  ThreadPark& operator=(const ThreadPark&) = delete;

  // Stops every other thread: signals each thread of /proc/self/task, waits until each has
  // answered from the handler, and enumerates again until no new thread appears (stopped
  // threads cannot make new ones). Returns false with `reason` set, every thread already
  // released, when a thread blocks the signal or does not answer in time (naming its tid),
  // or the signal cannot be set up. The calling thread blocks every signal until release().
  // One park at a time per process (the caller locks).
  bool stop_all(char* reason, size_t reason_size);
  size_t size() const;
  ParkedThread operator[](size_t i) const;
  // Lets every stopped thread return from the handler (with its possibly changed context).
  void release();

 private:
  bool stopped_ = false;
  uint64_t saved_mask_ = 0;  // this thread's signal mask, every signal blocked meanwhile
};

}  // namespace cw::hook
