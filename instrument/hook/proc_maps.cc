#include "instrument/hook/proc_maps.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace cw::hook {
namespace {

// The whole file in an mmap'd buffer that grows by doubling; null on failure.
char* read_whole(const char* path, size_t* length, size_t* capacity) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  size_t cap = 1 << 16, used = 0;
  char* buffer = static_cast<char*>(
      mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  while (buffer != MAP_FAILED) {
    if (used == cap) {
      void* bigger = mremap(buffer, cap, cap * 2, MREMAP_MAYMOVE);
      if (bigger == MAP_FAILED) break;
      buffer = static_cast<char*>(bigger);
      cap *= 2;
    }
    ssize_t got = read(fd, buffer + used, cap - used);
    if (got < 0) break;
    if (got == 0) {
      close(fd);
      *length = used;
      *capacity = cap;
      return buffer;
    }
    used += static_cast<size_t>(got);
  }
  if (buffer != MAP_FAILED) munmap(buffer, cap);
  close(fd);
  return nullptr;
}

uint64_t parse_hex(const char*& p, const char* end) {
  uint64_t value = 0;
  for (; p < end; ++p) {
    char c = *p;
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) break;
    value = value * 16 + static_cast<uint64_t>(digit);
  }
  return value;
}

bool ends_with(const char* begin, const char* end, const char* suffix) {
  size_t n = strlen(suffix);
  return static_cast<size_t>(end - begin) >= n && memcmp(end - n, suffix, n) == 0;
}

}  // namespace

ProcMaps::~ProcMaps() {
  if (mappings_) munmap(mappings_, bytes_);
}

bool ProcMaps::load() {
  size_t length = 0, capacity = 0;
  char* text = read_whole("/proc/self/maps", &length, &capacity);
  if (!text) return false;
  size_t lines = 0;
  for (size_t i = 0; i < length; ++i) lines += text[i] == '\n';
  if (mappings_) munmap(mappings_, bytes_);
  bytes_ = (lines + 1) * sizeof(Mapping);
  void* memory = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    mappings_ = nullptr;
    munmap(text, capacity);
    return false;
  }
  mappings_ = static_cast<Mapping*>(memory);
  count_ = 0;
  const char* p = text;
  const char* end = text + length;
  while (p < end) {
    const char* line_end = static_cast<const char*>(memchr(p, '\n', end - p));
    if (!line_end) line_end = end;
    Mapping m{};
    m.start = parse_hex(p, line_end);
    if (p < line_end && *p == '-') ++p;
    m.end = parse_hex(p, line_end);
    if (p + 4 < line_end) {
      m.prot = (p[1] == 'r' ? PROT_READ : 0) | (p[2] == 'w' ? PROT_WRITE : 0) |
               (p[3] == 'x' ? PROT_EXEC : 0);
      m.heap = ends_with(p, line_end, "[heap]");
      m.stack = ends_with(p, line_end, "[stack]");
      if (m.end > m.start) mappings_[count_++] = m;
    }
    p = line_end + 1;
  }
  munmap(text, capacity);
  return true;
}

const Mapping* ProcMaps::find(uint64_t address) const {
  size_t low = 0, high = count_;
  while (low < high) {
    size_t mid = (low + high) / 2;
    if (mappings_[mid].end <= address)
      low = mid + 1;
    else
      high = mid;
  }
  return low < count_ && mappings_[low].start <= address ? &mappings_[low] : nullptr;
}

}  // namespace cw::hook
