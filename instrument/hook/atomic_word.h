// Acquire loads and release stores on plain fields: the log's counters live in a file
// mapping shared between processes, so they are plain integers accessed atomically rather
// than std::atomic members.
#pragma once

namespace cw::hook {

template <typename T>
T load_acquire(const T* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

template <typename T>
void store_release(T* p, T value) {
  __atomic_store_n(p, value, __ATOMIC_RELEASE);
}

}  // namespace cw::hook
