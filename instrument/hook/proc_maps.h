// This process's memory mappings from /proc/self/maps: the protection to restore after
// patching a page, the readable bytes after a function, the free gaps to put trampolines
// in. Memory comes from mmap (no malloc, no libstdc++), so the preload library can use it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cw::hook {

struct Mapping {
  uint64_t start, end;
  int prot;  // PROT_READ | PROT_WRITE | PROT_EXEC
  bool heap, stack;
};

class ProcMaps {
 public:
  ProcMaps() = default;
  ~ProcMaps();
  ProcMaps(const ProcMaps&) = delete;
  ProcMaps& operator=(const ProcMaps&) = delete;

  // Reads /proc/self/maps; false if it cannot.
  bool load();
  size_t size() const { return count_; }
  const Mapping& operator[](size_t i) const { return mappings_[i]; }
  // The mapping holding `address`, or null.
  const Mapping* find(uint64_t address) const;

 private:
  Mapping* mappings_ = nullptr;
  size_t count_ = 0;
  size_t bytes_ = 0;
};

}  // namespace cw::hook
