// Large arrays made in fresh memory on every CPU. glibc maps each large allocation from the
// kernel, and the first write to each of its pages faults, and the kernel zeroes the page:
// about 0.4 ms a MiB, on the one CPU that resizes a vector (100 ms for the 236 MB of a
// 19 M-event trace's graph edges). Asked to (MADV_POPULATE_WRITE, Linux 5.14), the kernel
// fills the pages in up front, and each CPU can fill in a part: resize() is then left
// with its own writes (11 ms of those 100).
#pragma once

#include <cstddef>
#include <vector>

namespace cw {

// From this many bytes the pages are filled in on every CPU first; below, resize() alone.
inline constexpr size_t kPopulateFrom = size_t{16} << 20;

// Has the kernel fill in the pages of [begin, begin + bytes) (whole pages inside it), in
// parts on up to `workers` threads. Returns false when it cannot (an older kernel, a
// range it refuses): the pages then fault as they are first written, as before. Nothing
// the range holds changes.
bool populate(void* begin, size_t bytes, unsigned workers);
bool populate(void* begin, size_t bytes);  // on worker_count() threads

// v.resize(n), with the pages of the elements it adds filled in on every CPU first when
// they are many.
template <class T>
void resize_populated(std::vector<T>& v, size_t n) {
  if (n > v.size() && (n - v.size()) * sizeof(T) >= kPopulateFrom) {
    if (v.capacity() < n) v.reserve(n);
    populate(v.data() + v.size(), (n - v.size()) * sizeof(T));
  }
  v.resize(n);
}

}  // namespace cw
